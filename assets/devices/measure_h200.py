"""Reference figures for assets/devices/h200.json (docs/simulator.md).

Run on a 2-GPU H200 machine:  NCCL_NVLS_ENABLE=0 python3 assets/devices/measure_h200.py
Prints one JSON object (medians of 10 runs, CUDA event timing, rank 0): the raw
times, then under "model" the device-file fields they give, by the formulas in
h200.json's *_source strings.

The experiment is the reference one of docs/simulator.md, with torch's defaults. The cuda backend
launches NCCL's kernels one CTA a cluster (cgaClusterSize 1) when --comm-sms
is on, as it is by default; "sweep" times the ring collectives so configured,
at four sizes, each size as a burst of back-to-back calls as a program issues
them, and "fit" fits each one's time to a fixed cost plus bytes over a bus
bandwidth. The stock model's NCCL figures come from that fit.
"""
import datetime
import json
import os
import statistics
import tempfile

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


GEMM = (1024, 24576, 24576)  # m, k, n of the reference GEMM (docs/simulator.md)
GATHERED_BYTES = 16384 * 16384 * 2  # the 512 MiB all-gather's output
EXCHANGED_BYTES = 512 << 20  # each rank's send (and receive) of the point-to-point exchange
# The simulator's ring latency for 2 ranks (Simple protocol, h200.json's
# nccl_protocols): base 8.4 us plus 3.4 us a step; nccl_launch_us comes on top.
RING_LATENCY_US = {"all_gather": 11.8, "reduce_scatter": 11.8, "all_reduce": 15.2, "exchange": 11.8}
SWEEP_GATHERED_MIB = (8, 32, 128, 512)  # all-gather output = reduce-scatter input = all-reduce size
SWEEP_BURST = 4  # back-to-back calls timed together


def rate_beside(alone_ms, together_ms, beside_ms):
    """The collective's speed while beside the GEMM, as a fraction of its speed
    alone, if it started with the GEMM and ran alone once the GEMM ended."""
    return (alone_ms - (together_ms - beside_ms)) / beside_ms


def bus_bytes(op, gathered_bytes):
    """nccl-tests' bus bytes of a 2-rank collective: half the gathered size for
    an all-gather or reduce-scatter, the whole size for an all-reduce."""
    return gathered_bytes if op == "all_reduce" else gathered_bytes / 2


def fit_fixed_and_bandwidth(op, ms_by_mib):
    """Least squares of t = fixed + bus_bytes / bandwidth over the sweep's sizes."""
    xs = [bus_bytes(op, mib << 20) for mib in ms_by_mib]
    ys = [ms * 1e-3 for ms in ms_by_mib.values()]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return {"fixed_us": (my - slope * mx) * 1e6, "bus_gbps": 1 / slope / 1e9}


def model_fields(r):
    fit = r["fit"]
    # What a collective costs beyond its ring latency: NCCL's launch and the
    # gap to the next kernel, as nccl_launch_us models it.
    launch_us = statistics.mean(f["fixed_us"] - RING_LATENCY_US[op] for op, f in fit.items())
    ag_bus = fit["all_gather"]["bus_gbps"]
    m, k, n = GEMM
    flops = 2 * m * k * n
    tiles = -(-m // 128) * -(-n // 256)
    waves_132 = -(-tiles // 132)
    return {
        # efficiency of the (>=1024)^3 bucket, wave quantization on top (tiles / (waves * 132))
        "gemm_efficiency_large": flops / (r["gemm_ms"] * 1e-3) / 989e12 / (tiles / (waves_132 * 132)),
        "nccl_bus_bandwidth_gbps": ag_bus,
        "reduce_scatter_bandwidth_scale": fit["reduce_scatter"]["bus_gbps"] / ag_bus,
        "all_reduce_bandwidth_scale": fit["all_reduce"]["bus_gbps"] / ag_bus,
        "nccl_launch_us": launch_us,
        # each rank sends and receives EXCHANGED_BYTES at once; one step, as the all-gather's
        "p2p_bandwidth_gbps": EXCHANGED_BYTES / ((r["exchange_512MiB_ms"] * 1e3 - launch_us - RING_LATENCY_US["exchange"]) * 1e3),
        "contention_factor": (1 - r["gemm_ms"] / r["gemm_beside_all_gather_ms"]) * 132 / 16,
        "comm_rate_under_compute": rate_beside(r["all_gather_512MiB_ms"], r["gemm_and_all_gather_ms"], r["gemm_beside_all_gather_ms"]),
        "concurrent_kernel_efficiency": r["two_gemms_one_stream_ms"] / r["two_gemms_two_streams_ms"],
        "min_kernel_us": r["tiny_kernel_us"],
    }


def overlap(gemm, gather, comm):
    """Times the all-gather on `comm` beside `gemm` on the current stream:
    (both together, the GEMM's own time), medians of 10."""
    gemm_events = []

    def both():
        cur = torch.cuda.current_stream()
        comm.wait_stream(cur)
        with torch.cuda.stream(comm):
            gather()
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        gemm()
        e.record()
        gemm_events.append((s, e))
        cur.wait_stream(comm)

    together = timeit(both)
    torch.cuda.synchronize()
    beside = statistics.median(s.elapsed_time(e) for s, e in gemm_events[-10:])
    return together, beside


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
    r["gemm_and_all_gather_ms"], r["gemm_beside_all_gather_ms"] = overlap(
        lambda: a @ b, lambda: dist.all_gather_into_tensor(out, inp), comm)
    r["gemm_then_all_gather_ms"] = timeit(lambda: (a @ b, dist.all_gather_into_tensor(out, inp)))
    r["sweep"] = sweep_cga1_collectives(dev)
    r["fit"] = {op: fit_fixed_and_bandwidth(op, ms) for op, ms in r["sweep"].items()}
    r["exchange_512MiB_ms"] = time_exchange(dev)
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
    r["tiny_kernel_us"] = tiny_kernel_us(t)
    r["device"] = torch.cuda.get_device_name()
    r["torch"] = torch.__version__
    r["nccl"] = ".".join(map(str, torch.cuda.nccl.version()))
    r["date"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    if rank == 0:
        r["model"] = model_fields(r)
        print(json.dumps(r, indent=1))
    dist.destroy_process_group()


def tiny_kernel_us(t):
    """The median duration of a kernel that does next to nothing (a 1-element
    add), as CUPTI reports it through torch.profiler: the shortest a traced
    kernel takes, which the simulator's min_kernel_us models."""
    for _ in range(10):
        t.add_(1)
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(200):
            t.add_(1)
        torch.cuda.synchronize()
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        prof.export_chrome_trace(f.name)
        events = json.load(open(f.name)).get("traceEvents", [])
    return statistics.median(e["dur"] for e in events if e.get("cat") == "kernel" and "dur" in e)


def time_exchange(dev):
    """Each rank sends EXCHANGED_BYTES to the other and receives as much, as a
    2-device collective-permute does (NCCL's grouped send and receive)."""
    send = torch.empty(EXCHANGED_BYTES // 2, device=dev, dtype=torch.bfloat16).normal_()
    recv = torch.empty_like(send)
    peer = 1 - dist.get_rank()

    def exchange():
        ops = [dist.P2POp(dist.isend, send, peer), dist.P2POp(dist.irecv, recv, peer)]
        for req in dist.batch_isend_irecv(ops):
            req.wait()

    return timeit(exchange)


def sweep_cga1_collectives(dev):
    """{op: {gathered MiB: ms a call}} on a communicator whose kernels launch one
    CTA a cluster, each size timed as SWEEP_BURST back-to-back calls."""
    options = dist.ProcessGroupNCCL.Options()
    options.config.cga_cluster_size = 1
    group = dist.new_group([0, 1], backend="nccl", pg_options=options)
    sweep = {"all_gather": {}, "reduce_scatter": {}, "all_reduce": {}}
    for mib in SWEEP_GATHERED_MIB:
        full = torch.empty(mib << 19, device=dev, dtype=torch.bfloat16).normal_()
        half = torch.empty(mib << 18, device=dev, dtype=torch.bfloat16).normal_()
        calls = {
            "all_gather": lambda: dist.all_gather_into_tensor(full, half, group=group),
            "reduce_scatter": lambda: dist.reduce_scatter_tensor(half, full, group=group),
            "all_reduce": lambda: dist.all_reduce(full, group=group),
        }
        for op, call in calls.items():
            sweep[op][mib] = timeit(lambda: [call() for _ in range(SWEEP_BURST)]) / SWEEP_BURST
    return sweep


if __name__ == "__main__":
    mp.spawn(work, nprocs=2)
