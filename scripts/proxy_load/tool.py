#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Helpers of scripts/proxy_load.sh (docs/proxy.md), standard library only.

  tool.py stats PORT                  GET /admin/stats, the JSON on one line
  tool.py hold PORT COUNT SERVICES    opens COUNT keep-alive connections, each
                                      sends one GET /svc/<k mod S>/idle and
                                      reads its answer, then holds it; prints
                                      `held N failed F` once all are open,
                                      closes them all on SIGTERM/SIGINT or
                                      when its parent ends
  tool.py sample PID CSV              VmRSS of PID every 100 ms to CSV
                                      (t_s,rss_bytes) until PID ends or
                                      SIGTERM
  tool.py proc PID                    `rss_bytes=N cpu_us=N` (VmRSS, and
                                      utime+stime of /proc/PID/stat)
  tool.py summarize RUNS OUT CHANNELS the tables, ratios and final lines from
                                      the runs file (JSON lines), the
                                      Markdown file and the RSS chart
"""

import asyncio
import json
import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time


def http_get(port, path, timeout=10.0):
    """One GET over a fresh connection; returns (status, body bytes)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, body


def cmd_stats(port):
    status, body = http_get(int(port), "/admin/stats")
    if status != 200:
        sys.exit(f"tool.py stats: /admin/stats answered {status}")
    text = body.decode().strip()
    json.loads(text)  # one JSON object, or this fails
    print(text)


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def cpu_us(pid):
    with open(f"/proc/{pid}/stat") as f:
        stat = f.read()
    # Fields after the command name (which may hold spaces): state is 3rd,
    # utime the 14th and stime the 15th of the whole line.
    fields = stat[stat.rindex(")") + 2:].split()
    ticks = int(fields[11]) + int(fields[12])
    return ticks * 1_000_000 // os.sysconf("SC_CLK_TCK")


def cmd_proc(pid):
    print(f"rss_bytes={rss_bytes(pid)} cpu_us={cpu_us(pid)}")


def cmd_sample(pid, csv_path):
    stop = False

    def on_term(*_):
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    t0 = time.monotonic()
    with open(csv_path, "w") as out:
        out.write("t_s,rss_bytes\n")
        next_at = t0
        while not stop:
            try:
                rss = rss_bytes(pid)
            except OSError:
                break
            out.write(f"{time.monotonic() - t0:.3f},{rss}\n")
            out.flush()
            next_at += 0.1
            time.sleep(max(0.0, next_at - time.monotonic()))


async def hold(port, count, services):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    held = []
    failed = 0
    # A few requests at a time: each goes through the proxy's dispatch to
    # the backend, and the proxy's upstream pool grows to at most this many
    # connections per endpoint.
    gate = asyncio.Semaphore(32)

    async def open_one(k):
        nonlocal failed
        async with gate:
            try:
                reader, writer = await asyncio.wait_for(
                    asyncio.open_connection("127.0.0.1", port), 30)
                writer.write(f"GET /svc/{k % services}/idle HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
                await writer.drain()
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
                length = 0
                for line in head.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                if length:
                    await asyncio.wait_for(reader.readexactly(length), 30)
                held.append(writer)
            except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, ValueError):
                failed += 1

    await asyncio.gather(*(open_one(k) for k in range(count)))
    print(f"held {len(held)} failed {failed}", flush=True)

    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, done.set)
    parent = os.getppid()
    while not done.is_set() and os.getppid() == parent:
        try:
            await asyncio.wait_for(done.wait(), 1.0)
        except asyncio.TimeoutError:
            pass
    for writer in held:
        writer.close()


def cmd_hold(port, count, services):
    asyncio.run(hold(int(port), int(count), int(services)))


# ---------------------------------------------------------------- summary

METRICS = [
    # key, column title, digits
    ("rps", "req/s", 0),
    ("p50_us", "p50 µs", 0),
    ("p99_us", "p99 µs", 0),
    ("non2xx", "non-2xx", 0),
    ("socket_errors", "socket errors", 0),
    ("cpu_us_per_req", "CPU µs/req", 2),
    ("rss_idle_mib", "RSS idle MiB", 1),
    ("rss_peak_mib", "RSS peak MiB", 1),
    ("rss_after_mib", "RSS after MiB", 1),
    ("heap_per_idle_conn", "heap/idle conn B", 0),
    ("heap_per_service", "heap/service B", 0),
    ("rss_per_idle_conn", "RSS/idle conn B", 0),
]


def fmt(value, digits):
    return f"{value:,.{digits}f}".replace(",", "\u2009") if digits else f"{round(value):,}".replace(",", "\u2009")


def cell(values, digits):
    med = statistics.median(values)
    if len(values) == 1:
        return fmt(med, digits)
    return f"{fmt(med, digits)} ({fmt(min(values), digits)}–{fmt(max(values), digits)})"


def cmd_summarize(runs_path, out_dir, channel_list):
    channels = [c for c in channel_list.split(",") if c]
    runs = []
    with open(runs_path) as f:
        for line in f:
            if line.strip():
                runs.append(json.loads(line))
    for r in runs:
        for k in ("rss_idle", "rss_peak", "rss_after"):
            r[k + "_mib"] = r[k] / (1 << 20)
    by_channel = {c: sorted((r for r in runs if r["channel"] == c), key=lambda r: r["rep"]) for c in channels}
    by_channel = {c: rs for c, rs in by_channel.items() if rs}
    if not by_channel:
        print("proxy_load: no successful runs", file=sys.stderr)
        return 1
    reps = max(len(rs) for rs in by_channel.values())
    lines = []
    lines.append(f"Medians over {reps} repetition(s), (min–max) in brackets.")
    lines.append("")
    lines.append("| channel | " + " | ".join(t for _, t, _ in METRICS) + " | exit 0 |")
    lines.append("|---|" + "---:|" * len(METRICS) + "---:|")
    for c, rs in by_channel.items():
        cells = [cell([r[k] for r in rs], d) for k, _, d in METRICS]
        clean = sum(1 for r in rs if r["exit_code"] == 0)
        lines.append(f"| {c} | " + " | ".join(cells) + f" | {clean}/{len(rs)} |")
    for c, rs in by_channel.items():
        for r in rs:
            if r.get("idle_failed"):
                lines.append(f"\n{c}, repetition {r['rep']}: {r['idle_failed']} idle connection(s) "
                             f"failed to open; per-connection figures divide by the {r['idle_held']} held.")
            if r["exit_code"] != 0:
                lines.append(f"\n{c}, repetition {r['rep']}: exit status {r['exit_code']} after SIGTERM.")
    if "leanchan" in by_channel and len(by_channel) > 1:
        lines.append("")
        lines.append("leanchan over each other row: the median of per-repetition ratios, (min–max). "
                     "req/s above 1 and p99 below 1 favour leanchan.")
        lines.append("")
        lines.append("| leanchan over | req/s ratio | p99 ratio |")
        lines.append("|---|---:|---:|")
        lean = {r["rep"]: r for r in by_channel["leanchan"]}
        for c, rs in by_channel.items():
            if c == "leanchan":
                continue
            rps, p99 = [], []
            for r in rs:
                mine = lean.get(r["rep"])
                if mine is None:
                    continue
                if r["rps"] > 0:
                    rps.append(mine["rps"] / r["rps"])
                if r["p99_us"] > 0:
                    p99.append(mine["p99_us"] / r["p99_us"])
            lines.append(f"| {c} | {cell(rps, 2) if rps else '-'} | {cell(p99, 2) if p99 else '-'} |")

    # The chart: RSS during the wrk run, the median-req/s repetition of each
    # channel.
    chart = None
    series = []
    for c, rs in by_channel.items():
        ordered = sorted(rs, key=lambda r: r["rps"])
        pick = ordered[(len(ordered) - 1) // 2]
        if os.path.exists(pick["rss_csv"]):
            series.append((c, pick["rss_csv"], pick["rep"]))
    if series and shutil.which("gnuplot"):
        chart = os.path.join(out_dir, "rss.svg")
        plots = ", ".join(
            f"'{csv}' using 1:($2/1048576) with lines title '{c} (rep {rep})'" for c, csv, rep in series)
        script = (
            "set terminal svg size 900,480 dynamic font 'sans,11'\n"
            f"set output '{chart}'\n"
            "set datafile separator ','\n"
            "set key top left\n"
            "set xlabel 'seconds since wrk started'\n"
            "set ylabel 'proxy RSS (MiB)'\n"
            "set title 'proxy RSS during the wrk run (sampled every 100 ms)'\n"
            "set grid\n"
            f"plot {plots}\n")
        with open(os.path.join(out_dir, "rss.gp"), "w") as f:
            f.write(script)
        if subprocess.run(["gnuplot", os.path.join(out_dir, "rss.gp")]).returncode != 0:
            chart = None
    lines.append("")
    if chart:
        lines.append(f"RSS over time: {chart} (the median-req/s repetition of each channel).")
    else:
        lines.append("RSS over time: no chart (gnuplot missing or failed); CSVs in " + out_dir)

    table = "\n".join(lines) + "\n"
    sys.stdout.write(table)
    with open(os.path.join(out_dir, "proxy-load.md"), "w") as f:
        f.write("# proxy load\n\n" + table)
    print(f"proxy_load: table in {os.path.join(out_dir, 'proxy-load.md')}", file=sys.stderr)
    print()
    for c, rs in by_channel.items():
        med = {k: statistics.median([r[k] for r in rs]) for k in
               ("rps", "p99_us", "heap_per_idle_conn", "heap_per_service", "rss_per_idle_conn",
                "non2xx", "socket_errors")}
        print(f"channel={c} rps={round(med['rps'])} p99_us={round(med['p99_us'])} "
              f"heap_per_idle_conn={round(med['heap_per_idle_conn'])} "
              f"heap_per_service={round(med['heap_per_service'])} "
              f"rss_per_idle_conn={round(med['rss_per_idle_conn'])} "
              f"non2xx={round(med['non2xx'])} socket_errors={round(med['socket_errors'])}")
    return 0


def main(argv):
    commands = {
        "stats": (cmd_stats, 1),
        "hold": (cmd_hold, 3),
        "sample": (cmd_sample, 2),
        "proc": (cmd_proc, 1),
        "summarize": (cmd_summarize, 3),
    }
    if len(argv) < 2 or argv[1] not in commands or len(argv) - 2 != commands[argv[1]][1]:
        sys.stderr.write(__doc__)
        return 2
    return commands[argv[1]][0](*argv[2:]) or 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
