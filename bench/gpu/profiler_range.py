"""A program that marks a profiler range, for `capture --capture-range
cudaProfilerApi`: 3 matmuls before cudaProfilerStart, 5 inside, 3 after."""
import torch

x = torch.randn(1024, 1024, device="cuda")
for _ in range(3):
    y = x @ x
torch.cuda.synchronize()
torch.cuda.profiler.start()
for _ in range(5):
    y = x @ x
torch.cuda.synchronize()
torch.cuda.profiler.stop()
for _ in range(3):
    y = x @ x
torch.cuda.synchronize()
