#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Load test of the proxies (docs/proxy.md): leanchan-proxy with each of its
# channels (leanchan, tokio-style, asio) and the hyper anchor
# (leanchan-proxy-hyper), in front of leanchan-proxy-backend. Per channel
# row and repetition (rows interleaved): start the proxy with S services,
# read /admin/stats, hold I idle keep-alive client connections, read it
# again, then wrk with random service paths while sampling the proxy's RSS;
# SIGTERM the proxy and check it exits 0. Prints medians and (min-max) per
# row, leanchan's ratios over the other rows, a Markdown table (also in
# OUT/proxy-load.md), an RSS-over-time chart (OUT/rss.svg) and, last, one
# line per row:
#   channel=NAME rps=N p99_us=N heap_per_idle_conn=N heap_per_service=N rss_per_idle_conn=N non2xx=N socket_errors=N
#
#   scripts/proxy_load.sh                       # 5 reps, 10000 services, 10000 idle, 30 s
#   scripts/proxy_load.sh --quick               # 1 rep, 1000 idle, 5 s
#   scripts/proxy_load.sh --channels=leanchan,hyper --reps=3
#
# Flags:
#   --reps=R            repetitions, rows interleaved (5)
#   --services=S        services per proxy (10000)
#   --idle=I            idle keep-alive client connections held (10000)
#   --duration=D        wrk duration, e.g. 30s, 2m (30s)
#   --connections=C     wrk connections (400); --wrk-threads=T (2)
#   --channels=a,b      rows: leanchan, tokio-style, asio, hyper (all)
#   --threads=N         the proxies' --threads (nproc), passed to every row
#   --backend-threads=N the backend's --threads (1)
#   --out=DIR           table, CSVs, chart, logs (BUILD/proxy-load)
#   --build-dir=DIR     build directory (build-proxy; or LEANCHAN_PROXY_BUILD_DIR)
#   --proxy-bin=PATH    a built leanchan-proxy (skips its build)
#   --backend-bin=PATH  a built leanchan-proxy-backend (skips its build)
#   --hyper-bin=PATH    a built leanchan-proxy-hyper (skips its build)
#   --jobs=N            build jobs (nproc)
#   --quick             --reps=1 --duration=5s --idle=1000 (CI, checks)
#   --help              this text
# Environment: LEANCHAN_NO_INSTALL=1 never calls apt-get.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$(pwd)

usage() { sed -n '3,/^[^#]/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; }
die_usage() { echo "proxy_load.sh: $*" >&2; exit 2; }

reps=5 services=10000 idle=10000 duration=30s connections=400 wrk_threads=2
channels_arg="leanchan,tokio-style,asio,hyper" proxy_threads=$(nproc 2>/dev/null || echo 2) backend_threads=1
out_dir="" build_dir="${LEANCHAN_PROXY_BUILD_DIR:-$root/build-proxy}"
proxy_bin="" backend_bin="" hyper_bin=""
quick=0
jobs=$(nproc 2>/dev/null || echo 2)
declare -A explicit=()
for arg in "$@"; do
  case "$arg" in
    -h | --help) usage; exit 0 ;;
    --quick) quick=1 ;;
    --reps=*) reps=${arg#*=}; explicit[reps]=1 ;;
    --services=*) services=${arg#*=} ;;
    --idle=*) idle=${arg#*=}; explicit[idle]=1 ;;
    --duration=*) duration=${arg#*=}; explicit[duration]=1 ;;
    --connections=*) connections=${arg#*=} ;;
    --wrk-threads=*) wrk_threads=${arg#*=} ;;
    --channels=*) channels_arg=${arg#*=} ;;
    --threads=*) proxy_threads=${arg#*=}; [[ "$proxy_threads" =~ ^[1-9][0-9]*$ ]] || die_usage "--threads: '$proxy_threads' is not a positive number" ;;
    --backend-threads=*) backend_threads=${arg#*=} ;;
    --out=*) out_dir=${arg#*=} ;;
    --build-dir=*) build_dir=${arg#*=} ;;
    --proxy-bin=*) proxy_bin=${arg#*=} ;;
    --backend-bin=*) backend_bin=${arg#*=} ;;
    --hyper-bin=*) hyper_bin=${arg#*=} ;;
    --jobs=*) jobs=${arg#*=} ;;
    *) die_usage "unknown argument '$arg' (see --help)" ;;
  esac
done
if ((quick)); then
  [ -n "${explicit[reps]:-}" ] || reps=1
  [ -n "${explicit[duration]:-}" ] || duration=5s
  [ -n "${explicit[idle]:-}" ] || idle=1000
fi
for pair in "reps:$reps" "services:$services" "connections:$connections" "wrk-threads:$wrk_threads" \
            "backend-threads:$backend_threads" "jobs:$jobs"; do
  [[ "${pair#*:}" =~ ^[1-9][0-9]*$ ]] || die_usage "--${pair%%:*}: '${pair#*:}' is not a positive number"
done
[[ "$idle" =~ ^[0-9]+$ ]] || die_usage "--idle: '$idle' is not a number"
[[ "$duration" =~ ^[1-9][0-9]*[smh]?$ ]] || die_usage "--duration: '$duration' is not like 30s, 2m"
channels=()
IFS=, read -r -a requested <<<"$channels_arg"
for c in "${requested[@]}"; do
  case "$c" in
    leanchan | tokio-style | asio | hyper) channels+=("$c") ;;
    *) die_usage "--channels: unknown channel '$c' (leanchan, tokio-style, asio, hyper)" ;;
  esac
done
((${#channels[@]} > 0)) || die_usage "--channels: none given"

mkdir -p "$build_dir" || { echo "proxy_load.sh: cannot create $build_dir" >&2; exit 1; }
build_dir=$(cd "$build_dir" && pwd)
out_dir=${out_dir:-$build_dir/proxy-load}
mkdir -p "$out_dir" || { echo "proxy_load.sh: cannot create $out_dir" >&2; exit 1; }
out_dir=$(cd "$out_dir" && pwd)
tool="$root/scripts/proxy_load/tool.py"
lua="$root/scripts/proxy_load/random_service.lua"

log() { echo "proxy_load.sh: $*" >&2; }
wants() { local c; for c in "${channels[@]}"; do [ "$c" = "$1" ] && return 0; done; return 1; }

# ---------------------------------------------------------------- cleanup
# Every child this script starts is listed here and ended on exit.
children=()
cleanup() {
  local pid
  for pid in "${children[@]}"; do
    kill -TERM "$pid" 2>/dev/null
  done
  for pid in "${children[@]}"; do
    wait "$pid" 2>/dev/null
  done
  children=()
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM
forget() {  # forget PID: no longer ours to end
  local keep=() pid
  for pid in "${children[@]}"; do [ "$pid" = "$1" ] || keep+=("$pid"); done
  children=("${keep[@]}")
}
end() {  # end PID...: SIGTERM, wait, forget (the failure paths of a run)
  local pid
  for pid in "$@"; do
    [ -n "$pid" ] || continue
    kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; forget "$pid"
  done
}

# ---------------------------------------------------------------- install
ensure_log_dir=$out_dir
ensure_no_install=""
[ "${LEANCHAN_NO_INSTALL:-0}" = 1 ] && ensure_no_install="LEANCHAN_NO_INSTALL=1"
# shellcheck source=lib/ensure.sh
source "$root/scripts/lib/ensure.sh"
# shellcheck source=lib/cargo_offline.sh
source "$root/scripts/lib/cargo_offline.sh"

command -v python3 >/dev/null || ensure tools python3 || { log "python3 is required"; exit 1; }
ensure tools wrk || { log "wrk is required: $ensure_why"; exit 1; }
ensure tools gnuplot-nox || log "no gnuplot: no RSS chart ($ensure_why)"

# ---------------------------------------------------------------- build
skipped=()  # "row: why", printed above the table
skip() { skipped+=("$1"); log "skipping $1"; }

# The C++ proxy and the backend: one CMake build, unless both are given.
need_cpp=0
for c in leanchan tokio-style asio; do wants "$c" && need_cpp=1; done
cpp_why=""
if { ((need_cpp)) && [ -z "$proxy_bin" ]; } || [ -z "$backend_bin" ]; then
  targets=()
  ((need_cpp)) && [ -z "$proxy_bin" ] && targets+=(leanchan-proxy)
  [ -z "$backend_bin" ] && targets+=(leanchan-proxy-backend)
  ensure cpp-proxy cmake g++ make libboost1.81-dev || true
  log "building ${targets[*]} in $build_dir"
  if cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DLEANCHAN_BUILD_PROXY=ON \
       -DLEANCHAN_BUILD_TESTS=OFF -DLEANCHAN_BUILD_BENCHMARKS=OFF -DLEANCHAN_BUILD_REPORT=OFF \
       -DLEANCHAN_BUILD_EXAMPLES=OFF >"$out_dir/cmake-configure.log" 2>&1 &&
     cmake --build "$build_dir" -j "$jobs" --target "${targets[@]}" >"$out_dir/cmake-build.log" 2>&1; then
    [ -z "$proxy_bin" ] && proxy_bin="$build_dir/proxy/leanchan-proxy"
    [ -z "$backend_bin" ] && backend_bin="$build_dir/proxy/leanchan-proxy-backend"
  else
    cpp_why="C++ build failed (see $out_dir/cmake-configure.log, cmake-build.log)"
    log "$cpp_why"
  fi
fi
if [ -z "$backend_bin" ] || [ ! -x "$backend_bin" ]; then
  log "no leanchan-proxy-backend (${cpp_why:-${backend_bin:-not built}}); --backend-bin=PATH names one"
  exit 1
fi
if ((need_cpp)); then
  if [ -z "$proxy_bin" ] || [ ! -x "$proxy_bin" ]; then
    why=${cpp_why:-"no executable leanchan-proxy at '${proxy_bin}'"}
    for c in leanchan tokio-style asio; do wants "$c" && skip "$c: $why"; done
    proxy_bin=""
  fi
fi

# The hyper anchor: offline, from Debian's crate sources, as
# scripts/peers.sh builds the Rust peers.
if wants hyper && [ -z "$hyper_bin" ]; then
  if ensure hyper cargo rustc librust-hyper-dev librust-tokio-dev; then
    cargo_bin=/usr/bin/cargo; [ -x "$cargo_bin" ] || cargo_bin=$(command -v cargo || true)
    rustc_bin=/usr/bin/rustc; [ -x "$rustc_bin" ] || rustc_bin=$(command -v rustc || true)
    if [ -z "$cargo_bin" ] || [ -z "$rustc_bin" ]; then
      skip "hyper: cargo or rustc not found"
    else
      log "building leanchan-proxy-hyper (offline, /usr/share/cargo/registry)"
      rm -rf "$build_dir/hyper-src"
      cp -r "$root/proxy/hyper" "$build_dir/hyper-src"
      cargo_offline_home "$build_dir/cargo-home"
      if (cd "$build_dir/hyper-src" && env -u RUSTFLAGS -u CARGO_ENCODED_RUSTFLAGS \
            CARGO_HOME="$build_dir/cargo-home" RUSTC="$rustc_bin" \
            CARGO_TARGET_DIR="$build_dir/hyper-target" "$cargo_bin" build --release --offline \
            -j "$jobs") >"$out_dir/cargo-build.log" 2>&1; then
        hyper_bin="$build_dir/hyper-target/release/leanchan-proxy-hyper"
      else
        skip "hyper: cargo build failed (see $out_dir/cargo-build.log: $(grep -m1 -E '^error' "$out_dir/cargo-build.log"))"
      fi
    fi
  else
    skip "hyper: $ensure_why"
  fi
fi
if wants hyper && [ -n "$hyper_bin" ] && [ ! -x "$hyper_bin" ]; then
  skip "hyper: no executable at '$hyper_bin'"; hyper_bin=""
fi

rows=()
for c in "${channels[@]}"; do
  case "$c" in
    hyper) [ -n "$hyper_bin" ] && rows+=("$c") ;;
    *) [ -n "$proxy_bin" ] && rows+=("$c") ;;
  esac
done
if ((${#rows[@]} == 0)); then
  log "no proxy to measure"
  exit 1
fi

# ---------------------------------------------------------------- run
# Thousands of sockets: the proxy, the holder and wrk inherit this limit.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
needed=$((idle + connections + 256))
if (($(ulimit -n) < needed)); then
  log "open-file limit $(ulimit -n) is below the $needed the run needs (raise it: ulimit -Hn)"
  exit 1
fi

# wait_line FILE PATTERN SECONDS PID: waits until FILE has a line matching
# PATTERN (printed), or PID ended, or the time is up.
wait_line() {
  local file=$1 pattern=$2 limit=$3 pid=$4 t=0 line
  while ((t < limit * 10)); do
    line=$(grep -m1 -E "$pattern" "$file" 2>/dev/null) && { echo "$line"; return 0; }
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1; t=$((t + 1))
  done
  return 1
}

log "starting the backend: $backend_bin"
"$backend_bin" --endpoints=2 --threads="$backend_threads" >"$out_dir/backend.out" 2>"$out_dir/backend.err" &
backend_pid=$!
children+=("$backend_pid")
ready=$(wait_line "$out_dir/backend.out" '^ready ports=' 30 "$backend_pid") || {
  log "the backend did not print 'ready ports=' (see $out_dir/backend.err)"; exit 1; }
backends=""
IFS=, read -r -a ports <<<"${ready#ready ports=}"
for p in "${ports[@]}"; do backends+="${backends:+,}127.0.0.1:$p"; done
log "backend ready: $backends"

runs="$out_dir/runs.jsonl"
: >"$runs"
failed_runs=0

# run_one CHANNEL REP: one measured run, a JSON line appended to $runs.
run_one() {
  local channel=$1 rep=$2 bin args tag
  tag="$channel-rep$rep"
  if [ "$channel" = hyper ]; then bin=$hyper_bin; else bin=$proxy_bin; fi
  args=(--listen=127.0.0.1:0 --backends="$backends" --services="$services" --channel="$channel")
  [ -n "$proxy_threads" ] && args+=(--threads="$proxy_threads")
  log "[$tag] start: $bin ${args[*]}"
  "$bin" "${args[@]}" >"$out_dir/$tag.proxy.out" 2>"$out_dir/$tag.proxy.err" &
  local pid=$!
  children+=("$pid")
  local ready port
  ready=$(wait_line "$out_dir/$tag.proxy.out" '^ready port=' 120 "$pid") || {
    log "[$tag] no 'ready port=' (see $out_dir/$tag.proxy.err)"; kill -TERM "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null; forget "$pid"; return 1; }
  port=${ready#ready port=}

  local start_json idle_json rss_start rss_idle
  start_json=$(python3 "$tool" stats "$port") || { log "[$tag] /admin/stats failed"; end "$pid"; return 1; }
  rss_start=$(python3 "$tool" proc "$pid" | sed 's/rss_bytes=\([0-9]*\).*/\1/')

  local holder="" held="held 0 failed 0"
  if ((idle > 0)); then
    log "[$tag] opening $idle idle connections"
    python3 "$tool" hold "$port" "$idle" "$services" >"$out_dir/$tag.hold.out" 2>"$out_dir/$tag.hold.err" &
    holder=$!
    children+=("$holder")
    held=$(wait_line "$out_dir/$tag.hold.out" '^held ' 300 "$holder") || {
      log "[$tag] the idle holder failed (see $out_dir/$tag.hold.err)"; end "$holder" "$pid"; return 1; }
    log "[$tag] $held idle connections"
  fi
  idle_json=$(python3 "$tool" stats "$port") || {
    log "[$tag] /admin/stats failed"; end "$holder" "$pid"; return 1; }
  rss_idle=$(python3 "$tool" proc "$pid" | sed 's/rss_bytes=\([0-9]*\).*/\1/')

  log "[$tag] wrk --latency -t$wrk_threads -c$connections -d$duration"
  python3 "$tool" sample "$pid" "$out_dir/$tag.rss.csv" &
  local sampler=$!
  children+=("$sampler")
  local cpu_before cpu_after
  cpu_before=$(python3 "$tool" proc "$pid" | sed 's/.*cpu_us=//')
  PROXY_LOAD_SERVICES=$services wrk --latency -t"$wrk_threads" -c"$connections" -d"$duration" \
    -s "$lua" "http://127.0.0.1:$port" >"$out_dir/$tag.wrk.out" 2>&1
  cpu_after=$(python3 "$tool" proc "$pid" | sed 's/.*cpu_us=//')
  kill -TERM "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null; forget "$sampler"
  sleep 1
  local rss_after
  rss_after=$(python3 "$tool" proc "$pid" | sed 's/rss_bytes=\([0-9]*\).*/\1/')
  local result
  result=$(grep -m1 '^wrk_result ' "$out_dir/$tag.wrk.out") || {
    log "[$tag] wrk printed no result (see $out_dir/$tag.wrk.out)"; }

  if [ -n "$holder" ]; then
    kill -TERM "$holder" 2>/dev/null; wait "$holder" 2>/dev/null; forget "$holder"
  fi
  kill -TERM "$pid" 2>/dev/null
  local exit_code=0 t=0
  while kill -0 "$pid" 2>/dev/null && ((t < 100)); do sleep 0.1; t=$((t + 1)); done
  if kill -0 "$pid" 2>/dev/null; then
    log "[$tag] still running 10 s after SIGTERM: killed"
    kill -KILL "$pid" 2>/dev/null; exit_code=137
    wait "$pid" 2>/dev/null
  else
    wait "$pid"; exit_code=$?
  fi
  forget "$pid"
  ((exit_code == 0)) || log "[$tag] exit status $exit_code after SIGTERM (expected 0)"
  [ -n "$result" ] || return 1

  python3 - "$channel" "$rep" "$held" "$start_json" "$idle_json" "$rss_start" "$rss_idle" "$rss_after" \
    "$cpu_before" "$cpu_after" "$out_dir/$tag.rss.csv" "$exit_code" "$result" >>"$runs" <<'EOF'
import json, sys
(channel, rep, held, start, idle_stats, rss_start, rss_idle, rss_after, cpu_before, cpu_after,
 csv, exit_code, result) = sys.argv[1:]
idle, idle_failed = int(held.split()[1]), int(held.split()[3])
start, idle_stats = json.loads(start), json.loads(idle_stats)
w = dict(kv.split("=") for kv in result.split()[1:])
requests = int(w["requests"])
peak = int(rss_idle)
with open(csv) as f:
    next(f)
    for line in f:
        peak = max(peak, int(line.split(",")[1]))
run = {
    "channel": channel, "rep": int(rep), "requests": requests,
    "rps": requests / (int(w["duration_us"]) / 1e6),
    "p50_us": int(w["p50_us"]), "p99_us": int(w["p99_us"]),
    "non2xx": int(w["non2xx"]), "socket_errors": int(w["socket_errors"]),
    "cpu_us_per_req": (int(cpu_after) - int(cpu_before)) / max(requests, 1),
    "rss_start": int(rss_start), "rss_idle": int(rss_idle), "rss_peak": peak, "rss_after": int(rss_after),
    "heap_idle_start": start["heap_requested_bytes"], "heap_idle_held": idle_stats["heap_requested_bytes"],
    "heap_per_idle_conn": (idle_stats["heap_requested_bytes"] - start["heap_requested_bytes"]) / idle if idle else 0,
    "rss_per_idle_conn": (int(rss_idle) - int(rss_start)) / idle if idle else 0,
    "heap_per_service": start["heap_per_service"],
    "idle_held": idle, "idle_failed": idle_failed, "connections_open": idle_stats["connections"],
    "exit_code": int(exit_code), "rss_csv": csv,
}
print(json.dumps(run))
EOF
  log "[$tag] $(tail -n1 "$runs")"
}

for ((rep = 1; rep <= reps; rep++)); do
  for c in "${rows[@]}"; do
    run_one "$c" "$rep" || { failed_runs=$((failed_runs + 1)); log "[$c-rep$rep] failed"; }
  done
done

cleanup

echo "# proxy load: $services services, $idle idle connections, wrk -t$wrk_threads -c$connections -d$duration, $reps repetition(s)"
echo
for s in "${skipped[@]}"; do echo "skipped $s"; done
((${#skipped[@]} > 0)) && echo
python3 "$tool" summarize "$runs" "$out_dir" "$(IFS=,; echo "${rows[*]}")" || exit 1
((failed_runs == 0)) || { log "$failed_runs run(s) failed (logs in $out_dir)"; exit 1; }
# Every row clean: no answer but 2xx, no socket error, every idle
# connection held, exit 0 after SIGTERM.
python3 - "$runs" <<'EOF' || { log "a row was not clean (above; logs in $out_dir)"; exit 1; }
import json, sys
bad = 0
for line in open(sys.argv[1]):
    run = json.loads(line)
    if run["non2xx"] or run["socket_errors"] or run["idle_failed"] or run["exit_code"]:
        bad += 1
        print(f"proxy_load.sh: [{run['channel']}-rep{run['rep']}] non2xx={run['non2xx']} "
              f"socket_errors={run['socket_errors']} idle_failed={run['idle_failed']} "
              f"exit={run['exit_code']}", file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
