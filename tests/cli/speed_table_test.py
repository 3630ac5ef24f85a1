#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# scripts/speed_table.py: the results page's speed table and the README's
# speed summary from a peers.sh grid. The grid here is made up in the shape
# peers.sh prints (a throughput table per size/producers/capacity, a
# ping-pong table, a task table that only the summary reads); the expected
# cells and geometric means are computed here from the same numbers.
import math
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "speed_table.py")
DESIGNS = ["leanchan-b8", "leanchan-b32", "crossbeam", "tokio", "go", "onetbb"]


def rate(size, producers, cap, design):  # M msgs/s, distinct per cell
    return round(1 + size / 100 + producers + cap / 1000 + DESIGNS.index(design) * 0.37, 2)


def grid_text():
    head = "| size | P | cap | N |" + "".join(f" {d} | {d} cpu_ns_per_msg |" for d in DESIGNS)
    head += " b32/crossbeam |"
    lines = ["# leanchan against its peers", "", "- machine: made up", "", head,
             "|---:|---:|---:|---:|" + "---:|---:|" * len(DESIGNS) + "---:|"]
    for size in (8, 24):
        for producers in (1, 4):
            for cap in (1, 16, 1024):
                cells = "".join(f" {rate(size, producers, cap, d):.2f} | 100 |" for d in DESIGNS)
                lines.append(f"| {size} | {producers} | {cap} | 1000 |{cells} 0.5 |")
    lines.append("| **geomean** | | | |" + " | |" * len(DESIGNS) + " **0.5** |")
    lines += ["", "| N |" + "".join(f" {d} | {d} cpu |" for d in DESIGNS), "|---:|" + "---:|---:|" * len(DESIGNS),
              "| 1000 |" + "".join(f" {300 + 10 * i} | 5 |" for i in range(len(DESIGNS))), ""]
    lines += ["| size | P | cap | N | leanchan-coro | tokio | go-2 | coro/tokio |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|",
              "| 24 | 1 | 1 | 1000 | 99.00 | 1.00 | 33.00 | 99.00 |",
              "| 24 | 4 | 16 | 1000 | 4.00 | 16.00 | 2.00 | 0.25 |",
              "| **geomean** | | | | | | | **4.97** |", ""]
    return "\n".join(lines)


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


def main():
    failures = []

    def expect(condition, what):
        if not condition:
            failures.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        grid = os.path.join(tmp, "grid.md")
        with open(grid, "w") as f:
            f.write(grid_text())
        out = run(grid)
        expect(out.returncode == 0, f"plain run exit {out.returncode}: {out.stderr}")
        text, _, summary = out.stdout.partition("\nOver the last")
        row = "| 4, 16 | " + " | ".join(f"{rate(24, 4, 16, d):.2f}" for d in DESIGNS) + " |"
        expect(row in text, f"missing the 24-byte row {row!r} in:\n{text}")
        expect("| 1, 1 |" in text and "| 4, 1024 |" in text, "not every producer/capacity row")
        expect(text.count("\n| ") == 7, f"not 6 grid rows and the ping-pong row:\n{text}")
        expect("| ping-pong ns (lower is better) | 300 | 310 | 320 | 330 | 340 | 350 |" in text,
               f"ping-pong row wrong:\n{text}")
        expect("99.00" not in text, "the task table leaked into the OS-thread section")
        expect("moodycamel" not in text, "a design the grid lacks got a column")
        # Geometric mean of leanchan-b32 over `peer`, every row or one capacity's.
        def means(peer, cap=None):
            ratios = [rate(s, p, c, "leanchan-b32") / rate(s, p, c, peer)
                      for s in (8, 24) for p in (1, 4) for c in (1, 16, 1024)
                      if cap is None or c == cap]
            return math.exp(sum(map(math.log, ratios)) / len(ratios))
        expect(f"{means('crossbeam'):.2f}x crossbeam (12 rows)" in text,
               f"geomean over crossbeam wrong:\n{text}")

        # The summary: every row, then per capacity, then the task rows.
        head = (f" full grid (12 rows of OS threads) the default channel reads "
                f"{means('crossbeam'):.2f}x crossbeam, {means('tokio'):.2f}x Tokio and "
                f"{means('go'):.2f}x Go by geometric mean (in that order, capacity 1: "
                f"{means('crossbeam', 1):.2f}x, {means('tokio', 1):.2f}x, {means('go', 1):.2f}x;")
        expect(summary.startswith(head), f"summary's first sentence wrong:\n{summary}\nwanted {head}")
        expect(f"capacity 1024: {means('crossbeam', 1024):.2f}x," in summary,
               f"summary's capacity 1024 wrong:\n{summary}")
        tasks = (f"it reads {math.sqrt(99 / 1 * 4 / 16):.2f}x Tokio's tasks and "
                 f"{math.sqrt(99 / 33 * 4 / 2):.2f}x Go's goroutines (2 task rows).")
        expect(tasks in summary, f"summary's task figures wrong:\n{summary}\nwanted {tasks}")

        readme = os.path.join(tmp, "README.md")
        with open(readme, "w") as f:
            f.write("# x\n\n<!-- speed table: begin -->\nold\n<!-- speed table: end -->\n\nafter\n")
        expect(run(grid, "--check", readme).returncode == 1, "--check passed a stale table")
        expect(run(grid, "--replace", readme).returncode == 0, "--replace failed")
        expect(run(grid, "--check", readme).returncode == 0, "--check failed after --replace")
        with open(readme) as f:
            body = f.read()
        expect(body.startswith("# x\n\n<!-- speed table: begin -->\n| producers") and
               body.endswith("<!-- speed table: end -->\n\nafter\n"), f"--replace mangled:\n{body}")

        # A page with the summary's markers alone (the README), then both.
        with open(readme, "w") as f:
            f.write("a\n<!-- speed summary: begin -->\nold\n<!-- speed summary: end -->\nb\n")
        expect(run(grid, "--check", readme).returncode == 1, "--check passed a stale summary")
        expect(run(grid, "--replace", readme).returncode == 0, "--replace of a summary failed")
        with open(readme) as f:
            body = f.read()
        expect(body.startswith("a\n<!-- speed summary: begin -->\nOver the last full grid") and
               body.endswith(" task rows).\n<!-- speed summary: end -->\nb\n"),
               f"--replace mangled the summary:\n{body}")
        with open(readme, "w") as f:
            f.write("<!-- speed table: begin -->\n<!-- speed table: end -->\n"
                    "<!-- speed summary: begin -->\n<!-- speed summary: end -->\n")
        expect(run(grid, "--replace", readme).returncode == 0, "--replace of both failed")
        with open(readme) as f:
            body = f.read()
        expect("| producers, capacity |" in body and "Over the last full grid" in body,
               f"--replace did not write both sections:\n{body}")
        expect(run(grid, "--check", readme).returncode == 0, "--check failed after both")

        with open(readme, "w") as f:
            f.write("# no markers\n")
        bad = run(grid, "--check", readme)
        expect(bad.returncode == 2 and "speed table: begin" in bad.stderr, "missing markers not exit 2")
        # A grid without crossbeam, Tokio and Go has a table but no summary.
        lean = os.path.join(tmp, "lean.md")
        with open(lean, "w") as f:
            f.write(grid_text().replace("crossbeam", "x1").replace("tokio", "x2")
                    .replace("| go |", "| x3 |").replace(" go ", " x3 "))
        with open(readme, "w") as f:
            f.write("<!-- speed table: begin -->\n<!-- speed table: end -->\n")
        expect(run(lean, "--replace", readme).returncode == 0, "a table from a lean grid failed")
        with open(readme, "w") as f:
            f.write("<!-- speed summary: begin -->\n<!-- speed summary: end -->\n")
        bad = run(lean, "--replace", readme)
        expect(bad.returncode == 2 and "no speed summary" in bad.stderr,
               f"a summary from a grid without its peers not exit 2: {bad.returncode} {bad.stderr}")

        with open(readme, "w") as f:
            f.write("<!-- speed summary: begin -->\nno end\n")
        bad = run(grid, "--check", readme)
        expect(bad.returncode == 2 and "speed summary: end" in bad.stderr, "a lone marker not exit 2")
        empty = os.path.join(tmp, "empty.md")
        with open(empty, "w") as f:
            f.write("nothing here\n")
        bad = run(empty)
        expect(bad.returncode == 2 and "no OS-thread grid" in bad.stderr, "no grid not exit 2")
        expect(run(os.path.join(tmp, "absent.md")).returncode == 2, "a missing file not exit 2")

    for failure in failures:
        print(f"FAILED: {failure}")
    print("speed_table_test: " + ("ok" if not failures else f"{len(failures)} failed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
