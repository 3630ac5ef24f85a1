#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian packages leanchan needs, only those missing.
#   scripts/setup.sh [mode]: takes scripts/test.sh's mode; every mode needs
#   the same packages.
# Runs apt-get as root (directly, or through sudo when not root).
# LEANCHAN_NO_INSTALL=1 skips it.
set -euo pipefail

# libboost1.81-dev (header-only; about 150 MB installed): leanchan-proxy
# (Boost.Asio and Beast), and leanchan::asio on Boost.Asio (the boost modes).
packages=(cmake g++ clang make pkg-config gnuplot-nox libgtest-dev libbenchmark-dev libabsl-dev libmimalloc-dev libasio-dev libboost1.81-dev clang-format patch)
# LEANCHAN_NO_INSTALL=1: install nothing (a system without apt, or one you
# manage yourself); CMake then says which part it skips for a missing
# dependency (or fails, with LEANCHAN_REQUIRE_ALL=ON).
if [ "${LEANCHAN_NO_INSTALL:-0}" = 1 ]; then
  echo "leanchan setup: LEANCHAN_NO_INSTALL=1: installing nothing (Debian names of what the build uses: ${packages[*]})"
  exit 0
fi
if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  echo "leanchan setup: no apt-get/dpkg here. Install these yourself (Debian names:" \
       "${packages[*]}; the library alone needs only a C++20 compiler and CMake)," \
       "then rerun with LEANCHAN_NO_INSTALL=1" >&2
  exit 1
fi

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "leanchan setup: installing ${missing[*]}"
as_root=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null; then
    echo "leanchan setup: need root to install: ${missing[*]}" >&2
    exit 1
  fi
  as_root=(sudo)
fi
"${as_root[@]}" apt-get update
DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
