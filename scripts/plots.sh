#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The report's charts, drawn from data files committed beside them, so a
# chart can never drift from its numbers (tests/profiler/check_charts.sh).
#
#   scripts/plots.sh            measure, then draw (data, then draw)
#   scripts/plots.sh data [DIR] measure: the CSV files, into DIR (default docs/charts)
#   scripts/plots.sh draw [DIR] draw DIR/*.svg from DIR/*.csv with gnuplot (no build)
#   PLOT_FORMAT=png scripts/plots.sh draw /tmp/preview   # PNG instead (pngcairo)
#
# The charts, all from the same data files:
#   heap_24.svg, heap_1024.svg   heap bytes of one channel, idle (created) and
#                                drained after `capacity` sends, per design
#   many_channels.svg            heap and RSS per channel, idle / after a
#                                burst / drained, 10,000 channels (glibc)
#   proxy_memory.svg             the proxy example's heap per service, idle
#                                and drained, against the number of services
set -euo pipefail
cd "$(dirname "$0")/.."
step="${1:-all}"
out="${2:-docs/charts}"
designs=leanchan-default,leanchan-b1,leanchan-b8,tokio-style
capacities=1,2,4,8,16,32,64,128,256,512,1024

measure() {
  scripts/setup.sh
  cmake -S . -B build-report -DCMAKE_BUILD_TYPE=Release -DLEANCHAN_BUILD_TESTS=OFF \
    -DLEANCHAN_BUILD_BENCHMARKS=OFF >/dev/null
  cmake --build build-report -j "$(nproc)" --target leanchan-memtable leanchan-proxy-fanout >/dev/null
  local memtable=build-report/profiler/report/leanchan-memtable
  mkdir -p "$out"
  for size in 24 1024; do
    echo "plots.sh: heap against capacity, $size-byte messages" >&2
    scripts/chart_data.sh heap "$memtable" "$size" "$designs" "$capacities" >"$out/heap_$size.csv"
  done
  echo "plots.sh: many channels (10,000)" >&2
  scripts/chart_data.sh many "$memtable" >"$out/many_channels.csv"
  echo "plots.sh: the proxy example (1 s per row)" >&2
  scripts/chart_data.sh proxy build-report/examples/leanchan-proxy-fanout >"$out/proxy_memory.csv"
}

draw() {
  if ! command -v gnuplot >/dev/null; then
    echo "plots.sh: gnuplot not found (Debian: gnuplot-nox; scripts/setup.sh installs it)" >&2
    exit 1
  fi
  local terminal ext
  if [ "${PLOT_FORMAT:-svg}" = png ]; then
    terminal='pngcairo size 720,440 font "sans,10" background "white"'; ext=png
  else
    terminal='svg size 720,440 font "sans,12" background "white"'; ext=svg
  fi
  for size in 24 1024; do
    gnuplot <<GNUPLOT
set terminal $terminal
set output "$out/heap_$size.$ext"
set datafile separator ","
set title "One channel, $size-byte messages: heap bytes idle and after a drain"
set xlabel "capacity (messages)"; set ylabel "heap bytes"
set logscale xy; set grid; set key outside right top
set xrange [1:1024]
plot for [d in "leanchan-default leanchan-b1 leanchan-b8 tokio-style"] \
       "< grep '^".d.",' $out/heap_$size.csv" using 2:4 with linespoints title d." drained", \
     for [d in "leanchan-default tokio-style"] \
       "< grep '^".d.",' $out/heap_$size.csv" using 2:3 with lines dashtype 2 title d." idle"
GNUPLOT
  done
  gnuplot <<GNUPLOT
set terminal $terminal
set output "$out/many_channels.$ext"
set datafile separator ","
set title "Bytes per channel, 10,000 channels of capacity 16, burst of 16 (glibc)"
set style data histograms; set style histogram clustered gap 1; set style fill solid 0.8
set ylabel "bytes per channel"; set yrange [0:*]; set grid ytics; set key outside right top
set xtics rotate by -30 left; set bmargin 5
plot "$out/many_channels.csv" using 2:xtic(1) title columnhead, \
     "" using 3 title columnhead, "" using 4 title columnhead
GNUPLOT
  gnuplot <<GNUPLOT
set terminal $terminal
set output "$out/proxy_memory.$ext"
set datafile separator ","
set title "Proxy example: heap bytes per service"
set xlabel "services"; set ylabel "heap bytes per service"
set logscale x; set xrange [500:200000]; set yrange [0:*]; set grid; set key outside right top
plot for [d in "leanchan tokio-style"] \
       "< grep '^".d.",' $out/proxy_memory.csv" using 2:3 with linespoints title d.", idle", \
     for [d in "leanchan tokio-style"] \
       "< grep '^".d.",' $out/proxy_memory.csv" using 2:4 with linespoints dashtype 2 title d.", drained"
GNUPLOT
  echo "plots.sh: drew $(ls "$out"/*."$ext" | tr '\n' ' ')" >&2
}

case "$step" in
  all) measure; draw ;;
  data) measure ;;
  draw) draw ;;
  *) echo "usage: $0 [all|data|draw] [DIR]" >&2; exit 2 ;;
esac
