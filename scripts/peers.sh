#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# leanchan against the channels people use (docs/peers.md): C++ (leanchan,
# the Tokio-style baseline, moodycamel, oneTBB), Rust (crossbeam-channel, flume,
# async-channel, Tokio mpsc) and Go (buffered chan), on identical workloads,
# one configuration per process. Prints Markdown tables of messages/s, CPU
# time per message (cpu_ns_per_msg) and ratios on stdout, progress on
# stderr. Then the same workload with every party a task on two threads
# (leanchan's coroutines on ThreadPoolExecutor(2), leanchan::asio and Asio's
# concurrent_channel on an io_context run by two threads, Tokio tasks on 2
# workers, goroutines with GOMAXPROCS=2): a table of its own. Called by
# `scripts/compare.sh --peers`.
#
#   scripts/peers.sh                            # full grid, REPS=5
#   REPS=3 scripts/peers.sh > table.md
#   PEERS_SIZES=24 PEERS_PRODUCERS=1 PEERS_CAPACITIES="1 1024" PEERS_MESSAGES=65536 REPS=1 scripts/peers.sh
#
# Environment: REPS (5), PEERS_SIZES ("8 24 128 1024"), PEERS_PRODUCERS
# ("1 2 4"), PEERS_CAPACITIES ("1 16 1024"), PEERS_MESSAGES (unset: chosen
# per row so that a run takes ~PEERS_TARGET_MS, 150, for the median design
# and at most PEERS_MAX_MS, 1500, for the slowest), PEERS_PINGPONG (unset:
# round trips chosen as for a throughput row, at least 100000; a number fixes
# them; 0 skips ping-pong), PEERS_SINGLE_MESSAGES (1048576, the
# floor's single-thread runs), PEERS_DESIGNS (all), PEERS_TIMEOUT
# (120 s per run), PEERS_BUILD_DIR (build-peers; also --build-dir=DIR),
# PEERS_NO_INSTALL=1 (never call apt-get), PEERS_JOBS (build jobs, nproc),
# PEERS_CARGO / PEERS_RUSTC (Rust toolchain; Debian's /usr/bin ones first).
# PEERS_GRID (1; 0 skips the OS-thread grid and its tables, for the task
# table alone). The task table: PEERS_TASKS (1; 0 skips it),
# PEERS_TASK_DESIGNS (all: leanchan-coro leanchan-asio asio-channel tokio
# go-2), PEERS_TASK_SIZES ("24"), PEERS_TASK_PRODUCERS ("1 4"),
# PEERS_TASK_CAPACITIES ("1 16"); ping-pong as PEERS_PINGPONG says.
#   PEERS_GRID=0 REPS=3 scripts/peers.sh        # the task table alone
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$(pwd)

build_dir="${PEERS_BUILD_DIR:-$root/build-peers}"
for arg in "$@"; do
  case "$arg" in
    --build-dir=*) build_dir="${arg#--build-dir=}" ;;
    -h | --help) sed -n '3,/^[^#]/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "peers.sh: unknown argument '$arg'" >&2; exit 2 ;;
  esac
done
mkdir -p "$build_dir" || { echo "peers.sh: cannot create $build_dir" >&2; exit 1; }
build_dir=$(cd "$build_dir" && pwd)

reps="${REPS:-5}"
sizes="${PEERS_SIZES:-8 24 128 1024}"
producer_counts="${PEERS_PRODUCERS:-1 2 4}"
capacities="${PEERS_CAPACITIES:-1 16 1024}"
fixed_messages="${PEERS_MESSAGES:-}"
single_messages="${PEERS_SINGLE_MESSAGES:-1048576}"
target_ms="${PEERS_TARGET_MS:-150}"
max_ms="${PEERS_MAX_MS:-1500}"
pingpong_fixed="${PEERS_PINGPONG:-}"
# 1: run the ping-pong (round trips calibrated unless PEERS_PINGPONG fixes them); 0: skip it.
pingpong=1
[ "${PEERS_PINGPONG:-}" = 0 ] && pingpong=0
run_timeout="${PEERS_TIMEOUT:-120}"
jobs="${PEERS_JOBS:-$(nproc)}"
grid="${PEERS_GRID:-1}"
tasks="${PEERS_TASKS:-1}"
task_sizes="${PEERS_TASK_SIZES:-24}"
task_producer_counts="${PEERS_TASK_PRODUCERS:-1 4}"
task_capacities="${PEERS_TASK_CAPACITIES:-1 16}"
sizes=${sizes//,/ }; producer_counts=${producer_counts//,/ }; capacities=${capacities//,/ }
task_sizes=${task_sizes//,/ }; task_producer_counts=${task_producer_counts//,/ }
task_capacities=${task_capacities//,/ }
for v in "$reps" $sizes $producer_counts $capacities $fixed_messages "$single_messages" "$target_ms" "$max_ms" \
         ${pingpong_fixed:+"$pingpong_fixed"} "$run_timeout" "$jobs" "$grid" "$tasks" $task_sizes $task_producer_counts $task_capacities; do
  [[ "$v" =~ ^[0-9]+$ ]] || { echo "peers.sh: '$v' is not a number (check REPS / PEERS_*)" >&2; exit 2; }
done
((reps >= 1)) || { echo "peers.sh: REPS must be at least 1" >&2; exit 2; }

log() { echo "peers.sh: $*" >&2; }
skipped=()  # "design: why", printed above the table
skip() { skipped+=("$1"); log "skipping $1"; }

# ---------------------------------------------------------------- install
ensure_log_dir=$build_dir
ensure_no_install=""
[ -n "${PEERS_NO_INSTALL:-}" ] && ensure_no_install="PEERS_NO_INSTALL set"
# shellcheck source=lib/ensure.sh
source "$root/scripts/lib/ensure.sh"
# shellcheck source=lib/cargo_offline.sh
source "$root/scripts/lib/cargo_offline.sh"

# ---------------------------------------------------------------- build
# C++ (required: leanchan is what is measured).
# PEERS_NO_INSTALL=1 means no apt-get at all: setup.sh's own packages too.
if [ -n "${PEERS_NO_INSTALL:-}" ]; then export LEANCHAN_NO_INSTALL=1; fi
scripts/setup.sh >&2 || { log "scripts/setup.sh failed"; exit 1; }
have_moodycamel=1
ensure cpp-peers libconcurrentqueue-dev || have_moodycamel=0
have_onetbb=1
ensure cpp-peers libtbb-dev || have_onetbb=0
log "building leanchan-peer-bench (C++) in $build_dir"
if ! cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DLEANCHAN_BUILD_TESTS=OFF \
       -DLEANCHAN_BUILD_REPORT=OFF -DLEANCHAN_BUILD_EXAMPLES=OFF >"$build_dir/cmake-configure.log" 2>&1 ||
   ! cmake --build "$build_dir" -j "$jobs" --target leanchan_peer_bench \
       >"$build_dir/cmake-build.log" 2>&1; then
  log "C++ build failed (see $build_dir/cmake-configure.log, cmake-build.log)"
  exit 1
fi
cpp_bin="$build_dir/benchmarks/leanchan-peer-bench"
if ((have_moodycamel)) && ! grep -q "LEANCHAN_HAVE_MOODYCAMEL" "$build_dir/benchmarks/CMakeFiles/leanchan_peer_bench.dir/flags.make" 2>/dev/null; then
  have_moodycamel=0
fi
if ((have_onetbb)) && ! grep -q "LEANCHAN_HAVE_TBB" "$build_dir/benchmarks/CMakeFiles/leanchan_peer_bench.dir/flags.make" 2>/dev/null; then
  have_onetbb=0
fi

# Rust: crossbeam-channel, Tokio (and libc, for getrusage) from Debian's
# crate sources, offline; flume and async-channel are Cargo features, built
# when their Debian crates install, skipped with the reason otherwise.
# Profile (benchmarks/peers/rust/Cargo.toml): opt-level 3, thin LTO, one
# codegen unit, as Rust users build a release.
rust_bin=""
rust_why=""
rust_features=()
rust_optional=()  # the optional Rust peers this build has
if ensure rust-peers cargo rustc librust-crossbeam-channel-dev librust-tokio-dev librust-libc-dev; then
  cargo_bin=${PEERS_CARGO:-/usr/bin/cargo}
  [ -x "$cargo_bin" ] || cargo_bin=$(command -v cargo || true)
  for pair in flume:librust-flume-dev async-channel:librust-async-channel-dev; do
    peer=${pair%%:*}; package=${pair#*:}
    if ensure "rust-$peer" "$package"; then
      rust_features+=("$peer"); rust_optional+=("$peer")
    else
      skip "$peer: $ensure_why"
    fi
  done
  if [ -z "$cargo_bin" ]; then
    rust_why="cargo not found"
  else
    log "building the Rust peers (offline, /usr/share/cargo/registry${rust_features[*]:+, features ${rust_features[*]}})"
    rm -rf "$build_dir/rust-src"
    cp -r "$root/benchmarks/peers/rust" "$build_dir/rust-src"
    cargo_offline_home "$build_dir/cargo-home"
    rustc_bin=${PEERS_RUSTC:-/usr/bin/rustc}
    [ -x "$rustc_bin" ] || rustc_bin=$(command -v rustc || true)
    feature_args=()
    ((${#rust_features[@]} > 0)) && feature_args=(--features "$(IFS=,; echo "${rust_features[*]}")")
    # The caller's RUSTFLAGS would change the build flags of one peer
    # language only (docs/peers.md): unset for the build.
    if (cd "$build_dir/rust-src" && env -u RUSTFLAGS -u CARGO_ENCODED_RUSTFLAGS \
          CARGO_HOME="$build_dir/cargo-home" RUSTC="$rustc_bin" \
          CARGO_TARGET_DIR="$build_dir/rust-target" "$cargo_bin" build --release --offline \
          -j "$jobs" "${feature_args[@]}") >"$build_dir/cargo-build.log" 2>&1; then
      rust_bin="$build_dir/rust-target/release/peer-bench-rust"
    else
      rust_why="cargo build failed (see $build_dir/cargo-build.log: $(grep -m1 -E '^error' "$build_dir/cargo-build.log"))"
    fi
  fi
else
  rust_why="could not install cargo/rustc/librust-crossbeam-channel-dev/librust-tokio-dev/librust-libc-dev"
fi
if [ -n "$rust_why" ]; then
  skip "crossbeam: $rust_why"; skip "tokio: $rust_why"
  for peer in "${rust_optional[@]}"; do skip "$peer: $rust_why"; done
  rust_optional=()
fi
has_rust_peer() { local q; for q in crossbeam tokio "${rust_optional[@]}"; do [ "$q" = "$1" ] && return 0; done; return 1; }

# Go: one file, no modules.
go_bin=""
if ensure go-peer golang-go; then
  go_cmd=$(command -v go || echo /usr/lib/go/bin/go)
  log "building the Go peer"
  mkdir -p "$build_dir/go-cache" "$build_dir/go-path"
  if GO111MODULE=off GOFLAGS="" GOCACHE="$build_dir/go-cache" GOPATH="$build_dir/go-path" \
       "$go_cmd" build -o "$build_dir/peer-bench-go" "$root/benchmarks/peers/go/main.go" \
       >"$build_dir/go-build.log" 2>&1; then
    go_bin="$build_dir/peer-bench-go"
  else
    skip "go: go build failed (see $build_dir/go-build.log)"
  fi
else
  skip "go: could not install golang-go"
fi
((have_moodycamel)) || skip "moodycamel: libconcurrentqueue-dev not installed or not found by CMake"
((have_onetbb)) || skip "onetbb: libtbb-dev not installed or not found by CMake"

# ---------------------------------------------------------------- designs
all_designs=(leanchan-b1 leanchan-b8 leanchan-b32 tokio-style tokio-style-park moodycamel onetbb crossbeam flume async-channel tokio go)
designs=()
for d in ${PEERS_DESIGNS:-${all_designs[*]}}; do
  case "$d" in
    leanchan-b1 | leanchan-b8 | leanchan-b32 | tokio-style | tokio-style-park) designs+=("$d") ;;
    moodycamel) ((have_moodycamel)) && designs+=("$d") ;;
    onetbb) ((have_onetbb)) && designs+=("$d") ;;
    crossbeam | tokio | flume | async-channel) [ -n "$rust_bin" ] && has_rust_peer "$d" && designs+=("$d") ;;
    go) [ -n "$go_bin" ] && designs+=("$d") ;;
    *) echo "peers.sh: unknown design '$d' in PEERS_DESIGNS" >&2; exit 2 ;;
  esac
done
binary_of() {
  case "$1" in
    crossbeam | tokio | flume | async-channel) echo "$rust_bin" ;;
    go | go-2) echo "$go_bin" ;;
    *) echo "$cpp_bin" ;;
  esac
}
is_leanchan() { [[ "$1" == leanchan-* ]]; }

# The task table's designs: leanchan-coro (always built), leanchan-asio and
# asio-channel (when the C++ runner has Asio), tokio, go-2.
task_designs=()
have_cpp_asio=0
"$cpp_bin" --help 2>/dev/null | grep -q "leanchan-asio" && have_cpp_asio=1
if ((tasks > 0)); then
  ((have_cpp_asio)) || skip "leanchan-asio, asio-channel: the C++ runner was built without Asio (libasio-dev)"
  for d in ${PEERS_TASK_DESIGNS:-leanchan-coro leanchan-asio asio-channel tokio go-2}; do
    case "$d" in
      leanchan-coro) task_designs+=("$d") ;;
      leanchan-asio | asio-channel) ((have_cpp_asio)) && task_designs+=("$d") ;;
      tokio) [ -n "$rust_bin" ] && task_designs+=("$d") ;;
      go-2) [ -n "$go_bin" ] && task_designs+=("$d") ;;
      *) echo "peers.sh: unknown design '$d' in PEERS_TASK_DESIGNS" >&2; exit 2 ;;
    esac
  done
fi
task_peers=()
task_bases=()
for d in "${task_designs[@]}"; do
  if is_leanchan "$d"; then task_bases+=("$d"); else task_peers+=("$d"); fi
done
peers=()
for d in "${designs[@]}"; do is_leanchan "$d" || peers+=("$d"); done
bases=()
for b in leanchan-b8 leanchan-b32; do
  for d in "${designs[@]}"; do [ "$d" = "$b" ] && bases+=("$b"); done
done

# run_one DESIGN ARGS...: prints the output line; empty on failure (logged,
# and counted in $build_dir/failures: run_one runs in a subshell).
: >"$build_dir/failures"
run_one() {
  local design=$1; shift
  local out err rc why
  err="$build_dir/last-run.err"
  out=$(timeout "$run_timeout" "$(binary_of "$design")" --design="$design" "$@" 2>"$err")
  rc=$?
  if ((rc != 0)); then
    why="exit $rc"
    ((rc == 124)) && why="timed out after ${run_timeout}s"
    echo "$design $*: $why" >>"$build_dir/failures"
    log "FAILED ($why): $design $*: $(head -c 300 "$err")"
    return 0
  fi
  echo "$out"
}
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {if (NR==0) print ""; else if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
# The largest sample over the smallest (empty below two samples): how far
# apart the runs of one configuration lie (for rates and times alike).
max_over_min() { printf '%s\n' "$@" | grep -v '^$' | sort -g | awk '{v[NR]=$1} END {if (NR >= 2 && v[1] > 0) printf "%.2f", v[NR] / v[1]}'; }
# Largest multiple of `unit` <= value, at least `unit`.
round_to() { awk -v v="$1" -v u="$2" 'BEGIN {n = int(v / u) * u; if (n < u) n = u; printf "%d", n}'; }

# ---------------------------------------------------------------- grid
rows=()
if ((grid > 0)); then
  for s in $sizes; do for p in $producer_counts; do for c in $capacities; do rows+=("$s $p $c"); done; done; done
fi
task_rows=()
if ((${#task_designs[@]} > 0)); then
  for s in $task_sizes; do
    for p in $task_producer_counts; do for c in $task_capacities; do task_rows+=("$s $p $c"); done; done
  done
fi
total_rows=$((${#rows[@]} + ${#task_rows[@]}))
((pingpong > 0 && grid > 0)) && total_rows=$((total_rows + 1))
# The floor's single-thread rows: one per size, for the leanchan bases,
# when the grid has capacity-1024 rows to set them against.
single_sizes=()
if ((grid > 0 && ${#bases[@]} > 0)) && [[ " $capacities " == *" 1024 "* ]]; then
  read -r -a single_sizes <<<"$sizes"
fi
total_rows=$((total_rows + ${#single_sizes[@]}))
((pingpong > 0 && ${#task_designs[@]} > 0)) && total_rows=$((total_rows + 1))
# The floor under every figure: one cache line moved between the two
# threads' cores (on a VM this moves with where they land; measured before
# and after the grid, printed above the table).
handoff_ns() {
  "$cpp_bin" --handoff --messages=4000000 2>/dev/null | sed -n 's/.*one_way_ns=\([0-9.]*\).*/\1/p'
}
handoff_before=$(handoff_ns)
start_time=$(date +%s)
row_index=0
progress() {
  local now elapsed eta
  now=$(date +%s); elapsed=$((now - start_time))
  if ((row_index > 0)); then eta=$((elapsed * (total_rows - row_index) / row_index)); else eta="?"; fi
  log "[row $((row_index + 1))/$total_rows, $((total_rows - row_index - 1)) left after it, ${elapsed}s elapsed, ~${eta}s left] $*"
}

declare -A result  # "row|design" -> median msgs/s (or ns per round trip)
declare -A cpu     # "row|design" -> median CPU ns per message (or per round trip)
declare -A row_messages
declare -A spread  # "row|design" -> the slowest run's time over the fastest's

# messages_for DESIGNS_VAR S P C: the messages per run of a throughput row
# for the designs of the array named DESIGNS_VAR: PEERS_MESSAGES, or a
# calibration (one short run of each design; N such that the median design
# takes ~target_ms and the slowest at most max_ms); N/P a multiple of 32
# (moodycamel, docs/peers.md).
# calibration_samples DESIGNS_VAR FIELD ARGS...: one run of every design
# of the array named DESIGNS_VAR with ARGS; prints FIELD of each run that
# succeeded, one a line.
calibration_samples() {
  local -n c_designs=$1
  local field_name=$2 d line
  shift 2
  for d in "${c_designs[@]}"; do
    line=$(run_one "$d" "$@")
    [ -n "$line" ] && field "$field_name" "$line"
  done
}

messages_for() {
  local s=$2 p=$3 c=$4 unit=$((32 * $3)) n n0 med min
  if [ -n "$fixed_messages" ]; then
    round_to "$fixed_messages" "$unit"
    return
  fi
  progress "size=$s producers=$p capacity=$c: calibrating"
  n0=$(round_to 8192 "$unit")
  local rates=()
  mapfile -t rates < <(calibration_samples "$1" msgs_per_sec --producers="$p" --capacity="$c" \
                         --size="$s" --messages="$n0")
  if ((${#rates[@]} == 0)); then
    echo "$n0"
    return
  fi
  med=$(median "${rates[@]}")
  min=$(printf '%s\n' "${rates[@]}" | sort -g | head -1)
  n=$(awk -v med="$med" -v min="$min" -v t="$target_ms" -v m="$max_ms" \
        'BEGIN {n = med * t / 1000; cap = min * m / 1000; if (n > cap) n = cap; if (n < 4096) n = 4096; if (n > 50000000) n = 50000000; printf "%d", n}')
  round_to "$n" "$unit"
}

# measure KEY VALUE_FIELD CPU_FIELD DESIGNS_VAR ARGS...: every design of the
# array named DESIGNS_VAR run REPS times with ARGS, repetitions interleaved
# (the starting design rotates per repetition); the medians of the two
# fields go to result["KEY|design"] and cpu["KEY|design"].
measure() {
  local key=$1 value_field=$2 cpu_field=$3
  local -n m_designs=$4
  shift 4
  declare -A samples=() cpu_samples=()
  local r k d line count=${#m_designs[@]}
  for ((r = 0; r < reps; r++)); do
    for ((k = 0; k < count; k++)); do
      d=${m_designs[$(((k + r) % count))]}
      line=$(run_one "$d" "$@")
      if [ -n "$line" ]; then
        samples["$d"]+="$(field "$value_field" "$line") "
        cpu_samples["$d"]+="$(field "$cpu_field" "$line") "
      fi
    done
  done
  for d in "${m_designs[@]}"; do
    # shellcheck disable=SC2086
    result["$key|$d"]=$(median ${samples[$d]:-})
    # shellcheck disable=SC2086
    cpu["$key|$d"]=$(median ${cpu_samples[$d]:-})
    # shellcheck disable=SC2086
    spread["$key|$d"]=$(max_over_min ${samples[$d]:-})
  done
}

# throughput_rows DESIGNS_VAR KEY_PREFIX ROW...: each row "S P C" measured.
throughput_rows() {
  local designs_var=$1 prefix=$2 row s p c n
  local -n t_designs=$1
  shift 2
  for row in "$@"; do
    read -r s p c <<<"$row"
    n=$(messages_for "$designs_var" "$s" "$p" "$c")
    row_messages["$prefix$row"]=$n
    progress "size=$s producers=$p capacity=$c: $n messages x ${#t_designs[@]} designs x $reps reps"
    measure "$prefix$row" msgs_per_sec cpu_ns_per_msg "$designs_var" \
      --producers="$p" --capacity="$c" --size="$s" --messages="$n"
    row_index=$((row_index + 1))
  done
}

# pingpong_trips DESIGNS_VAR: the round trips per ping-pong run:
# PEERS_PINGPONG, or a calibration as messages_for's (one run of 20000
# round trips per design; the median design then takes ~target_ms and the
# slowest at most max_ms; never fewer than 100000). A short run is decided
# by where the scheduler happens to put the two threads for its few
# milliseconds: on a VM its round trip can change fivefold from one run to
# the next.
pingpong_trips() {
  local med max n0=20000 least=100000
  if [ -n "$pingpong_fixed" ]; then
    echo "$pingpong_fixed"
    return
  fi
  progress "ping-pong, size 24: calibrating"
  local times=()
  mapfile -t times < <(calibration_samples "$1" ns_per_roundtrip --pingpong --size=24 --messages="$n0")
  if ((${#times[@]} == 0)); then
    echo "$least"
    return
  fi
  med=$(median "${times[@]}")
  max=$(printf '%s\n' "${times[@]}" | sort -g | tail -1)
  awk -v med="$med" -v max="$max" -v t="$target_ms" -v m="$max_ms" -v least="$least" \
    'BEGIN {n = t * 1e6 / med; cap = m * 1e6 / max; if (n > cap) n = cap; if (n < least) n = least; if (n > 5000000) n = 5000000; printf "%d", n}'
}

# pingpong_row DESIGNS_VAR KEY: ping-pong at 24 bytes (round trips:
# pingpong_trips, kept in row_messages[KEY]).
pingpong_row() {
  local -n p_designs=$1
  local n
  n=$(pingpong_trips "$1")
  row_messages["$2"]=$n
  progress "ping-pong, size 24, $n round trips x ${#p_designs[@]} designs x $reps reps"
  measure "$2" ns_per_roundtrip cpu_ns_per_roundtrip "$1" --pingpong --size=24 --messages="$n"
  row_index=$((row_index + 1))
}

# single_rows: each leanchan base alone on one thread, capacity 1024, per
# size (leanchan-peer-bench --single): its own cost per message, the part
# of the floor no cache line explains.
single_rows() {
  local s
  for s in "${single_sizes[@]}"; do
    progress "single thread, size $s, capacity 1024: $single_messages messages x ${#bases[@]} designs x $reps reps"
    measure "single|$s" ns_per_msg cpu_ns_per_msg bases --single --capacity=1024 --size="$s" \
      --messages="$single_messages"
    row_index=$((row_index + 1))
  done
}

throughput_rows designs "" "${rows[@]}"
((pingpong > 0 && grid > 0)) && pingpong_row designs pingpong
single_rows
if ((${#task_designs[@]} > 0)); then
  throughput_rows task_designs "tasks|" "${task_rows[@]}"
  ((pingpong > 0)) && pingpong_row task_designs "tasks|pingpong"
fi
handoff_after=$(handoff_ns)
failures=$(wc -l <"$build_dir/failures")
log "done in $(($(date +%s) - start_time))s, $failures failed run(s)"

# ---------------------------------------------------------------- table
version() { "$@" 2>/dev/null | head -1; }
echo "# leanchan against its peers: $(date -u +%Y-%m-%d)"
echo
echo "- machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $(uname -sr), load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- C++: $(version c++ --version), -O3 (Release); moodycamel: $(dpkg-query -W -f='${Version}' libconcurrentqueue-dev 2>/dev/null || echo none); oneTBB: $(dpkg-query -W -f='${Version}' libtbb-dev 2>/dev/null || echo none)"
if [ -n "$rust_bin" ]; then
  rust_versions="crossbeam-channel $(dpkg-query -W -f='${Version}' librust-crossbeam-channel-dev 2>/dev/null)"
  for peer in "${rust_optional[@]}"; do
    rust_versions+=", $peer $(dpkg-query -W -f='${Version}' "librust-$peer-dev" 2>/dev/null)"
  done
  echo "- Rust: $(version "${rustc_bin:-rustc}" --version), $(version "$cargo_bin" --version), release profile opt-level 3, thin LTO, codegen-units 1; $rust_versions, tokio $(dpkg-query -W -f='${Version}' librust-tokio-dev 2>/dev/null) (2 worker threads)"
fi
[ -n "$go_bin" ] && echo "- Go: $(version "$go_cmd" version), GOMAXPROCS default (go-2: GOMAXPROCS=2)"
echo "- one cache line moved between the two threads (leanchan-peer-bench --handoff): ${handoff_before:-?} ns one way before the runs, ${handoff_after:-?} ns after"
echo "- median of $reps interleaved runs, one process per run; messages per run chosen per row (column N)${fixed_messages:+ (fixed: PEERS_MESSAGES=$fixed_messages)}"
for line in "${skipped[@]}"; do echo "- skipped $line"; done
((failures > 0)) && echo "- $failures run(s) failed (see stderr); their cells are the median of the rest or 'fail'"
echo
fmt_rate() { [ -n "$1" ] && awk -v v="$1" 'BEGIN {printf "%.2f", v / 1e6}' || echo "fail"; }
fmt_cpu() { [ -n "$1" ] && awk -v v="$1" 'BEGIN {printf "%.0f", v}' || echo "-"; }
fmt_ratio() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "-"}' || echo "-"; }
# Prints one throughput table: the header, a row per configuration (each
# design's rate and CPU time, then each base's ratio to each peer) and the
# ratios' geometric means. $1: the prefix of the configurations' keys in
# result, cpu and row_messages ("" for the OS-thread grid, "tasks|" for the
# task table); $2 to $5: the names of the arrays of rows, designs, bases
# and peers.
throughput_table() {
  local prefix=$1
  local -n t_rows=$2 t_designs=$3 t_bases=$4 t_peers=$5
  local header="| size | P | cap | N |" rule="|---:|---:|---:|---:|"
  local line row key s p c d b q a o
  local -A logsum=() logcount=()
  for d in "${t_designs[@]}"; do header+=" $d | $d cpu_ns_per_msg |"; rule+="---:|---:|"; done
  for b in "${t_bases[@]}"; do for q in "${t_peers[@]}"; do header+=" ${b#leanchan-}/$q |"; rule+="---:|"; done; done
  echo "$header"
  echo "$rule"
  for row in "${t_rows[@]}"; do
    read -r s p c <<<"$row"
    key="$prefix$row"
    line="| $s | $p | $c | ${row_messages[$key]} |"
    for d in "${t_designs[@]}"; do line+=" $(fmt_rate "${result[$key|$d]}") | $(fmt_cpu "${cpu[$key|$d]:-}") |"; done
    for b in "${t_bases[@]}"; do
      for q in "${t_peers[@]}"; do
        a=${result[$key|$b]}; o=${result[$key|$q]}
        line+=" $(fmt_ratio "$a" "$o") |"
        if [ -n "$a" ] && [ -n "$o" ]; then
          logsum["$b|$q"]=$(awk -v s="${logsum[$b|$q]:-0}" -v a="$a" -v o="$o" 'BEGIN {printf "%.12f", s + log(a / o)}')
          logcount["$b|$q"]=$((${logcount[$b|$q]:-0} + 1))
        fi
      done
    done
    echo "$line"
  done
  line="| **geomean** | | | |"
  for d in "${t_designs[@]}"; do line+=" | |"; done
  for b in "${t_bases[@]}"; do
    for q in "${t_peers[@]}"; do
      if [ -n "${logcount[$b|$q]:-}" ]; then
        line+=" **$(awk -v s="${logsum[$b|$q]}" -v n="${logcount[$b|$q]}" 'BEGIN {printf "%.2f", exp(s / n)}')** |"
      else
        line+=" - |"
      fi
    done
  done
  echo "$line"
}
# Prints one ping-pong table: each design's ns per round trip and CPU time,
# then each base's ratio to each peer (the peer's time over the base's).
# $1: the key of the ping-pong results in result and cpu ("pingpong" or
# "tasks|pingpong"); $2 to $4: the names of the arrays of designs, bases
# and peers.
pingpong_table() {
  local key=$1
  local -n p_designs=$2 p_bases=$3 p_peers=$4
  local header="| N |" rule="|---:|" line d b q v
  for d in "${p_designs[@]}"; do header+=" $d | $d cpu_ns_per_roundtrip |"; rule+="---:|---:|"; done
  for b in "${p_bases[@]}"; do for q in "${p_peers[@]}"; do header+=" ${b#leanchan-}/$q |"; rule+="---:|"; done; done
  echo "$header"
  echo "$rule"
  line="| ${row_messages[$key]} |"
  for d in "${p_designs[@]}"; do
    v=${result[$key|$d]}
    line+=" $([ -n "$v" ] && awk -v v="$v" 'BEGIN {printf "%.0f", v}' || echo fail) | $(fmt_cpu "${cpu[$key|$d]:-}") |"
  done
  for b in "${p_bases[@]}"; do
    for q in "${p_peers[@]}"; do line+=" $(fmt_ratio "${result[$key|$q]}" "${result[$key|$b]}") |"; done
  done
  echo "$line"
}
if ((grid > 0)); then
  echo "Throughput in millions of messages per second (higher is better), each"
  echo "beside its CPU time per message (\"cpu_ns_per_msg\": user + system time of"
  echo "the whole process over the timed window, getrusage(RUSAGE_SELF), divided"
  echo "by N, median of the runs; up to the number of busy threads times the wall"
  echo "time per message: a design that spins to win shows here); ratio columns:"
  echo "leanchan's throughput divided by the peer's (> 1: leanchan faster)."
  echo
  throughput_table "" rows designs bases peers

  if ((pingpong > 0)); then
    echo
    echo "Ping-pong, 24-byte messages, two capacity-1 channels: ns per round trip"
    echo "(lower is better), each beside the process's CPU time per round trip"
    echo "(cpu_ns_per_roundtrip, as above); ratio columns: the peer's time divided"
    echo "by leanchan's (> 1: leanchan faster)."
    echo
    pingpong_table pingpong designs bases peers
  fi
fi

# The floor (docs/peers.md, "The floor"): H, the smaller of the two
# hand-off probes; a deep row's floor is H times the share of a line one
# message fills (size / 64) plus the design's single-thread cost; the
# ping-pong's, two hand-offs. Ratio: the measured time over the floor.
floor_table() {
  local h line s b p single floor v worst
  ((${#bases[@]} > 0)) || return 0
  h=$(printf '%s\n' "$handoff_before" "$handoff_after" | grep -v '^$' | sort -g | head -1)
  [ -n "$h" ] || return 0
  echo
  echo "## The floor"
  echo
  echo "What no message can cost less than on this machine now: H = $h ns, the"
  echo "smaller hand-off probe above. A capacity-1024 row's floor is H times the"
  echo "share of a 64-byte line one message fills (size / 64) plus the design's"
  echo "own single-thread cost (one thread sending 1,024 messages and then"
  echo "receiving them, --single; median of the runs); the ping-pong's is 2H"
  echo "(its own single-thread cost left out, which makes that floor stricter)."
  echo "Measured: ns per message (1e9 / throughput) of the capacity-1024 rows,"
  echo "per producer count (the ping-pong: its round trip); ratio: the slowest"
  echo "of them over the floor (the goal: at most 2)."
  echo
  local header="| size | design | single-thread ns | floor ns |" rule="|---:|---|---:|---:|"
  for p in $producer_counts; do header+=" P=$p ns |"; rule+="---:|"; done
  echo "$header ratio |"
  echo "$rule---:|"
  for s in "${single_sizes[@]}"; do
    for b in "${bases[@]}"; do
      single=${result[single|$s|$b]:-}
      [ -n "$single" ] || continue
      floor=$(awk -v h="$h" -v s="$s" -v t="$single" 'BEGIN {printf "%.1f", h * s / 64 + t}')
      line="| $s | $b | $(awk -v v="$single" 'BEGIN {printf "%.1f", v}') | $floor |"
      worst=""
      for p in $producer_counts; do
        v=${result[$s $p 1024|$b]:-}
        if [ -n "$v" ]; then
          v=$(awk -v r="$v" 'BEGIN {printf "%.1f", 1e9 / r}')
          worst=$(awk -v a="${worst:-0}" -v b="$v" 'BEGIN {print (b > a ? b : a)}')
        fi
        line+=" ${v:--} |"
      done
      echo "$line $([ -n "$worst" ] && awk -v w="$worst" -v f="$floor" 'BEGIN {printf "%.2f", w / f}' || echo -) |"
    done
  done
  if ((pingpong > 0)); then
    for b in "${bases[@]}"; do
      v=${result[pingpong|$b]:-}
      [ -n "$v" ] || continue
      floor=$(awk -v h="$h" 'BEGIN {printf "%.1f", 2 * h}')
      # The round trip in the first producer column.
      line="| ping-pong | $b | - | $floor | $(awk -v v="$v" 'BEGIN {printf "%.0f", v}') |"
      for p in $producer_counts; do line+=" |"; done
      line=${line% |}
      echo "$line $(awk -v v="$v" -v f="$floor" 'BEGIN {printf "%.2f", v / f}') |"
    done
  fi
}
((grid > 0)) && [[ " $capacities " == *" 1024 "* || "$pingpong" -gt 0 ]] && floor_table

# The task table: the same workload, every party a task on two threads.
if ((${#task_designs[@]} > 0)); then
  echo
  echo "## Tasks on two threads"
  echo
  echo "Producers, consumer, echo and pinger as tasks on two threads: leanchan's"
  echo "coroutines on ThreadPoolExecutor(2) (leanchan-coro), asio::awaitable"
  echo "coroutines on an io_context run by two threads through leanchan::asio"
  echo "(leanchan-asio) or Asio's concurrent_channel (asio-channel), Tokio tasks"
  echo "on a multi-thread runtime with 2 workers (tokio), goroutines with"
  echo "GOMAXPROCS=2 (go-2). Millions of messages per second beside the CPU"
  echo "time per message, as above; ratio columns: the leanchan design's"
  echo "throughput divided by the peer's (> 1: leanchan faster). These rows,"
  echo "not the OS-thread ones, compare leanchan with Tokio tasks and goroutines."
  echo
  throughput_table "tasks|" task_rows task_designs task_bases task_peers
  if ((pingpong > 0)); then
    echo
    echo "Ping-pong as tasks on two threads, 24-byte messages, two capacity-1"
    echo "channels: ns per round trip (lower is better) beside the CPU time per"
    echo "round trip; ratio columns: the peer's time divided by the leanchan"
    echo "design's (> 1: leanchan faster)."
    echo
    pingpong_table "tasks|pingpong" task_designs task_bases task_peers
  fi
fi

# The spread (docs/peers.md, "Reading the tables"): per design, the
# slowest run over the fastest, as the median over a table's rows and at
# its worst row, then the ping-pong's. A ratio between two designs that
# lies within their spreads says less than its digits do.
# $1: the key prefix ("" or "tasks|"); $2, $3: the names of the arrays of
# rows and designs; $4: the ping-pong key.
spread_table() {
  local prefix=$1 pp_key=$4 d row key v worst worst_row
  local -n s_rows=$2 s_designs=$3
  echo "| design | median over rows | worst row | worst | ping-pong |"
  echo "|---|---:|---|---:|---:|"
  for d in "${s_designs[@]}"; do
    local values=()
    worst=""; worst_row="-"
    for row in "${s_rows[@]}"; do
      key="$prefix$row"
      v=${spread[$key|$d]:-}
      [ -n "$v" ] || continue
      values+=("$v")
      if [ -z "$worst" ] || awk -v a="$v" -v b="$worst" 'BEGIN {exit !(a > b)}'; then
        worst=$v; worst_row="size ${row%% *}, P $(cut -d' ' -f2 <<<"$row"), cap ${row##* }"
      fi
    done
    v=-
    ((${#values[@]} > 0)) && v=$(awk -v m="$(median "${values[@]}")" 'BEGIN {printf "%.2f", m}')
    echo "| $d | $v | $worst_row | ${worst:--} | ${spread[$pp_key|$d]:--} |"
  done
}
if ((reps >= 2)); then
  echo
  echo "## Run-to-run spread"
  echo
  echo "How far apart the $reps runs of one configuration lie: the slowest"
  echo "run's time over the fastest's (1.00: identical runs), per design, as"
  echo "the median over the rows of a table and at its worst row. A ratio"
  echo "between two designs within these spreads is not a result."
  if ((grid > 0)); then
    echo
    echo "OS threads:"
    echo
    spread_table "" rows designs pingpong
  fi
  if ((${#task_designs[@]} > 0)); then
    echo
    echo "Tasks on two threads:"
    echo
    spread_table "tasks|" task_rows task_designs "tasks|pingpong"
  fi
fi
exit 0
