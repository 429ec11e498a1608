#!/usr/bin/env python3
"""The what-ifs' errors beside the measured runs' own step-to-step spread.

Usage: step_spread.py STREAMLENS DB [DB ...]

Each DB is one that bench/fidelity/whatif_score.sh left behind: captures
imported as PROGRAM_SETTING, and each simulated step as a run named
"PROGRAM_SETTING from RUN". For every capture, `streamlens compare --json`
gives the middle half of its steps' lengths (`middle_half_ns`); for every
what-if across settings (and def <-> def2), the error of the simulated step
against the measured median step. Prints, per direction, how many are
within 5% and how many within the measured run's middle-half width, and
that width as a share of the median step (bench/FIDELITY-real.md, "Step to
step, process to process").
"""
import collections
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from busy_idle_split import runs_of  # noqa: E402  (the same databases, read the same way)


def compare(streamlens, db, a, b):
    out = subprocess.run([streamlens, "compare", a, b, "--db", db, "--json"], capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out)


def what_ifs(streamlens, db):
    captures, simulated = runs_of(streamlens, db)
    name_of = {run: name for name, run in captures.items()}
    for run, name, source in simulated:
        if name_of.get(source, name) == name or name not in captures:
            continue  # a replay
        c = compare(streamlens, db, captures[name], run)
        if "middle_half_ns" not in c["a"]:
            continue  # too few steps for a spread
        low, high = c["a"]["middle_half_ns"]
        error = 100.0 * c["makespan_delta_ns"] / c["makespan_a_ns"]
        direction = (name_of[source].rsplit("_", 1)[-1], name.rsplit("_", 1)[-1])
        yield direction, error, 100.0 * (high - low) / c["makespan_a_ns"]


def main():
    streamlens, dbs = sys.argv[1], sys.argv[2:]
    by_direction = collections.defaultdict(list)
    for db in dbs:
        for direction, error, width in what_ifs(streamlens, db):
            by_direction[direction].append((error, width))
    print("| what-if | count | within 5% | \\|error\\| under the width of the measured run's middle half of steps"
          " | that width, median |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for (a, b), rows in sorted(by_direction.items()):
        within_5 = sum(abs(e) <= 5 for e, _ in rows)
        within_width = sum(abs(e) <= w for e, w in rows)
        width = statistics.median(w for _, w in rows)
        print(f"| {a} -> {b} | {len(rows)} | {within_5} | {within_width} | {width:.1f}% |")


if __name__ == "__main__":
    main()
