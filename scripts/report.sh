#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job: installs what is missing, builds the memory-table report and
# prints it over glibc malloc, then the many-channels table over mimalloc.
# Arguments go to the glibc run (see build-report/profiler/report/leanchan-memtable --help).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
cmake -S . -B build-report -DCMAKE_BUILD_TYPE=Release -DLEANCHAN_BUILD_TESTS=OFF \
  -DLEANCHAN_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build-report -j "$(nproc)" --target leanchan-memtable leanchan-memtable-mimalloc >/dev/null
build-report/profiler/report/leanchan-memtable "$@"
echo
build-report/profiler/report/leanchan-memtable-mimalloc --tables=many
