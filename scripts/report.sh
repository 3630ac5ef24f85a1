#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job: installs what is missing, builds the memory-table report and
# prints it over glibc malloc, then the many-channels table over mimalloc.
#   scripts/report.sh [report flags]    (scripts/report.sh --help: the usage)
# Arguments go to the glibc run. Standard output carries the report alone:
# setup's lines and the build's (CMake's progress) go to standard error.
# --help, -h or -help (before a "--") prints the usage at once: no setup,
# no build; the report's flags follow only if the report is built already
# (its own --help prints them: they are defined in one place, the report).
# With --format=csv or --format=json the mimalloc table is not appended
# (standard output stays one CSV or JSON document); stderr says how to get it.
# LEANCHAN_REPORT_BUILD_DIR: the build directory (default build-report);
# one that is configured already keeps its configuration.
# LEANCHAN_NO_INSTALL=1: setup installs nothing (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${LEANCHAN_REPORT_BUILD_DIR:-build-report}"
memtable="$build/profiler/report/leanchan-memtable"
mimalloc="$build/profiler/report/leanchan-memtable-mimalloc"

format=markdown
help=0
previous=
for arg in "$@"; do
  case "$previous" in
    --format | -format) format="$arg" ;;
  esac
  previous="$arg"
  case "$arg" in
    --) break ;;
    --help | -h | -help) help=1 ;;
    --format=* | -format=*) format="${arg#*=}" ;;
  esac
done

if ((help)); then
  cat <<EOF
usage: scripts/report.sh [report flags]
Installs what the build needs (scripts/setup.sh; LEANCHAN_NO_INSTALL=1 skips
it), builds the report in $build (LEANCHAN_REPORT_BUILD_DIR sets another
directory), prints the report over glibc malloc with these flags, then, in
Markdown (the default format), the many-channels table over mimalloc; with
--format=csv or json that table is left out, so standard output is one
document. Setup's and the build's lines go to standard error.
EOF
  if [ -x "$memtable" ]; then
    echo
    echo "The report's flags ($memtable --help, as built last):"
    echo
    "$memtable" --help
  else
    echo
    echo "The report's flags: $memtable --help, once built (a run of this script builds it)."
  fi
  exit 0
fi

echo "report.sh: setup (scripts/setup.sh)" >&2
scripts/setup.sh >&2
if [ ! -f "$build/CMakeCache.txt" ]; then
  echo "report.sh: configuring $build" >&2
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DLEANCHAN_BUILD_TESTS=OFF \
    -DLEANCHAN_BUILD_BENCHMARKS=OFF >&2
fi
echo "report.sh: building leanchan-memtable and leanchan-memtable-mimalloc in $build" >&2
cmake --build "$build" -j "$(nproc)" --target leanchan-memtable leanchan-memtable-mimalloc >&2
"$memtable" "$@"
case "$format" in
  markdown | md)
    echo
    "$mimalloc" --tables=many
    ;;
  *)
    echo "report.sh: --format=$format: the mimalloc table is not appended (one $format document" \
         "on standard output); it is: $mimalloc --tables=many --format=$format" >&2
    ;;
esac
