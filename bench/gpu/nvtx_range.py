"""Programs that mark NVTX ranges, for `capture --capture-range nvtx:NAME`.
  python3 bench/gpu/nvtx_range.py torch   # range "train": 3 matmuls before,
                                          # 5 matmul + relu inside, 3 adds after
  python3 bench/gpu/nvtx_range.py torch_early  # range "train" pushed before the program
                                          # first uses CUDA: 5 matmul + relu inside, 3 adds after
  python3 bench/gpu/nvtx_range.py jax     # jax.profiler.TraceAnnotation("jax_train")
                                          # around 4 steps, 2 steps before and after
"""
import sys

if sys.argv[1] in ("torch", "torch_early"):
    import torch
    early = sys.argv[1] == "torch_early"
    if early:
        torch.cuda.nvtx.range_push("train")
    x = torch.randn(1024, 1024, device="cuda")
    if not early:
        for _ in range(3):
            y = x @ x
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push("train")
    for _ in range(5):
        y = torch.relu(x @ x)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    for _ in range(3):
        y = x + 1
    torch.cuda.synchronize()
else:
    import jax
    import jax.numpy as jnp
    f = jax.jit(lambda a: jnp.tanh(a @ a))
    a = jnp.ones((1024, 1024))
    for _ in range(2):
        f(a).block_until_ready()
    with jax.profiler.TraceAnnotation("jax_train"):
        for _ in range(4):
            f(a).block_until_ready()
    for _ in range(2):
        f(a).block_until_ready()
