#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every C++ source and header in the repository is formatted with the
# project's .clang-format (Debian's clang-format, installed by setup.sh).
# Fails listing the files that are not; `clang-format -i <file>` fixes one.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format >/dev/null 2>&1; then
  echo "check_format: clang-format not found (Debian: clang-format)" >&2
  exit 1
fi
mapfile -t files < <(git ls-files '*.h' '*.cc' '*.cpp')
bad=()
for file in "${files[@]}"; do
  if ! clang-format --dry-run -Werror "$file" >/dev/null 2>&1; then bad+=("$file"); fi
done
if ((${#bad[@]} > 0)); then
  printf 'check_format: not formatted (clang-format -i fixes it):\n' >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "check_format: ${#files[@]} C++ files formatted with .clang-format"
