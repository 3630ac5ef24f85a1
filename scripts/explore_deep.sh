#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A deeper run of the schedule explorer, for a big machine: every scenario
# with preemption bound 3 (CI runs bound 2, bound 1 for the largest; see
# docs/explorer.md). Hours on 2 cores; scenarios run in parallel, one per core.
#
#   scripts/explore_deep.sh            # bound 3
#   BOUND=4 scripts/explore_deep.sh
#   SCHEDULES=50000000 scripts/explore_deep.sh
#
# SCHEDULES (10,000,000) is each scenario's schedule budget: CI's 200,000
# is too few for a deeper bound, and a scenario that reaches the budget
# reports itself incomplete (a failed test, but no defect: it prints
# "budget reached"; a defect prints a replay trace).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build-explore -DCMAKE_BUILD_TYPE=Release -DLEANCHAN_BUILD_BENCHMARKS=OFF \
  -DLEANCHAN_BUILD_REPORT=OFF -DLEANCHAN_BUILD_EXAMPLES=OFF -DLEANCHAN_CONSUMER_TESTS=OFF \
  -DLEANCHAN_TEST_TIMEOUT=86400 >/dev/null
cmake --build build-explore -j "$(nproc)" --target explore_test explore_mutants_test
cd build-explore
LEANCHAN_EXPLORE_BOUND="${BOUND:-3}" LEANCHAN_EXPLORE_SCHEDULES="${SCHEDULES:-10000000}" ctest -L explore --output-on-failure -V -j "$(nproc)" |
  grep -E '\[explore|Passed|Failed|tests passed'
