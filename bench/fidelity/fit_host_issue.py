#!/usr/bin/env python3
"""Fits the host-issue model of the h200 device model (docs/simulator.md,
"Host issue") to a capture of an XLA program launched kernel by kernel.

Usage: fit_host_issue.py CAPTURE.csv

CAPTURE.csv is `streamlens export RUN --format csv` of a capture compiled
with command buffers off (--xla_gpu_enable_command_buffer=) and linked to
its module (records carry their step in `iteration`), on one stream. The
model: XLA's host thread issues the step's launches in order, a kernel
costing host_kernel_launch_us of host time and a cuBLAS call (a gemm record
whose instruction is not a fusion) host_library_call_us; a record starts at
the later of its issue and its predecessor's end plus stream_kernel_gap_us.
The step starts at its first record (the host is not ahead of it: JAX's
Python dispatch between steps takes longer than a step). The three numbers
are found by grid search minimising the squared error of the median step's
record start times, the measured durations kept; then the median step's
span is simulated again with them, and so is every step.
"""
import csv
import statistics
import sys


def steps_of(path):
    steps = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            it = int(r["iteration"])
            if it < 0 or r["kind"] == "wait":
                continue
            library = r["kind"] == "gemm" and "fusion" not in r["instruction"]
            steps.setdefault(it, []).append((int(r["start_ns"]), int(r["end_ns"]), library))
    return [sorted(s) for _, s in sorted(steps.items())]


def simulate(step, kernel_ns, library_ns, gap_ns):
    """Start times (relative to the first record) and the span."""
    starts, host, end = [], 0.0, None
    for k, (s, e, library) in enumerate(step):
        if k > 0:
            host += library_ns if library else kernel_ns
        start = host if end is None else max(host, end + gap_ns)
        starts.append(start)
        end = start + (e - s)
    return starts, end


def error(step, params):
    starts, _ = simulate(step, *params)
    t0 = step[0][0]
    return sum((a - (s - t0)) ** 2 for a, (s, _, _) in zip(starts, step))


def main(argv):
    steps = steps_of(argv[1])
    spans = [max(e for _, e, _ in s) - s[0][0] for s in steps]
    order = sorted(range(len(steps)), key=lambda i: spans[i])
    median = steps[order[(len(order) - 1) // 2]]
    best = None
    for kernel in range(30, 150):          # 3.0 .. 14.9 us
        for library in range(60, 400, 5):  # 6.0 .. 39.5 us
            for gap in range(-5, 20):      # -0.5 .. 1.9 us
                params = (kernel * 100.0, library * 100.0, gap * 100.0)
                e = error(median, params)
                if best is None or e < best[0]:
                    best = (e, params)
    e, params = best
    _, span = simulate(median, *params)
    measured = max(x for _, x, _ in median) - median[0][0]
    print(f"{len(steps)} steps, {len(median)} records a step, {sum(l for *_, l in median)} cuBLAS calls")
    print(f"host_kernel_launch_us {params[0] / 1e3:.1f}")
    print(f"host_library_call_us {params[1] / 1e3:.1f}")
    print(f"stream_kernel_gap_us {params[2] / 1e3:.1f}")
    print(f"rms start error {(e / len(median)) ** 0.5 / 1e3:.2f} us")
    print(f"median step: measured {measured / 1e3:.1f} us, simulated {span / 1e3:.1f} us "
          f"({(span / measured - 1) * 100:+.1f}%)")
    sims = [simulate(s, *params)[1] for s in steps]
    print(f"every step: measured median {statistics.median(spans) / 1e3:.1f} us, "
          f"simulated median {statistics.median(sims) / 1e3:.1f} us")


if __name__ == "__main__":
    main(sys.argv)
