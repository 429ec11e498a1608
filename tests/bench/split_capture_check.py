#!/usr/bin/env python3
"""bench/gpu/split_capture.py and one_process_settings.py's option parsing,
without a GPU: a capture of three settings taking turns, as
one_process_settings.py marks it, is cut into one capture per setting.
Exits 0 when every check holds, 1 on the first that does not."""
import json
import os
import subprocess
import sys
import tempfile

ROOT = sys.argv[1]
MARKER = 12345


def fail(message):
    print("FAIL:", message)
    sys.exit(1)


def main():
    sys.dont_write_bytecode = True  # nothing written into the source tree
    sys.path.insert(0, os.path.join(ROOT, "tests/corpus/jax"))
    import one_process_settings as ops
    name, options = ops.parse_setting("cboff=xla_gpu_enable_command_buffer:,xla_gpu_autotune_level:0")
    if (name, options) != ("cboff", {"xla_gpu_enable_command_buffer": "", "xla_gpu_autotune_level": 0}):
        fail(f"parse_setting: {name} {options}")
    if ops.parse_setting("notriton=xla_gpu_enable_triton_gemm:false")[1] != {"xla_gpu_enable_triton_gemm": False}:
        fail("parse_setting: a boolean")
    if ops.MARKER_BYTES != MARKER:
        fail("the marker size split_capture.py is tested with")

    settings = ["def", "notriton", "cboff"]
    records, t = [], 1000
    def add(kind, **fields):
        nonlocal t
        t += 100
        records.append(dict(k=kind, start=t, end=t + 50, dev=0, stream=7, **fields))
    add("kernel", name="jax_init")                        # before any marker: the first setting's
    for rnd in range(2):
        for i, s in enumerate(settings):
            add("memcpy", bytes=MARKER + i, copy=1)        # the marker
            add("kernel", name=f"{s}_kernel_{rnd}")
            add("memcpy", bytes=MARKER + i, copy=2)        # same size, device to host: not a marker
    with tempfile.TemporaryDirectory() as d:
        capture = os.path.join(d, "capture.jsonl")
        with open(capture, "w") as fh:
            fh.write(json.dumps({"k": "meta", "pid": 1, "t0": 0, "version": 1}) + "\n")
            for r in reversed(records):                    # out of order, as CUPTI's buffers may be
                fh.write(json.dumps(r) + "\n")
        with open(os.path.join(d, "settings.json"), "w") as fh:
            json.dump({"settings": [{"setting": s, "marker_bytes": MARKER + i} for i, s in enumerate(settings)]}, fh)
        out = subprocess.run([sys.executable, os.path.join(ROOT, "bench/gpu/split_capture.py"), capture,
                              os.path.join(d, "settings.json"), os.path.join(d, "p")],
                             capture_output=True, text=True)
        if out.returncode != 0:
            fail(f"split_capture.py: rc {out.returncode}: {out.stderr}")
        for i, s in enumerate(settings):
            with open(os.path.join(d, f"p_{s}", "capture.jsonl")) as fh:
                lines = [json.loads(line) for line in fh]
            if lines[0].get("k") != "meta":
                fail(f"{s}: the meta line first")
            names = [r.get("name") for r in lines[1:] if r["k"] == "kernel"]
            want = (["jax_init"] if i == 0 else []) + [f"{s}_kernel_0", f"{s}_kernel_1"]
            if names != want:
                fail(f"{s}: kernels {names}, want {want}")
            if any(r["k"] == "memcpy" and r.get("copy") == 1 for r in lines[1:]):
                fail(f"{s}: a marker kept")
            if sum(1 for r in lines[1:] if r["k"] == "memcpy") != 2:
                fail(f"{s}: the device-to-host copies of the marker's size are records")
        if "def: 5 records, 2 markers" not in out.stdout:
            fail(f"split_capture.py's summary: {out.stdout}")
    print("ok")


if __name__ == "__main__":
    main()
