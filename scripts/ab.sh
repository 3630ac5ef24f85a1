#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# An interleaved A/B of the throughput benchmarks: the binary built at a
# base commit against the working tree's, alternated (ABBA) for REPS
# repetitions, medians compared.
#
#   scripts/ab.sh <base-commit> [benchmark filter]
#   REPS=9 MIN_TIME=0.2 scripts/ab.sh HEAD~3 'leanchan-b(8|32)/.*msg:24'
#
# Prints per row the base's median, the new median, new/base (> 1 =
# faster), and the base's own spread between repetitions ((max - min) /
# median). A row is marked SLOWER when the new median is below the base's
# by more than 5 % at capacity 1024, or by more than the base's spread
# elsewhere. Exit status 0 either way: the table is the result.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  -h | --help) sed -n '3,/^[^#]/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
[[ $# -ge 1 && $# -le 2 ]] || { echo "usage: $0 <base-commit> [filter] (see --help)" >&2; exit 2; }
base="$(git rev-parse --verify --quiet "$1^{commit}")" ||
  { echo "ab.sh: no such commit: $1" >&2; exit 2; }
filter="${2:-leanchan-b(8|32)/.*msg:24}"
reps="${REPS:-9}"
min_time="${MIN_TIME:-0.2}"
[[ "$reps" =~ ^[1-9][0-9]*$ ]] || { echo "ab.sh: REPS must be a positive number" >&2; exit 2; }
target=leanchan_bench_throughput
configure=(-DCMAKE_BUILD_TYPE=Release -DLEANCHAN_BUILD_TESTS=OFF -DLEANCHAN_BUILD_REPORT=OFF
           -DLEANCHAN_BUILD_EXAMPLES=OFF)
work=build-ab
mkdir -p "$work"
if [[ ! -d "$work/base-src" ]]; then git worktree add --detach "$work/base-src" "$base" >/dev/null
else git -C "$work/base-src" checkout -q --detach "$base"; fi
for side in base new; do
  src=. ; [[ $side == base ]] && src="$work/base-src"
  cmake -S "$src" -B "$work/$side" "${configure[@]}" >/dev/null
  cmake --build "$work/$side" -j "$(nproc)" --target "$target" >/dev/null
done
echo "# A/B: base $(git rev-parse --short "$base") vs working tree $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes'), $reps reps ABBA, min_time $min_time, filter '$filter'"
for ((rep = 0; rep < reps; rep++)); do
  order=(base new); (( rep % 2 == 1 )) && order=(new base)
  for side in "${order[@]}"; do
    "$work/$side/benchmarks/$target" --benchmark_filter="$filter" --benchmark_min_time="$min_time" \
      --benchmark_out="$work/$side-$rep.json" --benchmark_out_format=json >/dev/null 2>&1
  done
done
python3 - "$work" "$reps" <<'PY'
import json, statistics, sys
work, reps = sys.argv[1], int(sys.argv[2])
def load(side):
    rows = {}
    for rep in range(reps):
        for b in json.load(open(f"{work}/{side}-{rep}.json"))["benchmarks"]:
            value = b.get("items_per_second") or (1e9 / b["real_time"] if b["real_time"] else 0)
            rows.setdefault(b["name"], []).append(value)
    return rows
base, new = load("base"), load("new")
print(f"{'benchmark':<62} {'base':>10} {'new':>10} {'new/base':>9} {'spread':>7}")
slower = 0
for name in base:
    if name not in new: continue
    b, n = statistics.median(base[name]), statistics.median(new[name])
    spread = (max(base[name]) - min(base[name])) / b if b else 0
    ratio = n / b if b else 0
    limit = 0.05 if "cap:1024" in name else spread
    flag = "  SLOWER" if ratio < 1 - limit else ""
    slower += bool(flag)
    print(f"{name:<62} {b:>10.4g} {n:>10.4g} {ratio:>9.3f} {spread:>7.1%}{flag}")
print(f"# rows slower beyond the limit: {slower} (capacity 1024: 5 %; others: the base's spread)")
print("# figures: items per second (throughput rows), 1e9 / ns per round trip (pingpong, uncontended)")
PY
