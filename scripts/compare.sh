#!/usr/bin/env bash
# Runs the benchmark suites once and prints, per workload, leanchan's figure
# divided by the Tokio-style baseline's from the same run (> 1 = faster).
#
#   scripts/compare.sh                     # all suites, 0.2 s per benchmark
#   MIN_TIME=1 scripts/compare.sh          # steadier numbers
#   scripts/compare.sh --benchmark_filter='msg:24'   # extra Google Benchmark flags
#   scripts/compare.sh --peers             # against crossbeam, Tokio, Go, moodycamel
#                                          # (scripts/peers.sh, docs/peers.md)
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "${1:-}" == "--peers" ]]; then
  shift
  exec scripts/peers.sh "$@"
fi

scripts/setup.sh
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DLEANCHAN_BUILD_TESTS=OFF \
  -DLEANCHAN_BUILD_REPORT=OFF >/dev/null
cmake --build build-bench -j "$(nproc)" --target leanchan_bench_throughput leanchan_bench_creation >/dev/null

min_time="${MIN_TIME:-0.2}"
echo "# leanchan benchmarks: $(date -u +%Y-%m-%d), $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $(c++ --version | head -1), -O3 (Release)"
# Each suite reports its progress on stderr ([done/total] name, time left).
for suite in throughput creation; do
  binary=build-bench/benchmarks/leanchan_bench_$suite
  total=$("$binary" --benchmark_list_tests "$@" | wc -l)
  echo "compare.sh: $suite suite, $total benchmarks" >&2
  LEANCHAN_BENCH_TOTAL=$total "$binary" --benchmark_min_time="$min_time" "$@"
done
