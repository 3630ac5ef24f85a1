#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs the benchmark suites once and prints, per workload, leanchan's figure
# divided by the Tokio-style baseline's from the same run (> 1 = faster).
#
#   scripts/compare.sh                     # all suites, 0.2 s per benchmark, one pass
#   MIN_TIME=1 scripts/compare.sh          # steadier numbers
#   REPS=3 scripts/compare.sh              # 3 repetitions of the throughput suite
#
# With REPS > 1 the repetitions of all throughput benchmarks run in a
# random interleaved order and each ratio uses the medians, so a slow
# stretch of the machine (on a VM, the hypervisor moving the two threads'
# vCPUs) spoils one repetition of many designs rather than every run of one
# design. The two orders do not agree yet: docs/notebook/2026-11-30-results.md, "Where a
# message's time goes".
#   scripts/compare.sh --benchmark_filter='msg:24'   # extra Google Benchmark flags
#   scripts/compare.sh --peers             # against crossbeam, Tokio, Go, moodycamel
#                                          # (scripts/peers.sh, docs/peers.md)
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "${1:-}" == "--help" || "${1:-}" == "-h" ]]; then
  sed -n '3,/^[^#]/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
if [[ "${1:-}" == "--peers" ]]; then
  shift
  exec scripts/peers.sh "$@"
fi

reps="${REPS:-1}"
[[ "$reps" =~ ^[1-9][0-9]*$ ]] || { echo "compare.sh: REPS must be a positive number" >&2; exit 2; }
scripts/setup.sh
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DLEANCHAN_BUILD_TESTS=OFF \
  -DLEANCHAN_BUILD_REPORT=OFF >/dev/null
cmake --build build-bench -j "$(nproc)" --target leanchan_bench_throughput leanchan_bench_creation >/dev/null

min_time="${MIN_TIME:-0.2}"
echo "# leanchan benchmarks: $(date -u +%Y-%m-%d), $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $(c++ --version | head -1), -O3 (Release)"
# Each suite reports its progress on stderr ([done/total] name, time left).
# The creation suite runs once, in order: a repetition interleaved with
# other benchmarks starts on a trimmed heap and, with fewer iterations,
# mostly measures the page faults of the baseline's 10 MB (it read 11x
# instead of 2x).
for suite in throughput creation; do
  binary=build-bench/benchmarks/leanchan_bench_$suite
  total=$("$binary" --benchmark_list_tests "$@" | wc -l)
  suite_reps=$reps
  [ "$suite" = creation ] && suite_reps=1
  echo "compare.sh: $suite suite, $total benchmarks x $suite_reps repetitions" >&2
  LEANCHAN_BENCH_TOTAL=$((total * suite_reps)) "$binary" --benchmark_min_time="$min_time" \
    --benchmark_repetitions="$suite_reps" \
    --benchmark_enable_random_interleaving="$([ "$suite_reps" -gt 1 ] && echo true || echo false)" "$@"
done
