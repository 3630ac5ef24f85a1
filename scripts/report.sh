#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job: installs what is missing, builds the memory-table report and
# prints it over glibc malloc, then the many-channels table over mimalloc.
# Arguments go to the glibc run (see build-report/profiler/report/leanchan-memtable --help).
set -euo pipefail
cd "$(dirname "$0")/.."

for arg in "$@"; do
  if [ "$arg" = --help ] || [ "$arg" = -h ]; then
    echo "usage: scripts/report.sh [report flags]: builds the report, prints it over glibc malloc"
    echo "with these flags, then the many-channels table over mimalloc. The report's flags:"
    echo
    HELP_ONLY=1
  fi
done
scripts/setup.sh
cmake -S . -B build-report -DCMAKE_BUILD_TYPE=Release -DLEANCHAN_BUILD_TESTS=OFF \
  -DLEANCHAN_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build-report -j "$(nproc)" --target leanchan-memtable leanchan-memtable-mimalloc >/dev/null
build-report/profiler/report/leanchan-memtable "$@"
if [ "${HELP_ONLY:-0}" = 1 ]; then exit 0; fi
echo
build-report/profiler/report/leanchan-memtable-mimalloc --tables=many
