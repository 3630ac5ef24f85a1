#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Counts the speed goals of docs/results.md ("Where the speed goals end") over the tables
# scripts/peers.sh prints:  scripts/peer_goals.py < table.md
import math
import sys

text = sys.stdin.read()
tables = []
cur = None
for line in text.splitlines():
    if line.startswith('|'):
        cells = [c.strip().strip('*') for c in line.strip().strip('|').split('|')]
        if cur is None:
            cur = {'head': cells, 'rows': []}
        elif set(''.join(cells)) <= set('-: '):
            continue
        else:
            cur['rows'].append(cells)
    else:
        if cur is not None:
            tables.append(cur); cur = None
if cur is not None: tables.append(cur)

def num(x):
    try: return float(x.replace(',', ''))
    except: return None

grid = {}     # (size, P, cap) -> {design: Mmsg/s}
pp = {}       # design -> ns per round trip (OS-thread table)
task = {}
task_pp = {}
floor = []    # (size or 'ping-pong', design, measured / floor)
section = 0
for t in tables:
    h = t['head']
    if h[:4] == ['size', 'P', 'cap', 'N']:
        target = task if 'leanchan-coro' in h else grid
        for r in t['rows']:
            if r[0] == 'geomean' or not r[0]: continue
            key = (int(r[0]), int(r[1]), int(r[2]))
            for i, name in enumerate(h):
                if i >= 4 and 'cpu' not in name and '/' not in name:
                    v = num(r[i])
                    if v is not None: target.setdefault(key, {})[name] = v
    elif h[:4] == ['size', 'design', 'single-thread ns', 'floor ns']:
        for r in t['rows']:
            v = num(r[-1])
            if v is not None: floor.append((r[0], r[1], v))
    elif h[:1] == ['N'] and len(h) > 2:
        target = task_pp if 'leanchan-coro' in h else pp
        r = t['rows'][0]
        for i, name in enumerate(h):
            if i >= 1 and 'cpu' not in name and '/' not in name:
                v = num(r[i])
                if v is not None: target[name] = v

def check(label, pairs):
    met = sum(1 for ok, _ in pairs if ok)
    print(f"{label}: {met}/{len(pairs)} met")
    for ok, what in pairs:
        if not ok: print(f"   missed: {what}")

for lean in ('leanchan-b8', 'leanchan-b32'):
    g1 = []; g2 = []; g3 = []; g4 = []
    for key, row in sorted(grid.items()):
        size, p, cap = key
        if lean not in row: continue
        for peer in ('crossbeam',) if cap == 1024 else ():
            if peer in row: g1.append((row[lean] >= row[peer], f"{key} {row[lean]:.2f} vs {peer} {row[peer]:.2f} ({row[lean]/row[peer]:.2f}x)"))
        if cap in (16, 1024):
            for peer in ('tokio', 'go', 'moodycamel'):
                if peer in row: g2.append((row[lean] >= row[peer], f"{key} {row[lean]:.2f} vs {peer} {row[peer]:.2f} ({row[lean]/row[peer]:.2f}x)"))
        if cap == 1:
            for peer in ('crossbeam', 'moodycamel'):
                if peer in row: g3.append((row[lean] >= row[peer], f"{key} {row[lean]:.2f} vs {peer} {row[peer]:.2f} ({row[lean]/row[peer]:.2f}x)"))
        if 'onetbb' in row:
            g4.append((row[lean] >= row['onetbb'], f"{key} {row[lean]:.2f} vs onetbb {row['onetbb']:.2f} ({row[lean]/row['onetbb']:.2f}x)"))
    print(f"== {lean}")
    check("  >= crossbeam at capacity 1024", g1)
    check("  >= tokio, go, moodycamel at capacities 16 and 1024", g2)
    check("  >= crossbeam and moodycamel at capacity 1", g3)
    if g4: check("  >= oneTBB's concurrent_bounded_queue in every row", g4)
    fl = [(v <= 2.0, f"{what} {v:.2f}x the floor") for what, d, v in floor if d == lean]
    if fl: check("  within 2x of the floor (capacity 1024, ping-pong)", fl)
    if lean in pp and 'crossbeam' in pp:
        print(f"  ping-pong {pp[lean]:.0f} ns vs crossbeam {pp['crossbeam']:.0f}: {'met' if pp[lean] <= pp['crossbeam'] else 'missed'} ({pp[lean]/pp['crossbeam']:.2f}x)")
if task:
    g = []
    for key, row in sorted(task.items()):
        for peer in ('tokio', 'asio-channel'):
            if 'leanchan-coro' in row and peer in row:
                g.append((row['leanchan-coro'] >= row[peer], f"{key} coro {row['leanchan-coro']:.2f} vs {peer} {row[peer]:.2f} ({row['leanchan-coro']/row[peer]:.2f}x)"))
    check("coroutine throughput >= tokio tasks and asio-channel", g)
    if 'leanchan-coro' in task_pp and 'tokio' in task_pp:
        r = task_pp['leanchan-coro'] / task_pp['tokio']
        print(f"coroutine ping-pong {task_pp['leanchan-coro']:.0f} ns vs tokio {task_pp['tokio']:.0f}: {r:.2f}x ({'met' if r <= 1.5 else 'missed'}: goal 1.5x)")
def geo(lean, peer, caps=(1, 16, 1024)):
    xs = [row[lean]/row[peer] for key, row in grid.items() if key[2] in caps and lean in row and peer in row]
    return math.exp(sum(map(math.log, xs))/len(xs)) if xs else float('nan'), len(xs)
print("geometric means of leanchan's throughput over each peer's (rows compared):")
for lean in ('leanchan-b8', 'leanchan-b32'):
    means = [(peer,) + geo(lean, peer) for peer in ('crossbeam', 'tokio', 'go', 'moodycamel', 'onetbb', 'flume')]
    print(f"  {lean}: " + ', '.join(f"{peer} {g:.2f}x ({n})" for peer, g, n in means if n))
