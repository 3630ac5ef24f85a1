#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The speed figures of docs/results.md and README.md, from a grid scripts/peers.sh printed.

    REPS=5 scripts/peers.sh > docs/grids/2026-12-07.md      # a full grid, kept
    scripts/speed_table.py docs/grids/2026-12-07.md          # prints both sections
    scripts/speed_table.py docs/grids/2026-12-07.md --replace docs/results.md
    scripts/speed_table.py docs/grids/2026-12-07.md --check docs/results.md
    scripts/speed_table.py docs/grids/2026-12-07.md --check README.md

The table: the 24-byte rows of the OS-thread grid for 1 and 4 producers
at capacities 1, 16 and 1024, the ping-pong row, and the geometric means
of leanchan-b32's throughput over each peer's across every row of the grid
(every size, producer count and capacity). It lies in the page between
the lines `<!-- speed table: begin -->` and `<!-- speed table: end -->`.
The summary (the README's): the geometric means over crossbeam, Tokio and
Go, every row and per capacity, and those of the coroutines
(leanchan-coro) over Tokio's tasks and Go's goroutines in the task table,
between `<!-- speed summary: begin -->` and `<!-- speed summary: end -->`.
--replace rewrites every section whose markers the page has (it needs
one), --check fails (exit 1) when one differs. Bad input (no grid table,
no marker, a marker without its pair) is an error with exit 2.
"""
import argparse
import math
import re
import sys

MARKERS = {"table": ("<!-- speed table: begin -->", "<!-- speed table: end -->"),
           "summary": ("<!-- speed summary: begin -->", "<!-- speed summary: end -->")}
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


def read_rows(head, rows, into):
    """A throughput table's rows into {(size, P, cap): {design: M msgs/s}}."""
    designs = [(i, name) for i, name in enumerate(head) if "cpu" not in name and "/" not in name]
    for row in rows:
        if len(row) < 4 or number(row[0]) is None:
            continue  # the geomean line
        key = (int(number(row[0])), int(number(row[1])), int(number(row[2])))
        for i, name in designs[4:]:
            value = number(row[i]) if i < len(row) else None
            if value is not None:
                into.setdefault(key, {})[name] = value


def read_grid(text):
    """The OS-thread grid {(size, P, cap): {design: M msgs/s}}, its
    ping-pong {design: ns per round trip} and the task table (the one with
    leanchan-coro, not part of the grid) in the grid's shape."""
    grid, pingpong, tasks = {}, {}, {}
    for head, rows in tables(text):
        if head[:4] == ["size", "P", "cap", "N"]:
            read_rows(head, rows, tasks if "leanchan-coro" in head else grid)
        elif "leanchan-coro" in head:
            continue
        elif head[:1] == ["N"] and len(head) > 2 and rows:
            designs = [(i, name) for i, name in enumerate(head)
                       if "cpu" not in name and "/" not in name]
            for i, name in designs[1:]:
                value = number(rows[0][i]) if i < len(rows[0]) else None
                if value is not None:
                    pingpong[name] = value
    if not grid:
        raise InputError("no OS-thread grid table (| size | P | cap | N | ...) in the input")
    return grid, pingpong, tasks


def geomean(rows, base, peer):
    """(geometric mean of base's throughput over peer's, rows compared), or None."""
    ratios = [row[base] / row[peer] for row in rows
              if base in row and peer in row and row[peer] > 0 and row[base] > 0]
    if not ratios:
        return None
    return math.exp(sum(map(math.log, ratios)) / len(ratios)), len(ratios)


def listed(items):
    """a, b and c"""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def summary(grid, tasks):
    """The README's paragraph: one sentence a line, figures only."""
    names = [("crossbeam", "crossbeam"), ("tokio", "Tokio"), ("go", "Go")]
    every = [(geomean(grid.values(), BASE, peer), title) for peer, title in names]
    every = [(m, title) for m, title in every if m is not None]
    if not every:
        raise InputError(f"the grid compares {BASE} with none of crossbeam, Tokio and Go: "
                         "no speed summary to write")
    rows = max(m[1] for m, _ in every)
    out = [f"Over the last full grid ({rows} rows of OS threads) the default channel reads "
           + listed([f"{m[0]:.2f}x {title}" for m, title in every]) + " by geometric mean"]
    per_cap = []
    for cap in sorted({key[2] for key in grid}):
        rows_at = [row for key, row in grid.items() if key[2] == cap]
        means = [(geomean(rows_at, BASE, peer), title) for peer, title in names]
        means = ["-" if m is None else f"{m[0]:.2f}x" for m, _ in means]
        per_cap.append(f"capacity {cap}: " + ", ".join(means))
    out[0] += " (in that order, " + "; ".join(per_cap) + ")."
    coro = [(geomean(tasks.values(), "leanchan-coro", peer), title)
            for peer, title in (("tokio", "Tokio's tasks"), ("go-2", "Go's goroutines"))]
    coro = [(m, title) for m, title in coro if m is not None]
    if coro:
        out.append("As coroutines on two threads it reads "
                   + listed([f"{m[0]:.2f}x {title}" for m, title in coro])
                   + f" ({max(m[1] for m, _ in coro)} task rows).")
    return "\n".join(out) + "\n"


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
        mean = geomean(grid.values(), BASE, peer)
        if mean is not None:
            means.append(f"{mean[0]:.2f}x {peer} ({mean[1]} rows)")
    out.append("")
    out.append(f"Geometric means of {BASE}'s throughput over each peer's, every row of the "
               f"grid: " + ", ".join(means) + ".")
    return "\n".join(out) + "\n"


def rewrite(page, generated):
    """The page with every section whose markers it has rewritten."""
    found = 0
    for name, (begin, end) in MARKERS.items():
        if page.count(begin) == 0 and page.count(end) == 0:
            continue
        if page.count(begin) != 1 or page.count(end) != 1 or page.index(begin) > page.index(end):
            raise InputError(f"the page needs one '{begin}' line and, after it, one '{end}' line")
        head, rest = page.split(begin, 1)
        _, tail = rest.split(end, 1)
        page = f"{head}{begin}\n{generated[name]()}{end}{tail}"
        found += 1
    if not found:
        raise InputError("the page has no section markers: '"
                         + "' or '".join(begin for begin, _ in MARKERS.values()) + "'")
    return page


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("grid", help="a file scripts/peers.sh printed")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--replace", metavar="PAGE", help="rewrite the section in PAGE")
    group.add_argument("--check", metavar="PAGE", help="exit 1 if PAGE's section differs")
    args = parser.parse_args()
    try:
        with open(args.grid, encoding="utf-8") as f:
            grid, pingpong, tasks = read_grid(f.read())
        # Each section is made only when a page asks for it (or for the plain
        # print): a grid a summary cannot come from still gives its table.
        generated = {"table": lambda: section(grid, pingpong),
                     "summary": lambda: summary(grid, tasks)}
        if not args.replace and not args.check:
            sys.stdout.write(generated["table"]() + "\n" + generated["summary"]())
            return 0
        path = args.replace or args.check
        with open(path, encoding="utf-8") as f:
            readme = f.read()
        wanted = rewrite(readme, generated)
        if args.check:
            if wanted != readme:
                print(f"speed_table: {path}'s speed figures differ from {args.grid}; "
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
