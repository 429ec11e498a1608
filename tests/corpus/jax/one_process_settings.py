#!/usr/bin/env python3
"""Run one program of make_dumps.py compiled under several XLA settings in
ONE process, so that every setting's steps run on the same host pace.

    XLA_FLAGS="--xla_dump_to=OUT/all_dump --xla_dump_hlo_as_text \
      --xla_gpu_dump_autotune_logs_to=OUT/all_dump/autotune_logs.txt" \
    python3 tests/corpus/jax/one_process_settings.py PROGRAM OUT --size large \
      def= notriton=xla_gpu_enable_triton_gemm:false cboff=xla_gpu_enable_command_buffer:

Each SETTING=KEY:VALUE,... is compiled with those XLA debug options
(`compiler_options` of jax's `compile`), run once, and its new dump files
are moved to OUT/SETTING/dump. Then the settings take turns, ROUNDS rounds
of BLOCK steps each. Before a setting's compilation and before each of its
blocks the process copies MARKER_BYTES + (the setting's index) bytes to
the GPU, so bench/gpu/split_capture.py can cut the capture into one per
setting. Writes OUT/SETTING/expected.json (JAX's own median step) and
OUT/settings.json (each setting's options, whether XLA took them).
"""
import json
import os
import shutil
import sys
import time

MARKER_BYTES = 12345
ROUNDS = 4
BLOCK = 8

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_dumps  # noqa: E402  (reads --size from sys.argv)


def parse_setting(spec):
    name, _, opts = spec.partition("=")
    options = {}
    for item in filter(None, opts.split(",")):
        key, _, value = item.partition(":")
        if value in ("true", "false"):
            options[key] = value == "true"
        elif value.lstrip("-").isdigit():
            options[key] = int(value)
        else:
            options[key] = value
    return name, options


def move_new_dump_files(src, dst, seen):
    os.makedirs(dst, exist_ok=True)
    moved = []
    for f in sorted(os.listdir(src)) if os.path.isdir(src) else []:
        path = os.path.join(src, f)
        if f in seen or not os.path.isfile(path):
            continue
        shutil.move(path, os.path.join(dst, f))
        moved.append(f)
    return moved


def main():
    args = [a for i, a in enumerate(sys.argv[1:], 1) if a != "--size" and sys.argv[i - 1] != "--size"]
    program, out, specs = args[0], os.path.abspath(args[1]), [parse_setting(s) for s in args[2:]]
    import numpy as np
    import jax
    import jax.numpy as jnp
    f, shapes = make_dumps.SINGLE[program](jnp, jax)
    inputs = [jax.device_put(make_dumps.ramp(np, a.shape, a.dtype, p)) for p, a in enumerate(shapes)]
    all_dump = os.path.join(out, "all_dump")
    os.makedirs(all_dump, exist_ok=True)

    def marker(index):
        jax.block_until_ready(jax.device_put(np.zeros(MARKER_BYTES + index, np.uint8)))

    compiled, report = [], []
    for index, (name, options) in enumerate(specs):
        marker(index)
        lowered = jax.jit(f, keep_unused=True).lower(*inputs)
        try:
            exe = lowered.compile(compiler_options=options or None)
            error = ""
        except Exception as e:  # an option XLA does not take: say so, run without the setting
            exe, error = None, f"{type(e).__name__}: {e}"[:500]
        if exe is not None:
            jax.block_until_ready(exe(*inputs))
        moved = move_new_dump_files(all_dump, os.path.join(out, name, "dump"), set())
        compiled.append(exe)
        report.append({"setting": name, "index": index, "options": options, "marker_bytes": MARKER_BYTES + index,
                       "error": error, "dump_files": moved})
        print(f"{name}: compiled{' FAILED ' + error if error else ''}, {len(moved)} dump files", flush=True)

    times = {name: [] for name, _ in specs}
    for _ in range(ROUNDS):
        for index, (name, _) in enumerate(specs):
            if compiled[index] is None:
                continue
            marker(index)
            for _ in range(BLOCK):
                t0 = time.perf_counter()
                jax.block_until_ready(compiled[index](*inputs))
                times[name].append(time.perf_counter() - t0)
    for name, ts in times.items():
        ts.sort()
        result = {"jax_step_ms_median": ts[len(ts) // 2] * 1e3 if ts else None, "jax_version": jax.__version__,
                  "device": str(jax.devices()[0].device_kind), "steps": len(ts)}
        with open(os.path.join(out, name, "expected.json"), "w") as fh:
            json.dump(result, fh)
        print(f"{name}: {len(ts)} steps, median {result['jax_step_ms_median']} ms", flush=True)
    with open(os.path.join(out, "settings.json"), "w") as fh:
        json.dump({"program": program, "rounds": ROUNDS, "block": BLOCK, "settings": report}, fh, indent=1)


if __name__ == "__main__":
    main()
