#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A paired, timed A/B of leanchan-peer-bench: the benchmark built at a base
# commit against the working tree's, run back to back per configuration
# (base then new, new then base, alternating), PAIRS times. Each pair's
# new/base ratio is taken from two runs a second apart, so a VM that slows
# down for a minute (docs/peers.md, "Paired A/B") slows both runs of the
# pair alike; the median of the ratios is the result.
#
#   scripts/peer_ab.sh HEAD~1
#   PAIRS=12 AB_DESIGNS=leanchan-b8 AB_CAPACITIES="16 1024" scripts/peer_ab.sh main
#
# Prints a Markdown table per row: the base's and the new median M
# messages/s, the median of the pair ratios (> 1: faster) with its lowest
# and highest, and CPU ns per message (medians); then the cache-line
# hand-off probe before and after (one way, ns). A ratio means little when
# its lowest and highest straddle 1 widely; a null change (two builds of
# the same code) shows the spread to expect. Environment: PAIRS (8),
# AB_DESIGNS ("leanchan-b8 leanchan-b32"), AB_CAPACITIES ("16 1024"),
# AB_PRODUCERS ("1 4"), AB_SIZE (24), AB_MESSAGES (2000000, a multiple of
# every producer count), LEANCHAN_NO_INSTALL=1 (never call apt-get).
# Builds in build-peer-ab/ (Release, the peer benchmark only).
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  -h | --help) sed -n '3,/^[^#]/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  "") echo "usage: scripts/peer_ab.sh <base-commit> (see --help)" >&2; exit 2 ;;
esac
[[ $# -eq 1 ]] || { echo "usage: scripts/peer_ab.sh <base-commit> (see --help); settings go in the environment" >&2; exit 2; }
base="$(git rev-parse --verify "$1^{commit}" 2>/dev/null)" ||
  { echo "peer_ab.sh: no such commit: $1" >&2; exit 2; }
pairs="${PAIRS:-8}"
designs="${AB_DESIGNS:-leanchan-b8 leanchan-b32}"
capacities="${AB_CAPACITIES:-16 1024}"
producer_counts="${AB_PRODUCERS:-1 4}"
size="${AB_SIZE:-24}"
messages="${AB_MESSAGES:-2000000}"
for v in "$pairs" $capacities $producer_counts "$size" "$messages"; do
  [[ "$v" =~ ^[1-9][0-9]*$ ]] ||
    { echo "peer_ab.sh: '$v' is not a positive number (check PAIRS / AB_*)" >&2; exit 2; }
done
for p in $producer_counts; do
  ((messages % p == 0)) ||
    { echo "peer_ab.sh: AB_MESSAGES ($messages) is not a multiple of $p producers" >&2; exit 2; }
done

scripts/setup.sh >&2
work=build-peer-ab
scripts/build_peer_bench.sh "$work" "$base"
bin_of() { echo "$work/$1/benchmarks/leanchan-peer-bench"; }
available=$("$(bin_of new)" --help 2>&1 | sed -n 's/^designs: //p')
for d in $designs; do
  [[ " $available " == *" $d "* ]] || { echo "peer_ab.sh: unknown design '$d' (designs: $available)" >&2; exit 2; }
done

probe() { "$(bin_of new)" --handoff --messages=200000 | sed -n 's/.*one_way_ns=\([0-9.]*\).*/\1/p'; }
# run SIDE DESIGN CAPACITY PRODUCERS: "msgs_per_sec cpu_ns_per_msg"
run() {
  local line
  line=$("$(bin_of "$1")" --design="$2" --capacity="$3" --producers="$4" --size="$size" \
           --messages="$messages") || { echo "peer_ab.sh: $1 run failed: $2 C=$3 P=$4" >&2; return 1; }
  line=$(sed -n 's/.* msgs_per_sec=\([0-9.e+]*\).* cpu_ns_per_msg=\([0-9.]*\).*/\1 \2/p' <<<"$line")
  [[ -n "$line" ]] || { echo "peer_ab.sh: $1 run printed no throughput: $2 C=$3 P=$4" >&2; return 1; }
  echo "$line"
}

raw="$work/pairs-$(date +%Y%m%d-%H%M%S).txt"
: >"$raw"
probe_before=$(probe)
for d in $designs; do
  for c in $capacities; do
    for p in $producer_counts; do
      echo "peer_ab.sh: $d capacity $c, $p producer(s): $pairs pairs" >&2
      for ((i = 0; i < pairs; i++)); do
        if ((i % 2 == 0)); then b=$(run base "$d" "$c" "$p"); n=$(run new "$d" "$c" "$p")
        else n=$(run new "$d" "$c" "$p"); b=$(run base "$d" "$c" "$p"); fi
        echo "$d $c $p $b $n" >>"$raw"
      done
    done
  done
done
probe_after=$(probe)

echo "# Paired A/B: base $(git rev-parse --short "$base") vs working tree $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' + changes')"
echo
echo "- leanchan-peer-bench, $size-byte messages, $messages a run, $pairs back-to-back pairs a row (order alternating); raw runs in $raw"
echo "- hand-off probe (one way): ${probe_before:-?} ns before, ${probe_after:-?} ns after"
echo
python3 - "$raw" <<'PY'
import collections, statistics, sys
rows = collections.OrderedDict()
for line in open(sys.argv[1]):
    d, c, p, bm, bc, nm, nc = line.split()
    rows.setdefault((d, c, p), []).append((float(bm) / 1e6, float(bc), float(nm) / 1e6, float(nc)))
print("| design | capacity | producers | base M/s | new M/s | new / base (pairs) | lowest | highest | base CPU ns | new CPU ns |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for (d, c, p), runs in rows.items():
    ratios = [n / b for b, _, n, _ in runs]
    med = lambda i: statistics.median(r[i] for r in runs)
    print(f"| {d} | {c} | {p} | {med(0):.2f} | {med(2):.2f} | {statistics.median(ratios):.2f} | "
          f"{min(ratios):.2f} | {max(ratios):.2f} | {med(1):.0f} | {med(3):.0f} |")
PY
