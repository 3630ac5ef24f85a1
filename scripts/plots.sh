#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Draws the report's figures as SVG charts with gnuplot (Debian's
# gnuplot-nox), into DIR (default docs/charts):
#   heap_24.svg, heap_1024.svg   heap bytes of one channel after `capacity`
#                                sends, against the capacity, per design
#   many_channels.svg            heap and RSS per channel, idle / after a
#                                burst / drained, 10,000 channels
#   proxy_memory.svg             the proxy example's heap per service, idle
#                                and drained, against the number of services
#
#   scripts/plots.sh [DIR]
#   PLOT_FORMAT=png scripts/plots.sh /tmp/preview   # PNG instead (pngcairo)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-docs/charts}"
if [ "${PLOT_FORMAT:-svg}" = png ]; then
  terminal='pngcairo size 720,440 font "sans,10" background "white"'; ext=png
else
  terminal='svg size 720,440 font "sans,12" background "white"'; ext=svg
fi
mkdir -p "$out"

scripts/setup.sh
if ! command -v gnuplot >/dev/null; then
  echo "plots.sh: installing gnuplot-nox" >&2
  as_root=(); [ "$(id -u)" -ne 0 ] && as_root=(sudo)
  "${as_root[@]}" apt-get update >/dev/null
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y --no-install-recommends gnuplot-nox >/dev/null
fi
cmake -S . -B build-report -DCMAKE_BUILD_TYPE=Release -DLEANCHAN_BUILD_TESTS=OFF \
  -DLEANCHAN_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build-report -j "$(nproc)" --target leanchan-memtable leanchan-proxy-fanout >/dev/null
memtable=build-report/profiler/report/leanchan-memtable
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT

designs=leanchan-b1,leanchan-b8,leanchan-b32,tokio-style
capacities=1,2,4,8,16,32,64,128,256,512,1024
echo "plots.sh: heap against capacity" >&2
for size in 24 1024; do
  "$memtable" --format=csv --tables=memory --designs="$designs" --message_sizes="$size" \
    --capacities="$capacities" | awk -F, 'NR > 1 && $1 == "memory" {print $3, $5, $7}' \
    >"$data/heap_$size.txt"
  gnuplot <<GNUPLOT
set terminal $terminal
set output "$out/heap_$size.$ext"
set title "Heap bytes of one channel after capacity sends ($size-byte messages)"
set xlabel "capacity (messages)"; set ylabel "heap bytes"
set logscale xy; set grid; set key top left
plot for [d in "leanchan-b1 leanchan-b8 leanchan-b32 tokio-style"] \
  "< grep '^".d." ' $data/heap_$size.txt" using 2:3 with linespoints title d
GNUPLOT
done

echo "plots.sh: many channels (10,000)" >&2
"$memtable" --format=csv --tables=many --many_channels=10000 --designs=leanchan-b8,tokio-style |
  awk -F, '$1 == "many_channels" {name = $3; if ($13 != "-") name = name "/keep-" $13
                                 print name, $6, $7, $8, $9, $10, $11}' >"$data/many.txt"
gnuplot <<GNUPLOT
set terminal $terminal
set output "$out/many_channels.$ext"
set title "Bytes per channel, 10,000 channels of capacity 16, burst of 16 (glibc)"
set style data histograms; set style histogram clustered gap 1; set style fill solid 0.8
set ylabel "bytes per channel"; set grid ytics; set key top left
set xtics ("heap idle" 0, "heap burst" 1, "heap drained" 2, "RSS idle" 3, "RSS burst" 4, "RSS drained" 5)
plot "< grep '^leanchan-b8/keep-one ' $data/many.txt | tr ' ' '\n' | tail -n +2" using 1 title "leanchan-b8 (keep one)", \
     "< grep '^leanchan-b8/keep-none ' $data/many.txt | tr ' ' '\n' | tail -n +2" using 1 title "leanchan-b8 (keep none)", \
     "< grep '^tokio-style ' $data/many.txt | tr ' ' '\n' | tail -n +2" using 1 title "tokio-style"
GNUPLOT

echo "plots.sh: the proxy example (1 s per row)" >&2
build-report/examples/leanchan-proxy-fanout --services=1000,10000,100000 --seconds=1 |
  awk -F'|' 'NR > 2 {gsub(/ /, "", $2); gsub(/ /, "", $3); print $2, $3, $5, $8}' >"$data/proxy.txt"
gnuplot <<GNUPLOT
set terminal $terminal
set output "$out/proxy_memory.$ext"
set title "Proxy example: heap bytes per service"
set xlabel "services"; set ylabel "heap bytes per service"
set logscale x; set xrange [500:200000]; set grid; set key top right
plot "< grep '^leanchan ' $data/proxy.txt" using 2:3 with linespoints title "leanchan, idle", \
     "< grep '^leanchan ' $data/proxy.txt" using 2:4 with linespoints title "leanchan, drained", \
     "< grep '^tokio-style ' $data/proxy.txt" using 2:3 with linespoints title "tokio-style, idle", \
     "< grep '^tokio-style ' $data/proxy.txt" using 2:4 with linespoints title "tokio-style, drained"
GNUPLOT
echo "plots.sh: wrote $(ls "$out"/*."$ext" | tr '\n' ' ')" >&2
