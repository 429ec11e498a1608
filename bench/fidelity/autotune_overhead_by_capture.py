#!/usr/bin/env python3
"""The autotuning log's overhead as each capture's own log shows it, by
backend: for every instruction the capture ran in its steps and its log
timed, the log's fastest candidate less the measured time per launch over
kAutotuneScale (0.95), the median over the steps (sim/trace_driven.h's
estimate, read from the outside). Prints one line a capture and backend,
and the median over the captures with 3 or more instructions: what
default_autotune_overhead_ns takes (bench/FIDELITY-real.md).

    bench/fidelity/autotune_overhead_by_capture.py STREAMLENS DB CAPTURES

DB holds the captures imported and linked (bench/fidelity/whatif_score.sh
writes one); CAPTURES is the folder of NAME/{capture.jsonl,dump/}.
"""
import csv
import io
import os
import re
import statistics
import subprocess
import sys
from collections import defaultdict

SCALE = 0.95
MIN_SAMPLES = 3


def fastest_candidates(log_path):
    """instruction -> (backend, ns) of its fastest candidate in the log."""
    out = {}
    text = open(log_path).read()
    for block in text.split("instruction_profiles {")[1:]:
        name = re.search(r'hlo_text: "%([^ ]+) =', block)
        if not name:
            continue
        best = None
        for m in re.finditer(r"backend: (\w+).*?run_time \{\s*nanos: (\d+)", block, re.S):
            if best is None or int(m.group(2)) < best[1]:
                best = (m.group(1), int(m.group(2)))
        if best:
            out[name.group(1)] = best
    return out


def query(streamlens, db, sql):
    out = subprocess.run([streamlens, "query", "--db", db, "--csv", sql], capture_output=True, text=True,
                         check=True).stdout
    return list(csv.reader(io.StringIO(out)))[1:]


def per_launch_ns(streamlens, db, run_id):
    """instruction -> median over the steps of its time per launch."""
    steps = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for name, step, dur in query(streamlens, db, "select instruction, iteration, dur_ns from events "
                                 f"where run_id = {int(run_id)} and iteration >= 0"):
        if name:
            steps[name][int(step)][0] += int(dur)
            steps[name][int(step)][1] += 1
    return {name: statistics.median(ns / n for ns, n in by_step.values()) for name, by_step in steps.items()}


def main():
    streamlens, db, root = sys.argv[1:4]
    by_backend = defaultdict(list)
    for run_id, name in query(streamlens, db, "select id, name from runs where backend = 'capture' order by name"):
        log = os.path.join(root, name, "dump", "autotune_logs.txt")
        if not os.path.exists(log):
            continue
        measured = per_launch_ns(streamlens, db, run_id)
        samples = defaultdict(list)
        for instruction, (backend, ns) in fastest_candidates(log).items():
            if instruction in measured:
                samples[backend].append(ns - measured[instruction] / SCALE)
        for backend, v in sorted(samples.items()):
            median = statistics.median(v)
            print(f"{name}\t{backend}\t{len(v)} instructions\tmedian {median:.0f} ns")
            if len(v) >= MIN_SAMPLES:
                by_backend[backend].append(median)
    for backend, v in sorted(by_backend.items()):
        print(f"all\t{backend}\t{len(v)} captures with {MIN_SAMPLES}+\tmedian {statistics.median(v):.0f} ns")


if __name__ == "__main__":
    main()
