#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The house rules CONTRIBUTING.md states for channel/, checked:
#   - no class has member functions defined in more than one .cc file there;
#   - no algorithm step numbers ("step 2", "steps 3-6", "5a") in channel/
#     or docs/design.md: code and docs cite functions by name;
#   - the channel's internal headers include only parts below them (the
#     levels below; CONTRIBUTING.md "Inside the channel").
set -euo pipefail
cd "$(dirname "$0")/.."
python3 - <<'PY'
import collections, pathlib, re, sys
failures = []
owners = collections.defaultdict(set)
for path in sorted(pathlib.Path("channel/src").glob("*.cc")):
    text = path.read_text()
    # A member definition starts a line: [return type] Class::name(
    for match in re.finditer(r"^[A-Za-z][\w:<>*&, ]*?\b([A-Z]\w*)::~?\w+\(", text, re.M):
        owners[match.group(1)].add(str(path))
for cls, files in sorted(owners.items()):
    if len(files) > 1:
        failures.append(f"class {cls} has members defined in {len(files)} files: {', '.join(sorted(files))}")
step = re.compile(r"\bsteps? \d+[a-e]?\b|\(\d[a-e]\)|\b\d[a-e]-\d?[a-e]\b|\b\d[a-e]\.", re.I)
targets = [p for p in pathlib.Path("channel").rglob("*") if p.suffix in (".h", ".cc", ".txt")]
targets.append(pathlib.Path("docs/design.md"))
for path in targets:
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if step.search(line):
            failures.append(f"{path}:{number}: a step number: {line.strip()}")
# Inside the channel, internal headers point downward too: a part knows
# the parts below it and nothing above (the waiting layer, semaphore.h,
# knows nothing of blocks, the receiver or the control block).
levels = [
    ["export.h", "version.h", "contract.h"],
    ["explore.h", "test_point.h", "list_lock.h", "fwd.h", "status.h", "position.h"],
    ["atomic.h"],
    ["futex.h", "spin_wait.h", "block.h", "wait_node.h", "lifetime.h", "permit_word.h"],
    ["waiter_queue.h", "wait_policy.h"],
    ["semaphore.h", "receiver_signal.h", "block_list.h"],
    ["channel_state.h"],
    ["provisioning.h", "give_back.h", "ending.h"],
    ["channel_ops.h"],
]
level_of = {name: rank for rank, names in enumerate(levels) for name in names}
include = re.compile(r'#include "leanchan/(?:internal/)?([\w.]+)"')
for path in sorted(pathlib.Path("channel/include/leanchan").rglob("*.h")):
    if path.name not in level_of:
        continue  # the public API headers, above every internal one
    for number, line in enumerate(path.read_text().splitlines(), 1):
        found = include.search(line)
        if found and level_of.get(found.group(1), len(levels)) >= level_of[path.name]:
            failures.append(f"{path}:{number}: includes {found.group(1)}, not below it")
for failure in failures:
    print(f"check_layout: {failure}", file=sys.stderr)
if failures:
    sys.exit(1)
print("check_layout: one .cc per class, no step numbers, "
      "internal includes point downward")
PY
