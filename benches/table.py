#!/usr/bin/env python3
"""Prints the medians of the last `cargo bench -p fusebox-benches --bench compare` run as
Markdown tables: each case's overhead over its group's baseline, and for the contention group
the ratio of 2 tasks to 1 task. Usage: python3 benches/table.py [target/criterion]"""
import json
import pathlib
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "target/criterion")
BASELINE = {"bulkhead": "tokio Semaphore::try_acquire + call"}


def fmt(ns):
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e4:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns:.1f} ns"


groups = {}
for bj in root.glob("*/*/new/benchmark.json"):
    meta = json.loads(bj.read_text())
    median = json.loads((bj.parent / "estimates.json").read_text())["median"]["point_estimate"]
    groups.setdefault(meta["group_id"], []).append((meta["function_id"], median))

for title in sorted(groups):
    rows = dict(groups[title])
    print(f"\n### {title}\n")
    if title == "contention":
        print("| case | 1 task | 2 tasks | 2 tasks / 1 task |")
        print("|---|---:|---:|---:|")
        for case in sorted({n.rsplit(" / ", 1)[0] for n in rows}, key=lambda c: rows.get(c + " / 1 task", 0)):
            one, two = rows.get(case + " / 1 task"), rows.get(case + " / 2 tasks")
            if one and two:
                print(f"| {case} | {fmt(one)} | {fmt(two)} | {two / one:.2f}x |")
        continue
    base_name = BASELINE.get(title, "bare call")
    base = rows.get(base_name)
    print("| case | median | over baseline |" if base else "| case | median |")
    print("|---|---:|---:|" if base else "|---|---:|")
    for name, ns in sorted(rows.items(), key=lambda r: r[1]):
        if base is None:
            print(f"| {name} | {fmt(ns)} |")
        else:
            over = "(baseline)" if name == base_name else f"{ns - base:+.1f} ns ({ns / base:.2f}x)"
            print(f"| {name} | {fmt(ns)} | {over} |")
