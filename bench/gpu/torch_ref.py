"""Torch references for bench/gpu/run.sh, timed with CUDA events (median).

Modes: gemm M N K | two_gemms M N K | tracer N | capture_workload
       | allgather_overlap | allgather TENSORS MIB   (two processes, one per GPU, NCCL)
"""
import os
import statistics
import sys
import time

import torch


def timed(fn, warmup=3, reps=10):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def gemm(m, n, k):
    a = torch.rand(m, k, device="cuda", dtype=torch.bfloat16) * 2 - 1
    b = torch.rand(k, n, device="cuda", dtype=torch.bfloat16) * 2 - 1
    ms = timed(lambda: torch.matmul(a, b))
    print(f"torch gemm m={m} n={n} k={k}: median {ms:.3f} ms, {2 * m * n * k / ms / 1e9:.1f} TFLOP/s")


def two_gemms(m, n, k):
    a = torch.rand(m, k, device="cuda", dtype=torch.bfloat16) * 2 - 1
    b = torch.rand(k, n, device="cuda", dtype=torch.bfloat16) * 2 - 1
    one = timed(lambda: (torch.matmul(a, b), torch.matmul(a, b)))
    s1 = torch.cuda.Stream()

    def two_streams():
        main = torch.cuda.current_stream()
        s1.wait_stream(main)
        torch.matmul(a, b)
        with torch.cuda.stream(s1):
            torch.matmul(a, b)
        main.wait_stream(s1)

    two = timed(two_streams)
    print(f"torch two gemms: one stream {one:.3f} ms, two streams {two:.3f} ms")


def tracer(n):
    x = torch.zeros(1, device="cuda")

    def loop():
        for _ in range(n):
            x.add_(1.0)
        torch.cuda.synchronize()

    loop()
    off = []
    for _ in range(5):
        t0 = time.perf_counter()
        loop()
        off.append((time.perf_counter() - t0) * 1e6)
    on = []
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]):
        loop()
        for _ in range(5):
            t0 = time.perf_counter()
            loop()
            on.append((time.perf_counter() - t0) * 1e6)
    a, b = statistics.median(off), statistics.median(on)
    print(f"torch.profiler {n} tiny kernels: without {a:.1f} us ({a / n:.2f} us/kernel), with {b:.1f} us "
          f"({b / n:.2f} us/kernel), overhead {100 * (b - a) / a:.1f}%")


def capture_workload():
    a = torch.rand(512, 512, device="cuda")
    s = torch.cuda.Stream()
    for _ in range(5):
        c = a @ a
        with torch.cuda.stream(s):
            d = torch.relu(a) + 1
    torch.cuda.synchronize()
    print("capture workload done", float(c.sum() + d.sum()) != 0.0)


def _two_ranks(fn, *args):
    """Runs fn(rank, *args) in two processes, one per GPU, with a NCCL group."""
    import torch.multiprocessing as mp
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    mp.spawn(_rank_main, args=(fn, args), nprocs=2, join=True)


def _rank_main(rank, fn, args):
    import torch.distributed as dist
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=2, device_id=torch.device("cuda", rank))
    try:
        fn(rank, *args)
    finally:
        dist.destroy_process_group()


def _allgather_overlap(rank):
    import torch.distributed as dist
    shard = torch.rand(8192, 16384, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(16384, 16384, device="cuda", dtype=torch.bfloat16)
    x = torch.rand(1024, 24576, device="cuda", dtype=torch.bfloat16)
    w = torch.rand(24576, 24576, device="cuda", dtype=torch.bfloat16)

    def sync_all():
        torch.cuda.synchronize()
        dist.barrier()

    def allgather_only():
        dist.all_gather_into_tensor(out, shard)

    def sequential():
        torch.matmul(x, w)
        dist.all_gather_into_tensor(out, shard)

    def overlapped():
        work = dist.all_gather_into_tensor(out, shard, async_op=True)
        torch.matmul(x, w)
        work.wait()

    results = {}
    for name, fn in (("allgather", allgather_only), ("sequential", sequential), ("overlapped", overlapped)):
        sync_all()
        results[name] = timed(fn)
    if rank == 0:
        print(f"torch allgather_overlap 512 MiB + GEMM on 2 GPUs: all-gather alone {results['allgather']:.3f} ms, "
              f"sequential {results['sequential']:.3f} ms, overlapped {results['overlapped']:.3f} ms")


def _allgather(rank, tensors, mib):
    import torch.distributed as dist
    rows = mib * 512
    shards = [torch.rand(rows, 1024, device="cuda", dtype=torch.bfloat16) for _ in range(tensors)]
    outs = [torch.empty(2 * rows, 1024, device="cuda", dtype=torch.bfloat16) for _ in range(tensors)]
    flat_in = torch.rand(rows * tensors, 1024, device="cuda", dtype=torch.bfloat16)
    flat_out = torch.empty(2 * rows * tensors, 1024, device="cuda", dtype=torch.bfloat16)

    def separate():
        for o, s in zip(outs, shards):
            dist.all_gather_into_tensor(o, s)

    torch.cuda.synchronize()
    dist.barrier()
    flat = timed(lambda: dist.all_gather_into_tensor(flat_out, flat_in))
    dist.barrier()
    sep = timed(separate)
    if rank == 0:
        print(f"torch allgather {tensors} x {mib} MiB on 2 GPUs: flat {flat:.3f} ms, separate {sep:.3f} ms")


def allgather_overlap():
    _two_ranks(_allgather_overlap)


def allgather(tensors, mib):
    _two_ranks(_allgather, tensors, mib)


if __name__ == "__main__":
    mode = sys.argv[1]
    args = [int(v) for v in sys.argv[2:]]
    modes = {"gemm": gemm, "two_gemms": two_gemms, "tracer": tracer, "capture_workload": capture_workload,
             "allgather_overlap": allgather_overlap, "allgather": allgather}
    modes[mode](*args)
