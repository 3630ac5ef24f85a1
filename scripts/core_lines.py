#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Prints the code lines (comments and blank lines left out) of the
# channel's core algorithm, file by file: the block list and its lock, the
# permit word and positions, provisioning, the give-back, ending, the
# semaphore and its waiter queue, the control block and the templated
# operations. CI prints it so that the core's size is seen at every change
# (docs/design.md says what each part does).
#
#   scripts/core_lines.py          # the table and the total
import pathlib
import re
import sys

CORE = [
    "channel/include/leanchan/internal/block.h",
    "channel/include/leanchan/internal/block_list.h",
    "channel/src/block_list.cc",
    "channel/include/leanchan/internal/list_lock.h",
    "channel/src/list_lock.cc",
    "channel/include/leanchan/internal/permit_word.h",
    "channel/src/permit_word.cc",
    "channel/include/leanchan/internal/position.h",
    "channel/include/leanchan/internal/provisioning.h",
    "channel/src/provisioning.cc",
    "channel/include/leanchan/internal/give_back.h",
    "channel/src/give_back.cc",
    "channel/include/leanchan/internal/ending.h",
    "channel/src/ending.cc",
    "channel/include/leanchan/internal/semaphore.h",
    "channel/src/semaphore.cc",
    "channel/include/leanchan/internal/waiter_queue.h",
    "channel/src/waiter_queue.cc",
    "channel/include/leanchan/internal/channel_state.h",
    "channel/src/channel_state.cc",
    "channel/include/leanchan/internal/channel_ops.h",
]


def code_lines(text: str) -> int:
    # Block comments out, then line comments; a line counts if code is left.
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    count = 0
    for line in text.splitlines():
        line = re.sub(r"//.*", "", line).strip()
        if line:
            count += 1
    return count


def main() -> int:
    root = pathlib.Path(__file__).resolve().parent.parent
    total = 0
    missing = []
    for name in CORE:
        path = root / name
        if not path.exists():
            missing.append(name)
            continue
        lines = code_lines(path.read_text())
        total += lines
        print(f"{lines:6d}  {name}")
    print(f"{total:6d}  the channel's core algorithm (code lines, no comments or blanks)")
    if missing:
        print("core_lines: missing: " + ", ".join(missing), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
