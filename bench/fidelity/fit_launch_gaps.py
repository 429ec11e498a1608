#!/usr/bin/env python3
"""Fits the launch gaps of the h200 device model from linked captures.

Usage: fit_launch_gaps.py graph=A.csv[,B.csv] stream=C.csv[,D.csv]

Each CSV is `streamlens export RUN --format csv` of a capture linked to its
module (records carry their step in `iteration`). For each step: the mean
gap between consecutive records is (span - sum of durations) / (records - 1),
so the gaps sum to what the step really paid (overlaps count negative).
Captures whose step is one command buffer give graph_node_gap_us; captures
compiled with command buffers off give stream_launch_us. Per group: the
median step's gap total of each capture, summed over the captures, over
their gaps per step (what a median step pays a gap), in us.
"""
import csv
import statistics
import sys


def step_gaps(path):
    steps = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            it = int(r["iteration"])
            if it < 0 or r["kind"] == "wait":
                continue
            steps.setdefault(it, []).append((int(r["start_ns"]), int(r["end_ns"])))
    out = []  # (sum of gaps, number of gaps) per step
    for records in steps.values():
        span = max(e for _, e in records) - min(s for s, _ in records)
        busy = sum(e - s for s, e in records)
        out.append((span - busy, len(records) - 1))
    return out


def main(argv):
    groups = {}
    for arg in argv[1:]:
        key, _, files = arg.partition("=")
        groups[key] = files.split(",")
    for key, files in groups.items():
        total = count = 0
        for path in files:
            gaps = step_gaps(path)
            median_total = statistics.median(g for g, _ in gaps)
            n = gaps[0][1]
            total += median_total
            count += n
            print(f"  {path}: median step {median_total / n / 1e3:.3f} us a gap ({n} gaps, {len(gaps)} steps)")
        print(f"{key}: {total / count / 1e3:.3f} us")

if __name__ == "__main__":
    main(sys.argv)
