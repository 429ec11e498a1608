#!/usr/bin/env python3
"""The gap between a CUDA graph's consecutive nodes, by GPU, from captures.

Usage: graph_node_gaps.py LABEL=DIR[,DIR...] ...

Each DIR holds capture directories as bench/gpu/capture_jax.sh writes them
(NAME_def/capture.jsonl beside NAME_def/dump/), e.g. a hold-out archive
unpacked; only XLA's default modules (`*_def`) count, whose steps run as
command buffers. For each capture, over the last 60% of its kernel records
(the steps; autotuning comes first): each record's gap to the next record of
its stream when that starts less than 1 us after it ends (a node of the same
graph), split by whether the instruction was launched with programmatic
dependent launch (frontend attribute xla.pdl_launch="true" in the optimized
module). Prints, per LABEL, the median over captures of each capture's
median gap: the statistic of the device files' graph_node_gap_us fields.
"""
import glob
import json
import os
import re
import statistics
import sys


def pdl_kernel_names(module_path):
    text = open(module_path).read()
    names = set()
    for m in re.finditer(r'%([\w.\-]+) = [^\n]*?xla\.pdl_launch="true"', text):
        names.add(re.sub(r"[^A-Za-z0-9_]", "_", m.group(1)))
    return names


def capture_medians(capture):
    """(median gap after a PDL launch, after other kernels), None if < 3."""
    directory = os.path.dirname(capture)
    modules = glob.glob(directory + "/dump/*jit_*gpu_after_optimizations.txt")
    if not modules:
        return None, None
    pdl = pdl_kernel_names(modules[0])
    kernels = []
    with open(capture) as f:
        for line in f:
            record = json.loads(line)
            if record.get("k") == "kernel":
                kernels.append(record)
    kernels.sort(key=lambda r: r["start"])
    kernels = kernels[int(len(kernels) * 0.6):]
    after_pdl, after_other = [], []
    for a, b in zip(kernels, kernels[1:]):
        if a["stream"] != b["stream"]:
            continue
        gap_us = (b["start"] - a["end"]) / 1e3
        if gap_us > 1.0:
            continue
        (after_pdl if a["name"] in pdl else after_other).append(gap_us)
    pick = lambda v: statistics.median(v) if len(v) >= 3 else None
    return pick(after_pdl), pick(after_other)


def main():
    if len(sys.argv) < 2 or any("=" not in a for a in sys.argv[1:]):
        sys.exit(__doc__)
    for arg in sys.argv[1:]:
        label, dirs = arg.split("=", 1)
        pdl, other = [], []
        for d in dirs.split(","):
            for capture in sorted(glob.glob(d + "/**/*_def/capture.jsonl", recursive=True)):
                a, o = capture_medians(capture)
                if a is not None:
                    pdl.append(a)
                if o is not None:
                    other.append(o)
        for what, v in (("after a PDL launch", pdl), ("after other kernels", other)):
            if v:
                print(f"{label}: {what}: median {statistics.median(v):+.3f} us over {len(v)} captures")
            else:
                print(f"{label}: {what}: no captures")


if __name__ == "__main__":
    main()
