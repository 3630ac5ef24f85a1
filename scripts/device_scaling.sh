#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The multi-producer scaling run, for a larger machine: runs a prebuilt
# Release throughput benchmark (build-device-run/, made by
#   cmake -S . -B build-device -DCMAKE_BUILD_TYPE=Release ... and copied with
#   its shared libraries) with 1..15 producers, 24-byte messages, capacities
# 16 and 1024, and writes the output (and the machine) under $OUT.
set -uo pipefail
out="${OUT:-/tmp/leanchan-scaling}"
mkdir -p "$out"
dir="$(dirname "$0")/../build-device-run"
export LD_LIBRARY_PATH="$dir/libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
{ nproc; lscpu | grep -E 'Model name|^CPU\(s\)|Thread|Socket'; uname -r; } > "$out/machine.txt" 2>&1
ldd "$dir/leanchan_bench_throughput" >> "$out/machine.txt" 2>&1
LEANCHAN_BENCH_PRODUCERS="${PRODUCERS:-1,2,4,8,15}" timeout "${LIMIT_S:-420}" \
  "$dir/leanchan_bench_throughput" --benchmark_min_time="${MIN_TIME:-0.2}" \
  --benchmark_filter='throughput/(tokio-style|leanchan-b1|leanchan-b8|leanchan-b32)/.*msg:24/cap:(16|1024)' \
  --benchmark_color=false > "$out/scaling.txt" 2>&1
echo "exit: $?" >> "$out/scaling.txt"
tail -40 "$out/scaling.txt"
