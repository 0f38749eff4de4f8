#!/usr/bin/env python3
"""Prints the medians of the last `cargo bench -p fusebox-benches --bench compare` run as a
Markdown table, with each case's overhead over its group's baseline and ratio to fusebox."""
import json
import pathlib
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "target/criterion")
BASELINES = {"bulkhead": "tokio Semaphore::try_acquire + call"}


def fmt(ns):
    return f"{ns / 1e6:.2f} ms" if ns >= 1e6 else f"{ns / 1e3:.1f} µs" if ns >= 1e4 else f"{ns:.1f} ns"


for group in sorted(p for p in root.iterdir() if p.is_dir() and p.name != "report"):
    rows = []
    for bench in sorted(group.iterdir()):
        est = bench / "new" / "estimates.json"
        bj = bench / "new" / "benchmark.json"
        if not est.exists() or not bj.exists():
            continue
        name = json.loads(bj.read_text())["function_id"]
        rows.append((name, json.loads(est.read_text())["median"]["point_estimate"]))
    if not rows:
        continue
    title = json.loads((group / rows[0][0].replace("/", "_")).parent.joinpath(
        next(b.name for b in group.iterdir() if (b / "new" / "benchmark.json").exists()),
        "new", "benchmark.json").read_text())["group_id"]
    base = dict(rows).get(BASELINES.get(title, "bare call"))
    print(f"\n### {title}\n")
    print("| case | median | over baseline |")
    print("|---|---:|---:|")
    for name, ns in sorted(rows, key=lambda r: r[1]):
        over = "" if base is None or name == BASELINES.get(title, "bare call") else f"{ns - base:+.1f} ns"
        print(f"| {name} | {fmt(ns)} | {over} |")
