#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The include rule (CONTRIBUTING.md, "Layout"): a component includes only
# components below it, so dependencies point downward and the channel knows
# nothing above it. Fails, naming file and line, on an include that points
# upward (or sideways between components of the same layer). CI runs it.
#
#   layer 0  channel/                    the standard library only
#   layer 0  profiler/ (not report/)     the standard library (and mimalloc)
#   layer 1  asio/                       channel
#   layer 1  async/                      channel
#   layer 1  baseline/                   channel (its futex wrapper)
#   layer 2  profiler/report/            channel, profiler, baseline, asio
#   layer 3  benchmarks/, examples/      all of the above (examples: the report's cli.h)
#   layer 3  proxy/                      channel, async, asio, profiler, baseline
#   layer 4  tests/                      everything
set -euo pipefail
cd "$(dirname "$0")/.."

# The component an include names, from its path.
component_of_include() {
  case "$1" in
    leanchan/asio.h | leanchan/asio/*) echo asio ;;
    leanchan/async/*) echo async ;;
    leanchan/profiler/*) echo profiler ;;
    leanchan/*) echo channel ;;
    tokio_style/*) echo baseline ;;
    cli.h) echo report ;;
    *) echo other ;;
  esac
}

# What each component may include (besides itself and third-party headers).
allowed_for() {
  case "$1" in
    channel) echo "channel" ;;
    profiler) echo "profiler" ;;
    asio) echo "asio channel" ;;
    async) echo "async channel" ;;
    baseline) echo "baseline channel" ;;
    report) echo "report channel profiler baseline asio" ;;
    benchmarks | examples) echo "channel profiler baseline asio async report" ;;
    proxy) echo "proxy channel profiler baseline asio async" ;;
    tests) echo "channel profiler baseline asio async report" ;;
  esac
}

component_of_file() {
  case "$1" in
    channel/*) echo channel ;;
    profiler/report/*) echo report ;;
    profiler/*) echo profiler ;;
    asio/*) echo asio ;;
    async/*) echo async ;;
    baseline/*) echo baseline ;;
    benchmarks/*) echo benchmarks ;;
    examples/*) echo examples ;;
    proxy/*) echo proxy ;;
    tests/*) echo tests ;;
    *) echo none ;;
  esac
}

violations=0
while IFS= read -r file; do
  owner=$(component_of_file "$file")
  [ "$owner" = none ] && continue
  allowed=" $(allowed_for "$owner") "
  while IFS=: read -r line text; do
    target=$(sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1/' <<<"$text")
    comp=$(component_of_include "$target")
    [ "$comp" = other ] && continue
    if [[ "$allowed" != *" $comp "* ]]; then
      echo "$file:$line: $owner includes \"$target\" ($comp): not below it (CONTRIBUTING.md, Layout)" >&2
      violations=$((violations + 1))
    fi
  done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$file" || true)
done < <(git ls-files -- '*.h' '*.cc' '*.h.in')

if ((violations > 0)); then
  echo "check_includes: $violations include(s) against the layering" >&2
  exit 1
fi
echo "check_includes: every include points downward"
