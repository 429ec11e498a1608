#!/usr/bin/env python3
"""Cut a capture of tests/corpus/jax/one_process_settings.py into one
capture per XLA setting.

    bench/gpu/split_capture.py CAPTURE.jsonl SETTINGS.json OUT_PREFIX

The process copied MARKER_BYTES + i bytes to the GPU before setting i's
compilation and before each of its blocks of steps. Every record from one
such copy to the next belongs to that setting; the records before the first
marker (JAX starting) go to the first setting. Writes
OUT_PREFIX_SETTING/capture.jsonl, each with the capture's meta line, its
host lines (the process's probe at its start and end) and its device lines
(the GPUs' names, written at the end), and
prints how many records and markers each setting got.
"""
import json
import os
import sys


def main():
    capture, settings_path, prefix = sys.argv[1:4]
    with open(settings_path) as fh:
        settings = json.load(fh)["settings"]
    by_marker = {s["marker_bytes"]: s["setting"] for s in settings}
    meta, records = [], []
    with open(capture) as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            r = json.loads(line)
            (meta if r.get("k") in ("meta", "host", "device") else records).append((r.get("start", 0), line, r))
    records.sort(key=lambda x: x[0])
    out = {s["setting"]: [] for s in settings}
    markers = {s["setting"]: 0 for s in settings}
    current = settings[0]["setting"]
    for _, line, r in records:
        if r.get("k") == "memcpy" and r.get("copy") == 1 and r.get("bytes") in by_marker:
            current = by_marker[r["bytes"]]
            markers[current] += 1
            continue
        out[current].append(line)
    for name, lines in out.items():
        d = f"{prefix}_{name}"
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "capture.jsonl"), "w") as fh:
            for _, line, _ in meta:
                fh.write(line + "\n")
            for line in lines:
                fh.write(line + "\n")
        print(f"{name}: {len(lines)} records, {markers[name]} markers")


if __name__ == "__main__":
    main()
