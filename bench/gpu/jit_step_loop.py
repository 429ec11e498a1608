"""A jitted step (a 1024x1024 f32 matmul, tanh) run in batches of 20 for
SECONDS, its median time printed: a long-running JAX program for
bench/gpu/periodic_flush_check.sh (to kill mid-run, and to time a capture's
periodic flush on and off).
  python3 bench/gpu/jit_step_loop.py SECONDS
"""
import time, sys
import jax, jax.numpy as jnp
x = jnp.ones((1024, 1024), jnp.float32)
f = jax.jit(lambda a: jnp.tanh(a @ a * 1e-3) + 1.0)
y = f(x).block_until_ready()
times = []
end = time.time() + float(sys.argv[1])
while time.time() < end:
    t = time.perf_counter()
    for _ in range(20):
        y = f(y)
    y.block_until_ready()
    times.append((time.perf_counter() - t) / 20 * 1e6)
times.sort()
print("median step %.2f us over %d batches" % (times[len(times) // 2], len(times)))
