#!/usr/bin/env python3
"""The GPU's idle time inside a CUDA graph after a memset node, without XLA.

A torch CUDA graph of: kernel, memset (cudaMemsetAsync, as cuBLAS issues
for its workspace), kernel, kernel; launched 30 times. Modes:
  idle      the host sleeps 300 us between launches (as JAX's host-bound steps)
  busy      launched back to back
  nomemset  idle, the memset replaced by a kernel
  memcpy    idle, a device-to-device cudaMemcpyAsync instead of the memset
  gemm      idle, a bf16 matmul (cuBLAS) instead of the memset
  gemm_busy back to back, the matmul
Run under streamlens' capture and report with graph_update_gap_report.py
(bench/gpu/graph_memset_gap.sh).
"""
import ctypes
import sys
import time

import torch


def main(mode):
    cudart = ctypes.CDLL("libcudart.so")
    x = torch.ones(1 << 20, device="cuda")
    y = torch.ones(1 << 20, device="cuda")
    buf = torch.empty(1 << 22, dtype=torch.uint8, device="cuda")
    src = torch.empty(1 << 22, dtype=torch.uint8, device="cuda")
    a = torch.ones(2048, 1024, dtype=torch.bfloat16, device="cuda")
    b = torch.ones(1024, 8192, dtype=torch.bfloat16, device="cuda")
    stream = torch.cuda.Stream()

    def body():
        x.add_(1)
        handle = ctypes.c_void_p(stream.cuda_stream)
        if mode == "memcpy":
            cudart.cudaMemcpyAsync(ctypes.c_void_p(buf.data_ptr()), ctypes.c_void_p(src.data_ptr()),
                                   ctypes.c_size_t(buf.numel()), 3, handle)
        elif mode.startswith("gemm"):
            torch.mm(a, b)
        elif mode == "nomemset":
            buf.zero_()
        else:
            cudart.cudaMemsetAsync(ctypes.c_void_p(buf.data_ptr()), 0, ctypes.c_size_t(buf.numel()), handle)
        y.mul_(2)
        x.add_(y)

    with torch.cuda.stream(stream):
        body()  # warm up outside the capture
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=stream):
        body()
    torch.cuda.synchronize()
    for _ in range(30):
        g.replay()
        if not mode.endswith("busy"):
            torch.cuda.synchronize()
            t = time.perf_counter()
            while time.perf_counter() - t < 300e-6:
                pass
    torch.cuda.synchronize()


if __name__ == "__main__":
    main(sys.argv[1])
