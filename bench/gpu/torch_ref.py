"""Torch references for bench/gpu/run.sh, timed with CUDA events (median).

Modes: gemm M N K | two_gemms M N K | tracer N | capture_workload
"""
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


if __name__ == "__main__":
    mode = sys.argv[1]
    args = [int(v) for v in sys.argv[2:]]
    {"gemm": gemm, "two_gemms": two_gemms, "tracer": tracer, "capture_workload": capture_workload}[mode](*args)
