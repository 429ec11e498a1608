"""Hold-out set 19 of the trace-driven simulator (bench/FIDELITY-real.md).

Five programs no set has compiled, two straight-line train steps and three
loops, for what-ifs across XLA's GEMM choice (a GEMM XLA tunes once and
runs more than once; the autotuner's overhead by backend), measured in one
process and in separate processes as set 18 was. Declared before they were
first captured; scored once, blind. Each builder takes (jnp, jax, dims) and
returns (function, argument specs). The inputs are streamlens' ramp values
(-5 to 5), so each program scales what it multiplies.
"""


def gelu_mlp_sgd_bf16(jnp, jax, dims):
    """A two-layer GELU MLP's train step in bf16 with plain SGD: no loop,
    its backward pass repeats the forward pass's shapes."""
    b, d, h = dims((4, 8, 16), (512, 768, 1536))

    def loss(w1, w2, x, y):
        a = jax.nn.gelu(x @ (0.01 * w1))
        return jnp.mean(((a @ (0.01 * w2)) - y).astype(jnp.float32) ** 2)

    def step(w1, w2, x, y):
        g1, g2 = jax.grad(loss, argnums=(0, 1))(w1, w2, x, y)
        return w1 - 0.1 * g1, w2 - 0.1 * g2

    s = jax.ShapeDtypeStruct
    bf = jnp.bfloat16
    return step, [s((d, h), bf), s((h, d), bf), s((b, d), bf), s((b, d), bf)]


def layernorm_projection_grad_f32(jnp, jax, dims):
    """Layer norm then two square projections, and their gradient, in f32:
    no loop, the same product shape four times."""
    b, d = dims((4, 8), (384, 512))

    def loss(wa, wb, x):
        mu = jnp.mean(x, axis=-1, keepdims=True)
        xn = (x - mu) / jnp.sqrt(jnp.var(x, axis=-1, keepdims=True) + 1e-5)
        return jnp.mean(jnp.tanh(jnp.tanh(xn @ (0.01 * wa)) @ (0.01 * wb)) ** 2)

    def step(wa, wb, x):
        ga, gb = jax.grad(loss, argnums=(0, 1))(wa, wb, x)
        return wa - 0.1 * ga, wb - 0.1 * gb

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return step, [s((d, d), f32), s((d, d), f32), s((b, d), f32)]


def scan_coupled_states_bf16(jnp, jax, dims):
    """Two states coupled through matrices over lax.scan in bf16: each trip
    multiplies each state by its own matrix and the other's."""
    trips, b, d = dims((4, 2, 8), (64, 32, 512))

    def f(waa, wab, wba, wbb, xs, a0, b0):
        def body(carry, x):
            a, c = carry
            a2 = jnp.tanh(a @ (0.01 * waa) + c @ (0.01 * wab) + x)
            c2 = jnp.tanh(c @ (0.01 * wbb) + a @ (0.01 * wba))
            return (a2, c2), None

        (a, c), _ = jax.lax.scan(body, (a0, b0), xs)
        return a, c

    s = jax.ShapeDtypeStruct
    bf = jnp.bfloat16
    return f, [s((d, d), bf)] * 4 + [s((trips, b, d), bf), s((b, d), bf), s((b, d), bf)]


def fori_block_conjugate_gradient(jnp, jax, dims):
    """Block conjugate-gradient steps in lax.fori_loop on a symmetric
    matrix: each trip multiplies the matrix by a block of directions."""
    trips, n, k = dims((4, 8, 2), (32, 1536, 48))

    def f(m, b):
        a = (m @ m.T) / jnp.float32(n * 25) + jnp.eye(n, dtype=jnp.float32)

        def body(_, state):
            x, r, p = state
            ap = a @ p
            alpha = jnp.sum(r * r, axis=0) / (jnp.sum(p * ap, axis=0) + 1e-6)
            x = x + alpha * p
            r2 = r - alpha * ap
            beta = jnp.sum(r2 * r2, axis=0) / (jnp.sum(r * r, axis=0) + 1e-6)
            return x, r2, r2 + beta * p

        x, _, _ = jax.lax.fori_loop(0, trips, body, (jnp.zeros_like(b), b, b))
        return x

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return f, [s((n, n), f32), s((n, k), f32)]


def scan_memory_attention_bf16(jnp, jax, dims):
    """Chunks of queries over lax.scan, each attending to a fixed memory in
    bf16: every trip multiplies its slice by the memory twice."""
    trips, t, m, d = dims((4, 2, 8, 8), (48, 64, 512, 256))

    def f(mem, qs):
        def body(acc, q):
            scores = (q @ mem.T).astype(jnp.float32) / jnp.float32(d * 25)
            p = jax.nn.softmax(scores, axis=-1).astype(jnp.bfloat16)
            out = p @ mem
            return acc + out.astype(jnp.float32), out[:, :8]

        acc0 = jnp.zeros((t, d), jnp.float32)
        return jax.lax.scan(body, acc0, qs)

    s = jax.ShapeDtypeStruct
    bf = jnp.bfloat16
    return f, [s((m, d), bf), s((trips, t, d), bf)]


PROGRAMS = {
    "gelu_mlp_sgd_bf16": gelu_mlp_sgd_bf16,
    "layernorm_projection_grad_f32": layernorm_projection_grad_f32,
    "scan_coupled_states_bf16": scan_coupled_states_bf16,
    "fori_block_conjugate_gradient": fori_block_conjugate_gradient,
    "scan_memory_attention_bf16": scan_memory_attention_bf16,
}
