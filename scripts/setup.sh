#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian packages leanchan needs, only those missing.
# Runs apt-get as root (directly, or through sudo when not root).
set -euo pipefail

packages=(cmake g++ clang make pkg-config libgtest-dev libbenchmark-dev libabsl-dev libmimalloc-dev libasio-dev)
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
