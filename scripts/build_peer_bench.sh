#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds leanchan-peer-bench (Release, the peer benchmark only) from the
# working tree into WORK/new and, given a base commit, from that commit
# (checked out in the worktree WORK/base-src) into WORK/base; the
# binaries are WORK/{base,new}/benchmarks/leanchan-peer-bench, the build
# logs WORK/{base,new}.log. For the scripts that compare two builds
# (scripts/instructions.sh, scripts/peer_ab.sh); progress on stderr.
#
#   scripts/build_peer_bench.sh WORK [BASE-COMMIT]
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 1 && $# -le 2 ]] || { echo "usage: scripts/build_peer_bench.sh WORK [BASE-COMMIT]" >&2; exit 2; }
work=$1
base=""
if [[ $# -eq 2 ]]; then
  base="$(git rev-parse --verify "$2^{commit}" 2>/dev/null)" ||
    { echo "build_peer_bench.sh: no such commit: $2" >&2; exit 2; }
fi
configure=(-DCMAKE_BUILD_TYPE=Release -DLEANCHAN_BUILD_TESTS=OFF -DLEANCHAN_BUILD_REPORT=OFF
           -DLEANCHAN_BUILD_EXAMPLES=OFF)
mkdir -p "$work"  # a fresh clone has none: the build logs go there
sides=(new)
if [[ -n "$base" ]]; then
  sides=(base new)
  if [[ ! -d "$work/base-src" ]]; then git worktree add --detach "$work/base-src" "$base" >/dev/null
  else git -C "$work/base-src" checkout -q --detach "$base"; fi
fi
for side in "${sides[@]}"; do
  src=.; [[ $side == base ]] && src="$work/base-src"
  echo "build_peer_bench.sh: building the peer benchmark ($side) in $work/$side" >&2
  cmake -S "$src" -B "$work/$side" "${configure[@]}" >"$work/$side.log" 2>&1 &&
    cmake --build "$work/$side" -j "$(nproc)" --target leanchan_peer_bench >>"$work/$side.log" 2>&1 ||
    { echo "build_peer_bench.sh: build failed (see $work/$side.log)" >&2; exit 1; }
done
