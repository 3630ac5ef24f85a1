#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the API reference: Doxygen (Debian's doxygen, installed when
# missing) over the installed public headers (docs/Doxyfile), as HTML in
# build-reference/html/. Fails on any Doxygen warning, so on any public
# declaration without its documentation comment (docs/reference.md). CI
# runs it (.ci/run); it takes a second or so.
#
#   scripts/reference.sh                                  # build-reference/html/
#   LEANCHAN_REFERENCE_DIR=/tmp/ref scripts/reference.sh  # elsewhere
#
# LEANCHAN_NO_INSTALL=1: never call apt-get (doxygen must be there).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v doxygen >/dev/null 2>&1; then
  if [[ "${LEANCHAN_NO_INSTALL:-0}" == 1 ]] || ! command -v apt-get >/dev/null 2>&1; then
    echo "reference: doxygen not found (Debian: doxygen)" >&2
    exit 1
  fi
  as_root=()
  if [[ "$(id -u)" -ne 0 ]]; then as_root=(sudo); fi
  echo "reference: installing doxygen"
  "${as_root[@]}" apt-get update >/dev/null
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y --no-install-recommends \
    doxygen >/dev/null
fi

out="${LEANCHAN_REFERENCE_DIR:-build-reference}"
version="$(sed -n 's/^project(leanchan VERSION \([0-9][0-9.]*\).*/\1/p' CMakeLists.txt)"
if [[ ! "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  echo "reference: no project(leanchan VERSION x.y.z) in CMakeLists.txt" >&2
  exit 1
fi
IFS=. read -r major minor patch <<<"$version"

# A fresh tree each time: no page of a declaration since removed stays.
rm -rf "$out/html" "$out/include"
mkdir -p "$out/include/leanchan"
# leanchan/version.h as CMake's configure_file writes it (channel/CMakeLists.txt).
sed -e "s/@PROJECT_VERSION_MAJOR@/$major/" -e "s/@PROJECT_VERSION_MINOR@/$minor/" \
    -e "s/@PROJECT_VERSION_PATCH@/$patch/" -e "s/@PROJECT_VERSION@/$version/" \
    cmake/version.h.in >"$out/include/leanchan/version.h"

# Doxygen writes its warnings to stderr (QUIET: nothing else) and, with
# WARN_AS_ERROR=FAIL_ON_WARNINGS, exits non-zero after writing every page.
# Any output at all fails too, in case a doxygen release stops honouring that.
log="$out/doxygen.log"
status=0
LEANCHAN_VERSION="$version" LEANCHAN_REFERENCE_DIR="$out" doxygen docs/Doxyfile >"$log" 2>&1 ||
  status=$?
if [[ "$status" -ne 0 || -s "$log" ]]; then
  cat "$log" >&2
  echo "reference: doxygen $(doxygen --version) failed (exit $status): every public" \
       "declaration needs its /// comment (docs/reference.md)" >&2
  exit 1
fi
echo "reference: doxygen $(doxygen --version), no warning; open $out/html/index.html"
