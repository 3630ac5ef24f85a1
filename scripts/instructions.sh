#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What one message costs on one thread, in instructions: a send and a
# receive (leanchan-peer-bench --single: rounds of `capacity` sends, then
# as many receives) counted by valgrind's callgrind. A count is the same
# for the same binary and arguments whatever else the machine does, so it
# compares two builds where timed runs are too noisy to (docs/peers.md,
# "Instructions per message"). It is not a speed: an atomic
# read-modify-write or a cache miss counts as one instruction.
#
#   scripts/instructions.sh                 # the working tree
#   scripts/instructions.sh HEAD~2          # the working tree against a base commit
#   INSTR_CAPACITIES=1024 INSTR_DESIGNS=leanchan-b32 scripts/instructions.sh
#
# The count is marginal, (I(2N) - I(N)) / N, so the start-up and the
# channel's creation cancel out. Environment: INSTR_DESIGNS (leanchan-b1
# leanchan-b8 leanchan-b32 tokio-style moodycamel; those the binary lacks
# are left out), INSTR_SIZES (24), INSTR_CAPACITIES (1 16 1024),
# INSTR_MESSAGES (N, 100000), LEANCHAN_NO_INSTALL=1 (never call apt-get).
# Builds in build-instructions/ (Release, the peer benchmark only).
set -euo pipefail
cd "$(dirname "$0")/.."
base=""
if [[ $# -ge 1 ]]; then
  case "$1" in
    -h | --help) sed -n '3,/^[^#]/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) base="$(git rev-parse --verify "$1^{commit}" 2>/dev/null)" ||
         { echo "instructions.sh: no such commit: $1" >&2; exit 2; } ;;
  esac
fi
designs="${INSTR_DESIGNS:-leanchan-b1 leanchan-b8 leanchan-b32 tokio-style moodycamel}"
sizes="${INSTR_SIZES:-24}"
capacities="${INSTR_CAPACITIES:-1 16 1024}"
messages="${INSTR_MESSAGES:-100000}"
[[ "$messages" =~ ^[1-9][0-9]*$ ]] || { echo "instructions.sh: INSTR_MESSAGES must be a positive number" >&2; exit 2; }

if ! command -v valgrind >/dev/null; then
  if [[ "${LEANCHAN_NO_INSTALL:-0}" == 1 ]] || ! command -v apt-get >/dev/null; then
    echo "instructions.sh: needs valgrind (Debian: valgrind)" >&2; exit 1
  fi
  as_root=(); [[ "$(id -u)" -ne 0 ]] && as_root=(sudo)
  "${as_root[@]}" apt-get update >/dev/null
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y --no-install-recommends valgrind >/dev/null
fi
scripts/setup.sh >&2

work=build-instructions
scripts/build_peer_bench.sh "$work" ${base:+"$base"}
bin_of() { echo "$work/$1/benchmarks/leanchan-peer-bench"; }

# Instructions executed by one --single run of N messages.
count() {
  local out
  out=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" --design="$2" --single \
          --capacity="$3" --size="$4" --messages="$5" 2>&1) || { echo "run failed: $out" >&2; return 1; }
  sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p' <<<"$out" | tr -d ,
}
per_message() {
  local one two
  one=$(count "$1" "$2" "$3" "$4" "$messages") && two=$(count "$1" "$2" "$3" "$4" $((2 * messages))) &&
    awk -v a="$one" -v b="$two" -v n="$messages" 'BEGIN {printf "%.1f", (b - a) / n}'
}

new_bin=$(bin_of new)
available=$("$new_bin" --help 2>&1 | sed -n 's/^designs: //p')
echo "# Instructions per message on one thread (send + receive), callgrind"
echo
echo "- $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' + changes')${base:+, against $(git rev-parse --short "$base")}; $(c++ --version | head -1), Release"
echo "- leanchan-peer-bench --single, marginal count over $messages messages: (I(2N) - I(N)) / N"
echo
if [[ -n "$base" ]]; then
  echo "| design | size | capacity | base | new | new / base |"
  echo "|---|---:|---:|---:|---:|---:|"
else
  echo "| design | size | capacity | instructions |"
  echo "|---|---:|---:|---:|"
fi
for d in $designs; do
  [[ " $available " == *" $d "* ]] || { echo "instructions.sh: $d is not in this build; left out" >&2; continue; }
  for s in $sizes; do
    for c in $capacities; do
      n=$(per_message "$new_bin" "$d" "$c" "$s") || exit 1
      if [[ -n "$base" ]]; then
        b=$(per_message "$(bin_of base)" "$d" "$c" "$s") || exit 1
        echo "| $d | $s | $c | $b | $n | $(awk -v a="$n" -v b="$b" 'BEGIN {printf "%.2f", a / b}') |"
      else
        echo "| $d | $s | $c | $n |"
      fi
    done
  done
done
