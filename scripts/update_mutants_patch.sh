#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Rewrites tests/explore/mutants.patch from an edited copy of the channel:
# the explorer's build applies the patch to build/channel/explore_tree
# (leanchan_channel_explore); after a change to the code a mutant touches
# makes it fail to apply, copy channel/ there, put each mutant back by
# hand, then run this to diff that copy against channel/ again (the
# patch's preamble, up to its first diff line, is kept).
#
#   scripts/update_mutants_patch.sh [build/channel/explore_tree]
set -euo pipefail
cd "$(dirname "$0")/.."
tree="${1:-build/channel/explore_tree}"
patch_file=tests/explore/mutants.patch
if [ ! -d "$tree/channel" ]; then
  echo "update_mutants_patch: no $tree/channel: build leanchan_channel_explore first" >&2
  exit 2
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/a" "$tmp/b"
cp -r channel "$tmp/a/"
cp -r "$tree/channel" "$tmp/b/"
sed -n '1,/^diff /p' "$patch_file" | sed '$d' > "$tmp/preamble"
(cd "$tmp" && diff -ruN -x CMakeLists.txt -x applied a/channel b/channel || true) |
  sed -E 's/^(---|\+\+\+) ([^\t]+)\t.*$/\1 \2/' > "$tmp/body"
if [ ! -s "$tmp/body" ]; then
  echo "update_mutants_patch: the copy carries no mutant: nothing written" >&2
  exit 1
fi
cat "$tmp/preamble" "$tmp/body" > "$patch_file"
echo "update_mutants_patch: wrote $patch_file ($(grep -c '^@@' "$patch_file") hunks)"
