#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fails when a source, header, script or CMake file of the repository does
# not carry the SPDX license line in its first three lines (after a
# shebang or an editor line, if any). CI runs it (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

missing=0
while IFS= read -r file; do
  if ! head -n 3 "$file" | grep -q "SPDX-License-Identifier: MIT"; then
    echo "missing SPDX-License-Identifier: MIT: $file" >&2
    missing=$((missing + 1))
  fi
done < <(git ls-files -- '*.cc' '*.h' '*.sh' '*.cmake' '*.in' '*.go' '*.rs' '*.toml' \
           'CMakeLists.txt' '*/CMakeLists.txt' '.ci/run')

if ((missing > 0)); then
  echo "check_spdx: $missing file(s) without the license line" >&2
  exit 1
fi
echo "check_spdx: every source, header, script and CMake file carries SPDX-License-Identifier: MIT"
