#!/usr/bin/env python3
"""Does re-recording a command buffer every step cost GPU time too?

JAX's step in tests/corpus/jax/make_dumps.py keeps the last step's outputs
alive while the next step runs, so XLA finds its buffers moved and records
the step's command buffer again before every launch (bench/gpu/
command_buffer_updates.sh). Run one program both ways:
  graph_update_gap.py PROGRAM keep  # as make_dumps.py: outputs kept, buffers alternate
  graph_update_gap.py PROGRAM drop  # outputs dropped first: the same buffers each step
under streamlens' capture (bench/gpu/graph_update_gap.sh), then compare the
GPU's idle time inside each graph launch (graph_update_gap_report.py).
"""
import os
import sys

sys.argv += ["--size", "large"]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../tests/corpus/jax"))
import make_dumps  # noqa: E402  (reads --size from argv)


def main(name, mode):
    import jax
    import numpy as np
    f, args = make_dumps.SINGLE[name](jax.numpy, jax)
    jitted = jax.jit(f, keep_unused=True)
    inputs = [jax.device_put(make_dumps.ramp(np, a.shape, a.dtype, p)) for p, a in enumerate(args)]
    r = jitted(*inputs)
    jax.block_until_ready(r)
    for _ in range(30):
        if mode == "drop":
            del r
        r = jitted(*inputs)
        jax.block_until_ready(r)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
