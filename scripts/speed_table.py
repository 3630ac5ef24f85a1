#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The speed table of docs/results.md, generated from a grid scripts/peers.sh printed.

    REPS=5 scripts/peers.sh > docs/grids/2026-12-07.md      # a full grid, kept
    scripts/speed_table.py docs/grids/2026-12-07.md          # prints the section
    scripts/speed_table.py docs/grids/2026-12-07.md --replace docs/results.md
    scripts/speed_table.py docs/grids/2026-12-07.md --check docs/results.md

The section: the 24-byte rows of the OS-thread grid for 1 and 4 producers
at capacities 1, 16 and 1024, the ping-pong row, and the geometric means
of leanchan-b32's throughput over each peer's across every row of the grid
(every size, producer count and capacity). It lies in the page between
the lines `<!-- speed table: begin -->` and `<!-- speed table: end -->`;
--replace rewrites it there, --check fails (exit 1) when it differs. Bad
input (no grid table, a missing marker) is an error with exit 2.
"""
import argparse
import math
import re
import sys

BEGIN = "<!-- speed table: begin -->"
END = "<!-- speed table: end -->"
# Column order and titles of the table; a design the grid lacks
# is left out.
COLUMNS = [("leanchan-b8", "leanchan-b8"), ("leanchan-b32", "leanchan-b32 (default)"),
           ("crossbeam", "crossbeam"), ("tokio", "Tokio"), ("go", "Go"),
           ("moodycamel", "moodycamel"), ("onetbb", "oneTBB")]
BASE = "leanchan-b32"
PEERS = ["crossbeam", "tokio", "go", "moodycamel", "onetbb", "flume"]


class InputError(Exception):
    pass


def tables(text):
    """Every Markdown table of the text: (header cells, rows of cells)."""
    found, head, rows = [], None, []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            cells = [c.strip().strip("*").strip() for c in line.strip().strip("|").split("|")]
            if head is None:
                head = cells
            elif not set("".join(cells)) <= set("-: "):
                rows.append(cells)
        elif head is not None:
            found.append((head, rows))
            head, rows = None, []
    return found


def number(cell):
    try:
        return float(cell.replace(",", ""))
    except ValueError:
        return None


def read_grid(text):
    """The OS-thread grid {(size, P, cap): {design: M msgs/s}} and its
    ping-pong {design: ns per round trip}. The task table (it has
    leanchan-coro) is not the grid."""
    grid, pingpong = {}, {}
    for head, rows in tables(text):
        if "leanchan-coro" in head:
            continue
        designs = [(i, name) for i, name in enumerate(head)
                   if "cpu" not in name and "/" not in name]
        if head[:4] == ["size", "P", "cap", "N"]:
            for row in rows:
                if len(row) < 4 or number(row[0]) is None:
                    continue  # the geomean line
                key = (int(number(row[0])), int(number(row[1])), int(number(row[2])))
                for i, name in designs[4:]:
                    value = number(row[i]) if i < len(row) else None
                    if value is not None:
                        grid.setdefault(key, {})[name] = value
        elif head[:1] == ["N"] and len(head) > 2 and rows:
            for i, name in designs[1:]:
                value = number(rows[0][i]) if i < len(rows[0]) else None
                if value is not None:
                    pingpong[name] = value
    if not grid:
        raise InputError("no OS-thread grid table (| size | P | cap | N | ...) in the input")
    return grid, pingpong


def section(grid, pingpong):
    columns = [(d, title) for d, title in COLUMNS
               if any(d in row for row in grid.values()) or d in pingpong]
    out = ["| producers, capacity | " + " | ".join(t for _, t in columns) + " |",
           "|---|" + "---:|" * len(columns)]
    for producers in (1, 4):
        for cap in (1, 16, 1024):
            row = grid.get((24, producers, cap))
            if row is None:
                continue
            cells = [f"{row[d]:.2f}" if d in row else "-" for d, _ in columns]
            out.append(f"| {producers}, {cap} | " + " | ".join(cells) + " |")
    if pingpong:
        cells = [f"{pingpong[d]:.0f}" if d in pingpong else "-" for d, _ in columns]
        out.append("| ping-pong ns (lower is better) | " + " | ".join(cells) + " |")
    means = []
    for peer in PEERS:
        ratios = [row[BASE] / row[peer] for row in grid.values()
                  if BASE in row and peer in row and row[peer] > 0]
        if ratios:
            mean = math.exp(sum(map(math.log, ratios)) / len(ratios))
            means.append(f"{mean:.2f}x {peer} ({len(ratios)} rows)")
    out.append("")
    out.append(f"Geometric means of {BASE}'s throughput over each peer's, every row of the "
               f"grid: " + ", ".join(means) + ".")
    return "\n".join(out) + "\n"


def split_readme(text):
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise InputError(f"the page needs one '{BEGIN}' line and, after it, one '{END}' line")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head, tail


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("grid", help="a file scripts/peers.sh printed")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--replace", metavar="PAGE", help="rewrite the section in PAGE")
    group.add_argument("--check", metavar="PAGE", help="exit 1 if PAGE's section differs")
    args = parser.parse_args()
    try:
        with open(args.grid, encoding="utf-8") as f:
            generated = section(*read_grid(f.read()))
        if not args.replace and not args.check:
            sys.stdout.write(generated)
            return 0
        path = args.replace or args.check
        with open(path, encoding="utf-8") as f:
            readme = f.read()
        head, tail = split_readme(readme)
        wanted = f"{head}{BEGIN}\n{generated}{END}{tail}"
        if args.check:
            if wanted != readme:
                print(f"speed_table: {path}'s speed table differs from {args.grid}; "
                      f"run scripts/speed_table.py {args.grid} --replace {path}", file=sys.stderr)
                return 1
            return 0
        with open(path, "w", encoding="utf-8") as f:
            f.write(wanted)
        return 0
    except (OSError, InputError) as error:
        print(f"speed_table: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
