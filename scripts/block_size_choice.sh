#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Measures throughput against block size (leanchan_bench_block_size: block
# sizes 1..32, messages of 8, 24, 128 and 1024 bytes, 1 and 4 producers,
# capacity 1024), REPS repetitions in a random interleaved order, and
# prints per message size the median throughput (millions of messages per
# second) of each block size and of the default, the smallest block size
# within 10 % of the best, and the default's ratio to the best: the
# measurement behind the default block size (docs/design.md, "The default
# block size").
#   REPS=5 scripts/block_size_choice.sh
set -euo pipefail
cd "$(dirname "$0")/.."
reps="${REPS:-5}"
scripts/setup.sh
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DLEANCHAN_BUILD_TESTS=OFF >/dev/null
cmake --build build-bench -j "$(nproc)" --target leanchan_bench_block_size >/dev/null
out=$(mktemp)
trap 'rm -f "$out"' EXIT
build-bench/benchmarks/leanchan_bench_block_size --benchmark_repetitions="$reps" \
  --benchmark_enable_random_interleaving=true --benchmark_min_time=0.2 \
  --benchmark_report_aggregates_only=true --benchmark_format=csv 2>/dev/null >"$out"
echo "date: $(date -u +%F), machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown), median of $reps interleaved"
awk -F, '
  $1 == "name" { for (i = 1; i <= NF; i++) if ($i == "items_per_second") col = i; next }
  $1 ~ /_median"?$/ {
    name = $1; gsub(/"/, "", name); sub(/_median$/, "", name)
    split(name, part, "/")           # block_size msg:S b:B producers:P
    size = substr(part[2], 5); b = substr(part[3], 3); p = substr(part[4], 11)
    rate = $col
    value[size, b, p] = rate; sizes[size] = 1; producers[p] = 1
  }
  END {
    split("1 2 4 8 16 32", bs, " ")
    printf "| message bytes | producers |"; for (k = 1; k <= 6; k++) printf " b%s |", bs[k]
    print " default | best | within 10 % of it | default / best |"
    printf "|---:|---:|"; for (k = 1; k <= 10; k++) printf "---:|"; print ""
    n = split("8 24 128 1024", ss, " ")
    for (i = 1; i <= n; i++) {
      s = ss[i]; chosen_all = 0
      for (p in producers) {
        best = 0; bestb = 0
        for (k = 1; k <= 6; k++) if (value[s, bs[k], p] > best) { best = value[s, bs[k], p]; bestb = bs[k] }
        chosen = 0
        for (k = 1; k <= 6 && !chosen; k++) if (value[s, bs[k], p] >= 0.9 * best) chosen = bs[k]
        if (chosen > chosen_all) chosen_all = chosen
        printf "| %s | %s |", s, p
        for (k = 1; k <= 6; k++) printf " %.2f |", value[s, bs[k], p] / 1e6
        printf " %.2f | b%s | b%s | %.2f |\n", value[s, "default", p] / 1e6, bestb, chosen, value[s, "default", p] / best
      }
      result[s] = chosen_all
    }
    printf "\nchosen per message size (the larger of the two producer counts):"
    for (i = 1; i <= n; i++) printf " %s B -> b%s;", ss[i], result[ss[i]]
    print ""
  }' "$out"
