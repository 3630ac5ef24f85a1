#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The commit rule (CONTRIBUTING.md, "Commits"): every subject at most 72
# characters, followed by a blank line when there is a body. Checks the
# commits in a range, by default those made since the rule was adopted
# (commit f9f4a36, which wrote it into CONTRIBUTING.md; older history is
# kept as it was).
#
#   scripts/check_commits.sh               # f9f4a36..HEAD
#   scripts/check_commits.sh main..topic   # a branch before it lands
set -euo pipefail
cd "$(dirname "$0")/.."
range="${1:-f9f4a36..HEAD}"
if ! git rev-parse --git-dir >/dev/null 2>&1; then
  echo "check_commits: not a git checkout: nothing to check"
  exit 0
fi
if [[ $# -eq 0 && "$(git rev-parse --is-shallow-repository)" == true ]] &&
   ! git rev-parse --verify -q "${range%%..*}^{commit}" >/dev/null; then
  echo "check_commits: a shallow clone without ${range%%..*}: skipped"
  exit 0
fi
if ! git rev-parse --verify -q "${range%%..*}^{commit}" >/dev/null; then
  echo "check_commits: no such commit: ${range%%..*} (a shallow clone? fetch more history)" >&2
  exit 2
fi
bad=0
while IFS= read -r commit; do
  subject="$(git log -1 --format=%s "$commit")"
  second="$(git log -1 --format=%B "$commit" | sed -n 2p)"
  if ((${#subject} > 72)); then
    echo "check_commits: $(git rev-parse --short "$commit"): subject of ${#subject} characters (at most 72): $subject" >&2
    bad=1
  fi
  if [[ -n "$second" ]]; then
    echo "check_commits: $(git rev-parse --short "$commit"): no blank line after the subject" >&2
    bad=1
  fi
done < <(git rev-list "$range")
((bad == 0)) || exit 1
echo "check_commits: $(git rev-list --count "$range") commits in $range follow the subject rule"
