#!/usr/bin/env python3
"""One process of bench/gpu/host_pace_affinity.sh: runs a program of
tests/corpus/jax/make_dumps.py for STEPS steps and prints one JSON line:
JAX's own step times (median, p10, p90), a pure-Python loop's time before
and after (the host core's speed, whatever the GPU does), and the CPUs the
process could run on and last ran on.

    python3 bench/gpu/host_pace_probe.py PROGRAM LABEL [STEPS] --size large

The compiled executable comes from JAX's persistent cache when
JAX_COMPILATION_CACHE_DIR is set, so every process of a program runs the
same kernels and only the host differs.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../tests/corpus/jax"))
import make_dumps  # noqa: E402  (reads --size from sys.argv)


def python_loop_ms():
    """A fixed pure-Python workload: the host core's pace, no CUDA in it."""
    t0 = time.perf_counter()
    total = 0
    for i in range(300_000):
        total += i & 7
    return (time.perf_counter() - t0) * 1e3


def last_cpu():
    with open("/proc/self/stat") as fh:
        return int(fh.read().rsplit(")", 1)[1].split()[36])


def main():
    args = [a for i, a in enumerate(sys.argv[1:], 1) if a != "--size" and sys.argv[i - 1] != "--size"]
    program, label = args[0], args[1]
    steps = int(args[2]) if len(args) > 2 else 200
    loop_before = min(python_loop_ms() for _ in range(5))
    import numpy as np
    import jax
    cache = os.environ.get("JAX_COMPILATION_CACHE_DIR")
    if cache:
        jax.config.update("jax_compilation_cache_dir", cache)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    import jax.numpy as jnp
    f, shapes = make_dumps.SINGLE[program](jnp, jax)
    jitted = jax.jit(f, keep_unused=True)
    inputs = [jax.device_put(make_dumps.ramp(np, a.shape, a.dtype, p)) for p, a in enumerate(shapes)]
    jax.block_until_ready(jitted(*inputs))
    for _ in range(10):
        jax.block_until_ready(jitted(*inputs))
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        jax.block_until_ready(jitted(*inputs))
        times.append((time.perf_counter() - t0) * 1e3)
    loop_after = min(python_loop_ms() for _ in range(5))
    times.sort()
    print(json.dumps({
        "program": program, "label": label, "steps": steps,
        "step_ms_median": times[len(times) // 2], "step_ms_p10": times[len(times) // 10],
        "step_ms_p90": times[len(times) * 9 // 10],
        "python_loop_ms_before": loop_before, "python_loop_ms_after": loop_after,
        "cpus_allowed": sorted(os.sched_getaffinity(0)), "last_cpu": last_cpu(),
    }), flush=True)


if __name__ == "__main__":
    main()
