#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fails when a committed chart does not match its data, or its data no
# longer matches what the code measures:
#   1. the deterministic data (heap bytes) is measured again with the
#      report and compared with docs/charts/*.csv, line for line;
#   2. every chart is drawn again from the committed CSV files and compared
#      with the committed SVG, byte for byte.
#   check_charts.sh MEMTABLE
set -euo pipefail
memtable="${1:?usage: check_charts.sh path/to/leanchan-memtable}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
charts="$root/docs/charts"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failed=0

for size in 24 1024; do
  designs=$(awk -F, 'NR > 1 {print $1}' "$charts/heap_$size.csv" | awk '!seen[$0]++' | paste -sd,)
  capacities=$(awk -F, 'NR > 1 {print $2}' "$charts/heap_$size.csv" | awk '!seen[$0]++' | paste -sd,)
  "$root/scripts/chart_data.sh" heap "$memtable" "$size" "$designs" "$capacities" >"$work/heap_$size.csv"
  if ! diff -u "$charts/heap_$size.csv" "$work/heap_$size.csv"; then
    echo "check_charts: docs/charts/heap_$size.csv is stale: the report measures the lines above" >&2
    failed=1
  fi
done
"$root/scripts/chart_data.sh" many "$memtable" >"$work/many_channels.csv"
if ! diff -u <(grep '^heap' "$charts/many_channels.csv") <(grep '^heap' "$work/many_channels.csv"); then
  echo "check_charts: docs/charts/many_channels.csv's heap rows are stale" >&2
  failed=1
fi

mkdir -p "$work/drawn"
cp "$charts"/*.csv "$work/drawn/"
"$root/scripts/plots.sh" draw "$work/drawn" 2>/dev/null
for svg in "$charts"/*.svg; do
  name=$(basename "$svg")
  if ! cmp -s "$svg" "$work/drawn/$name"; then
    echo "check_charts: docs/charts/$name does not match its data (scripts/plots.sh draw redraws it)" >&2
    failed=1
  fi
done
if ((failed)); then exit 1; fi
echo "check_charts: every chart matches its data, and the data matches the report"
