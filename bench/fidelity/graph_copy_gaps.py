#!/usr/bin/env python3
"""A graph node's hand-over cost between the copy engines and the SMs.

Usage: graph_copy_gaps.py STREAMLENS LABEL=DB[@ROOT][,DB[@ROOT]...] ...

Each DB is a database bench/fidelity/whatif_score.sh left, holding the
captures of programs under XLA's defaults (NAME_def) and with command
buffers off (NAME_cboff). For each program, each instruction's records in
the default capture's steps are classed by what they follow on their stream
within 3 us (a node of the same graph): a kernel after a kernel, a kernel
after a memcpy/memset node, a memcpy/memset node after a kernel, one after
another. Per instruction with 3 records or more of a class: its median gap
after its predecessor, its median time there less its median time in the
cboff capture (launched alone), and the sum of both (what the node costs a
step beyond its time alone). Prints, per LABEL and class, the medians over
the instructions, and the spread and median of the programs' own medians (a
program counts once a database: once a set and protocol).

With @ROOT (the captures' folder the database was scored from, holding
PROGRAM_def/dump/), each class is split by whether XLA records the default
module's graphs again before each launch (a command buffer holding a
dynamic-slice fusion: a scan's body), as `streamlens lower` says
(bench/FIDELITY-real.md, hold-out set 30).
"""
import collections
import csv
import glob
import io
import re
import statistics
import subprocess
import sys


def query(streamlens, db, sql):
    out = subprocess.run([streamlens, "query", sql, "--db", db, "--csv"], capture_output=True, text=True, check=True)
    return list(csv.DictReader(io.StringIO(out.stdout)))


def is_copy(kind):
    return kind in ("copy", "memset")


def graphs_recorded_again(streamlens, root, program):
    """'recorded again' or 'as recorded' for the default module's graphs."""
    modules = glob.glob(f"{root}/{program}_def/dump/*jit_*gpu_after_optimizations.txt")
    if not modules:
        return "no module"
    out = subprocess.run([streamlens, "lower", modules[0]], capture_output=True, text=True).stdout
    return "recorded again" if re.search(r"\d+ launches recorded again", out) else "as recorded"


def program_rows(streamlens, db, root=None):
    """(class, program, gap, time - alone, gap + time - alone) per instruction."""
    runs = {r["name"]: r["id"] for r in query(streamlens, db, "select id, name from runs where backend = 'capture'")}
    programs = sorted({re.sub(r"_(def2?|cboff|notriton)$", "", n) for n in runs})
    rows = []
    for program in programs:
        graphs, alone_run = runs.get(program + "_def"), runs.get(program + "_cboff")
        if not graphs or not alone_run:
            continue
        classed = collections.defaultdict(list)
        previous = None
        for e in query(streamlens, db, f"select stream, kind, instruction, start_ns, end_ns, dur_ns from events "
                                       f"where run_id = {graphs} and step is not null order by stream, start_ns"):
            if previous is not None and previous["stream"] == e["stream"] and e["instruction"]:
                gap = int(e["start_ns"]) - int(previous["end_ns"])
                if gap < 3000:
                    cls = ("copy" if is_copy(previous["kind"]) else "kernel") + " > " + \
                          ("copy" if is_copy(e["kind"]) else "kernel")
                    classed[(cls, e["instruction"])].append((int(e["dur_ns"]), gap))
            previous = e
        alone = collections.defaultdict(list)
        for e in query(streamlens, db, f"select instruction, dur_ns from events where run_id = {alone_run} "
                                       f"and step is not null"):
            alone[e["instruction"]].append(int(e["dur_ns"]))
        graphs = f" ({graphs_recorded_again(streamlens, root, program)})" if root else ""
        for (cls, instruction), samples in classed.items():
            if instruction not in alone or len(samples) < 3:
                continue
            time = statistics.median(t for t, _ in samples)
            gap = statistics.median(g for _, g in samples)
            extra = time - statistics.median(alone[instruction])
            rows.append((cls + graphs, (db, program), gap, extra, gap + extra))
    return rows


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    streamlens = sys.argv[1]
    print("| label | follows | instructions | programs | gap (ns) | time - alone (ns) | beyond alone (ns) "
          "| programs' medians, beyond alone (ns) | their median (ns) |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |")
    for arg in sys.argv[2:]:
        label, dbs = arg.split("=", 1)
        by_class = collections.defaultdict(list)
        for item in dbs.split(","):
            db, _, root = item.partition("@")
            for row in program_rows(streamlens, db, root or None):
                by_class[row[0]].append(row)
        for cls in sorted(by_class):
            rows = by_class[cls]
            per_program = collections.defaultdict(list)
            for r in rows:
                per_program[r[1]].append(r[4])
            spread = sorted(statistics.median(v) for v in per_program.values())
            print(f"| {label} | {cls} | {len(rows)} | {len(per_program)} | {statistics.median(r[2] for r in rows):.0f} "
                  f"| {statistics.median(r[3] for r in rows):.0f} | {statistics.median(r[4] for r in rows):.0f} "
                  f"| {spread[0]:.0f} to {spread[-1]:.0f} | {statistics.median(spread):.0f} |")


if __name__ == "__main__":
    main()
