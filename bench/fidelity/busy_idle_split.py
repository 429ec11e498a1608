#!/usr/bin/env python3
"""What the what-ifs miss by: the GPU's busy time and its idle time.

Usage: busy_idle_split.py STREAMLENS DB [DB ...]

Each DB is one that bench/fidelity/whatif_score.sh left behind: captures
imported as PROGRAM_SETTING, and each simulated step as a run named
"PROGRAM_SETTING from RUN" (the module of SETTING with the kernel times of
capture RUN). For every what-if across settings, `streamlens compare
MEASURED SIMULATED --json` splits both steps into busy time (some record
running on the GPU) and idle time; the differences are printed per
direction as shares of the measured step, with how many lie within 5%
(bench/FIDELITY-real.md, "What the what-ifs miss by").
"""
import collections
import json
import re
import statistics
import subprocess
import sys


def runs_of(streamlens, db):
    out = subprocess.run([streamlens, "runs", "--db", db], capture_output=True, text=True, check=True).stdout
    captures, simulated = {}, []
    for line in out.splitlines()[1:]:
        cols = line.split()
        if len(cols) > 3 and cols[3] == "capture":
            captures[cols[1]] = cols[0]
        m = re.match(r"\s*(\d+)\s+(\S+) from (\d+)\s", line)
        if m:
            simulated.append((m.group(1), m.group(2), m.group(3)))
    return captures, simulated


def split(streamlens, db, measured, simulated):
    """(step, busy, idle) differences in % of the measured step, or None."""
    out = subprocess.run([streamlens, "compare", measured, simulated, "--db", db, "--json"],
                         capture_output=True, text=True).stdout
    if not out:
        return None
    c = json.loads(out)

    def total(side, key):
        return sum(d[key] for d in c[side]["idle"])

    step = c["makespan_a_ns"]
    if step <= 0:
        return None
    return tuple(100.0 * x / step for x in (c["makespan_b_ns"] - step, total("b", "busy_ns") - total("a", "busy_ns"),
                                            total("b", "idle_ns") - total("a", "idle_ns")))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    streamlens = sys.argv[1]
    by_direction = collections.defaultdict(list)
    for db in sys.argv[2:]:
        captures, simulated = runs_of(streamlens, db)
        name_of = {run: name for name, run in captures.items()}
        for run, target, source in simulated:
            if target not in captures or source not in name_of:
                continue
            a, b = name_of[source].rsplit("_", 1)[1], target.rsplit("_", 1)[1]
            if a == b:
                continue  # a replay
            parts = split(streamlens, db, captures[target], run)
            if parts:
                by_direction[f"{a} -> {b}"].append(parts)
    print("| direction | what-ifs | step, mean |error| (within 5%) | busy time (within 5%) | idle time (within 5%) |")
    print("| --- | ---: | --- | --- | --- |")
    for direction, rows in sorted(by_direction.items()):
        cells = []
        for i in range(3):
            values = [abs(r[i]) for r in rows]
            cells.append(f"{statistics.mean(values):.2f}% ({sum(v <= 5 for v in values)})")
        print(f"| {direction} | {len(rows)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
