#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The data behind each chart, as CSV on stdout (scripts/plots.sh writes
# them to docs/charts/; tests/profiler/check_charts.sh compares them):
#   chart_data.sh heap MEMTABLE SIZE DESIGNS CAPACITIES
#       design,capacity,idle,drained: heap bytes of one channel after
#       creation and after `capacity` sends and a drain (deterministic)
#   chart_data.sh many MEMTABLE
#       measure,<one column per design>: bytes per channel of 10,000
#       channels, heap and RSS, idle / burst / drained
#   chart_data.sh proxy PROXY_FANOUT
#       design,services,idle,drained: the proxy example's heap per service
set -euo pipefail
kind="${1:?usage: chart_data.sh heap|many|proxy BINARY ...}"
binary="${2:?the report or example binary}"
case "$kind" in
  heap)
    size="${3:?message size}"; designs="${4:?designs}"; capacities="${5:?capacities}"
    echo "design,capacity,idle,drained"
    "$binary" --format=csv --tables=memory --designs="$designs" --message_sizes="$size" \
      --capacities="$capacities" | awk -F, '$1 == "memory" {print $3 "," $5 "," $6 "," $8}'
    ;;
  many)
    "$binary" --format=csv --tables=many --many_channels=10000 \
      --designs=leanchan-default,tokio-style |
      awk -F, '$1 == "many_channels" {
                 name = $3; if ($13 != "-") name = name " (keep " $13 ")"
                 n++; names[n] = name
                 for (i = 6; i <= 11; i++) value[n, i] = $i
               }
               END {
                 split("heap idle,heap burst,heap drained,RSS idle,RSS burst,RSS drained", m, ",")
                 header = "measure"; for (k = 1; k <= n; k++) header = header "," names[k]
                 print header
                 for (i = 6; i <= 11; i++) {
                   line = m[i - 5]; for (k = 1; k <= n; k++) line = line "," value[k, i]
                   print line
                 }
               }'
    ;;
  proxy)
    echo "design,services,idle,drained"
    "$binary" --services=1000,10000,100000 --seconds=1 2>/dev/null |
      awk -F'|' '/^\| [a-z]/ && $3 ~ /[0-9]/ {
                   for (i = 2; i <= 8; i++) gsub(/ /, "", $i)
                   print $2 "," $3 "," $5 "," $8
                 }'
    ;;
  *) echo "chart_data.sh: unknown kind '$kind' (heap, many, proxy)" >&2; exit 2 ;;
esac
