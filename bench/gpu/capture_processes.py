"""A command whose CUDA work runs in three processes, for `capture` of a
launcher (torchrun, mpirun, a script's subprocesses):
  python3 bench/gpu/capture_processes.py
The parent runs 3 matmuls, forks a copy that exits at once (no CUDA: it must
not touch the parent's capture), starts two children running 4 and 6
matmuls, and runs 2 more matmuls after they end: 5, 4 and 6 GEMMs.
"""
import os
import subprocess
import sys

CHILD = """
import sys, torch
x = torch.ones(512, 512, device="cuda")
for _ in range(int(sys.argv[1])):
    y = x @ x
torch.cuda.synchronize()
"""

import torch

x = torch.ones(512, 512, device="cuda")
for _ in range(3):
    y = x @ x
torch.cuda.synchronize()
pid = os.fork()
if pid == 0:
    sys.exit(0)  # the normal exit path: C atexit handlers run in the copy
os.waitpid(pid, 0)
children = [subprocess.Popen([sys.executable, "-c", CHILD, str(n)]) for n in (4, 6)]
codes = [c.wait() for c in children]
for _ in range(2):
    y = x @ x
torch.cuda.synchronize()
sys.exit(max(codes))
