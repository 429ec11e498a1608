"""Reference figures for assets/devices/h200.json (DESIGN section 5).

Run on a 2-GPU H200 machine:  NCCL_NVLS_ENABLE=0 python3 assets/devices/measure_h200.py
Prints one JSON object (medians of 10 runs, CUDA event timing, rank 0).
"""
import datetime
import json
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def timeit(fn, reps=10, warm=3):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    return times[len(times) // 2]


def work(rank):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29511")
    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    dist.init_process_group("nccl", rank=rank, world_size=2, device_id=dev)
    a = torch.randn(1024, 24576, device=dev, dtype=torch.bfloat16)
    b = torch.randn(24576, 24576, device=dev, dtype=torch.bfloat16)
    inp = torch.randn(8192, 16384, device=dev, dtype=torch.bfloat16)
    out = torch.empty(16384, 16384, device=dev, dtype=torch.bfloat16)
    comm = torch.cuda.Stream(device=dev)
    side = torch.cuda.Stream(device=dev)
    r = {}
    r["gemm_ms"] = timeit(lambda: a @ b)
    r["two_gemms_one_stream_ms"] = timeit(lambda: (a @ b, a @ b))

    def two_streams():
        cur = torch.cuda.current_stream()
        side.wait_stream(cur)
        x = a @ b
        with torch.cuda.stream(side):
            y = a @ b
        cur.wait_stream(side)

    r["two_gemms_two_streams_ms"] = timeit(two_streams)
    r["all_gather_512MiB_ms"] = timeit(lambda: dist.all_gather_into_tensor(out, inp))
    gemm_events = []

    def both():
        cur = torch.cuda.current_stream()
        comm.wait_stream(cur)
        with torch.cuda.stream(comm):
            dist.all_gather_into_tensor(out, inp)
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        a @ b
        e.record()
        gemm_events.append((s, e))
        cur.wait_stream(comm)

    r["gemm_and_all_gather_ms"] = timeit(both)
    r["gemm_beside_all_gather_ms"] = gemm_events[-1][0].elapsed_time(gemm_events[-1][1])
    r["gemm_then_all_gather_ms"] = timeit(lambda: (a @ b, dist.all_gather_into_tensor(out, inp)))
    x = torch.empty(1 << 30, device=dev, dtype=torch.bfloat16)
    y = torch.empty_like(x)
    z = torch.empty_like(x)
    r["copy_GBps"] = 2 * (2 << 30) / (timeit(lambda: y.copy_(x)) * 1e-3) / 1e9
    r["add_GBps"] = 3 * (2 << 30) / (timeit(lambda: torch.add(x, y, out=z)) * 1e-3) / 1e9
    # Back-to-back tiny kernels replayed from a CUDA graph: the GPU-side cost of one launch.
    t = torch.zeros(1, device=dev)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(side):
        for _ in range(3):
            t.add_(1)
    torch.cuda.synchronize()
    with torch.cuda.graph(graph):
        for _ in range(1000):
            t.add_(1)
    r["graph_kernel_us"] = timeit(lambda: graph.replay(), reps=5)  # ms per 1000 kernels == us per kernel
    r["device"] = torch.cuda.get_device_name()
    r["torch"] = torch.__version__
    r["nccl"] = ".".join(map(str, torch.cuda.nccl.version()))
    r["date"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    if rank == 0:
        print(json.dumps(r, indent=1))
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(work, nprocs=2)
