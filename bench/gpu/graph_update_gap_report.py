#!/usr/bin/env python3
"""Per capture file of bench/gpu/graph_update_gap.py: for each graph launch
(CUPTI gives its records one correlation id) with at least 4 records, the
GPU's idle time inside it (the gaps between consecutive records) and its
largest gap; the medians over launches.
  graph_update_gap_report.py CAPTURE.jsonl ...
"""
import json
import statistics
import sys


def launches(path):
    by_corr = {}
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if "start" in r and r.get("k") in ("kernel", "memset", "memcpy"):
                by_corr.setdefault(r["corr"], []).append(r)
    for records in by_corr.values():
        if len(records) >= 4:
            records.sort(key=lambda r: r["start"])
            yield records


def main(paths):
    for path in paths:
        idle, largest = [], []
        for records in launches(path):
            gaps, end = [], records[0]["end"]
            for r in records[1:]:
                gaps.append(max(0, r["start"] - end))
                end = max(end, r["end"])
            idle.append(sum(gaps) / 1e3)
            largest.append(max(gaps) / 1e3)
        if not idle:
            print(f"{path}: no graph launch")
            continue
        print(f"{path}: {len(idle)} graph launches, median idle {statistics.median(idle):.1f} us "
              f"(largest gap {statistics.median(largest):.1f} us) inside each")


if __name__ == "__main__":
    main(sys.argv[1:])
