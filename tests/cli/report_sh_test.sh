#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/report.sh's command line, with stand-ins for the tools it would
# run (cmake, apt-get, sudo, dpkg-query), first on PATH, so no case installs
# or builds anything:
#   report_sh_test.sh help SOURCE_DIR MEMTABLE
#       --help and -h exit 0 at once with the usage on stdout: no tool runs,
#       no build directory appears; with a built report, its flags follow.
#   report_sh_test.sh formats SOURCE_DIR MEMTABLE PYTHON3
#       a run with --format=json prints one JSON document on stdout (checked
#       with python3 -m json.tool), --format csv one CSV document: setup's
#       and the build's lines (the stand-ins write to stdout, as the real
#       tools do) go to stderr, and the mimalloc table is not appended.
# MEMTABLE is a built leanchan-memtable; the build directory handed to the
# script (LEANCHAN_REPORT_BUILD_DIR) is a fresh one that links to it.
set -euo pipefail
mode="${1:?usage: report_sh_test.sh help|formats SOURCE_DIR MEMTABLE [PYTHON3]}"
source_dir="${2:?the source directory}"
memtable="${3:?a built leanchan-memtable}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failed=0
fail() {
  echo "report_sh_test: $*" >&2
  failed=1
}

# The stand-ins: each notes its name in $work/ran. cmake also writes lines
# to stdout as the real one does (a configure's, a build's progress) and
# succeeds only in the formats mode; the others fail.
mkdir "$work/bin"
for tool in cmake apt-get sudo dpkg-query; do
  cat >"$work/bin/$tool" <<EOF
#!/bin/sh
echo "$tool \$*" >>"$work/ran"
if [ "$tool" = cmake ] && [ "$mode" = formats ]; then
  echo "-- Configuring done"
  echo "[100%] Built target leanchan-memtable"
  exit 0
fi
exit 1
EOF
  chmod +x "$work/bin/$tool"
done
export PATH="$work/bin:$PATH"
unset LEANCHAN_NO_INSTALL

case "$mode" in
  help)
    for flag in --help -h; do
      rm -f "$work/ran"
      if ! LEANCHAN_REPORT_BUILD_DIR="$work/none" "$source_dir/scripts/report.sh" "$flag" \
        >"$work/out" 2>"$work/err"; then
        fail "$flag exits non-zero: $(cat "$work/err")"
      fi
      grep -q '^usage: scripts/report.sh' "$work/out" || fail "$flag: no usage on stdout"
      grep -q 'leanchan-memtable --help, once built' "$work/out" ||
        fail "$flag without a build: the usage does not say where the report's flags are"
      if [ -e "$work/ran" ]; then fail "$flag ran: $(cat "$work/ran")"; fi
      if [ -e "$work/none" ]; then fail "$flag created the build directory"; fi
    done
    # A build directory holding a report: its flags follow the usage.
    mkdir -p "$work/built/profiler/report"
    ln -s "$memtable" "$work/built/profiler/report/leanchan-memtable"
    rm -f "$work/ran"
    LEANCHAN_REPORT_BUILD_DIR="$work/built" "$source_dir/scripts/report.sh" --help \
      >"$work/out" 2>"$work/err" || fail "--help with a build exits non-zero: $(cat "$work/err")"
    grep -q -- '--designs (Comma-separated designs' "$work/out" ||
      fail "--help with a build does not list the report's flags"
    if [ -e "$work/ran" ]; then fail "--help with a build ran: $(cat "$work/ran")"; fi
    ;;
  formats)
    python="${4:?python3}"
    mkdir -p "$work/build/profiler/report"
    ln -s "$memtable" "$work/build/profiler/report/leanchan-memtable"
    small=(--designs=leanchan-b8 --message_sizes=8 --capacities=1 --many_channels=none
           --tables=memory)
    export LEANCHAN_NO_INSTALL=1  # setup prints its line and installs nothing
    export LEANCHAN_REPORT_BUILD_DIR="$work/build"
    if ! "$source_dir/scripts/report.sh" --format=json "${small[@]}" >"$work/json" 2>"$work/err"; then
      fail "--format=json exits non-zero: $(cat "$work/err")"
    fi
    "$python" -m json.tool "$work/json" >/dev/null 2>&1 ||
      fail "--format=json: stdout is not one JSON document:"$'\n'"$(cat "$work/json")"
    grep -q 'Built target' "$work/err" || fail "--format=json: the build's progress is not on stderr"
    grep -q 'leanchan setup' "$work/err" || fail "--format=json: setup's line is not on stderr"
    if ! "$source_dir/scripts/report.sh" --format csv "${small[@]}" >"$work/csv" 2>"$work/err"; then
      fail "--format csv exits non-zero: $(cat "$work/err")"
    fi
    head -n 1 "$work/csv" | grep -q '^table,allocator,design,' ||
      fail "--format csv: stdout does not start with the CSV header:"$'\n'"$(cat "$work/csv")"
    if grep -q '|' "$work/csv"; then fail "--format csv: a Markdown table is on stdout"; fi
    ;;
  *)
    echo "report_sh_test: unknown mode '$mode' (help, formats)" >&2
    exit 2
    ;;
esac
if ((failed)); then exit 1; fi
echo "report_sh_test: $mode: ok"
