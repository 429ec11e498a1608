"""Hold-out set 11 of the trace-driven simulator (bench/FIDELITY-real.md).

Loops with GEMMs in their bodies, in plain JAX, for what-ifs across XLA's
GEMM choice: with `--xla_gpu_enable_triton_gemm=false` a loop body's GEMMs
become cuBLASLt commands of the body's command buffer, which XLA records
again every trip. Declared before they were first captured; scored once,
blind. Each builder takes (jnp, jax, dims) and returns (function, argument
specs). The inputs are streamlens' ramp values (-5 to 5), so each program
scales what it multiplies again and again.
"""


def scan_mlp_cell(jnp, jax, dims):
    """A recurrent MLP cell over lax.scan, forward only: three GEMMs a trip."""
    trips, b, d = dims((4, 2, 8), (128, 64, 512))

    def f(w1, u, w2, h0, xs):
        def body(h, x):
            h = jnp.tanh((jnp.tanh(0.01 * (h @ w1 + x @ u))) @ (0.01 * w2))
            return h, jnp.sum(h, axis=1)

        h, sums = jax.lax.scan(body, h0, xs)
        return h, sums

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return f, [s((d, d), f32), s((d, d), f32), s((d, d), f32), s((b, d), f32), s((trips, b, d), f32)]


def fori_power_iteration(jnp, jax, dims):
    """Block power iteration in lax.fori_loop: a GEMM and a normalisation a trip."""
    trips, n, k = dims((4, 8, 2), (64, 2048, 32))

    def f(a, v0):
        def body(_, v):
            w = a @ v
            return w / jnp.linalg.norm(w, axis=0, keepdims=True)

        return jax.lax.fori_loop(0, trips, body, v0)

    s = jax.ShapeDtypeStruct
    return f, [s((n, n), jnp.float32), s((n, k), jnp.float32)]


def scan_decode_attention(jnp, jax, dims):
    """Greedy decoding with a KV cache over lax.scan: per token, four
    projections, the cache written at the token's place, attention over it."""
    tokens, b, d = dims((4, 2, 8), (64, 16, 256))

    def f(wq, wk, wv, wo, x0):
        def body(carry, t):
            x, k_cache, v_cache = carry
            q, k, v = x @ (0.05 * wq), x @ (0.05 * wk), x @ (0.05 * wv)
            k_cache = jax.lax.dynamic_update_slice(k_cache, k[:, None, :], (0, t, 0))
            v_cache = jax.lax.dynamic_update_slice(v_cache, v[:, None, :], (0, t, 0))
            scores = jnp.einsum("bd,btd->bt", q, k_cache) / jnp.sqrt(float(d))
            scores = jnp.where(jnp.arange(tokens)[None, :] <= t, scores, -1e9)
            out = jnp.einsum("bt,btd->bd", jax.nn.softmax(scores, axis=-1), v_cache)
            x = jnp.tanh(out @ (0.05 * wo))
            return (x, k_cache, v_cache), x[:, 0]

        cache = jnp.zeros((b, tokens, d), jnp.float32)
        (x, _, _), firsts = jax.lax.scan(body, (x0, cache, cache), jnp.arange(tokens))
        return x, firsts

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return f, [s((d, d), f32), s((d, d), f32), s((d, d), f32), s((d, d), f32), s((b, d), f32)]


def linear_rnn_grad(jnp, jax, dims):
    """A linear recurrence over lax.scan and its gradient (the backward pass
    a second scan), then an SGD step."""
    trips, b, d = dims((4, 2, 8), (64, 128, 256))

    def loss(a, bm, xs):
        def body(h, x):
            h = h @ (0.01 * a) + x @ (0.01 * bm)
            return h, None

        h, _ = jax.lax.scan(body, jnp.zeros((b, d), jnp.float32), xs)
        return jnp.mean(h ** 2)

    def step(a, bm, xs):
        ga, gb = jax.grad(loss, argnums=(0, 1))(a, bm, xs)
        return a - 0.1 * ga, bm - 0.1 * gb

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return step, [s((d, d), f32), s((d, d), f32), s((trips, b, d), f32)]


def grad_accum_mlp3_f32(jnp, jax, dims):
    """Gradient accumulation with lax.scan over microbatches of a three-layer
    f32 MLP with relu, summed, then one SGD step."""
    micro, b, d, h = dims((2, 4, 8, 16), (4, 128, 512, 2048))

    def loss(w1, w2, w3, x, y):
        z = jax.nn.relu(x @ (0.01 * w1))
        z = jax.nn.relu(z @ (0.01 * w2))
        return jnp.mean((z @ (0.01 * w3) - y) ** 2)

    def step(w1, w2, w3, xs, ys):
        def body(acc, xy):
            g = jax.grad(loss, argnums=(0, 1, 2))(w1, w2, w3, *xy)
            return tuple(a + gi for a, gi in zip(acc, g)), None

        zeros = (jnp.zeros_like(w1), jnp.zeros_like(w2), jnp.zeros_like(w3))
        (g1, g2, g3), _ = jax.lax.scan(body, zeros, (xs, ys))
        return w1 - 0.01 * g1 / micro, w2 - 0.01 * g2 / micro, w3 - 0.01 * g3 / micro

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return step, [s((d, h), f32), s((h, h), f32), s((h, d), f32), s((micro, b, d), f32), s((micro, b, d), f32)]


PROGRAMS = {
    "scan_mlp_cell": scan_mlp_cell,
    "fori_power_iteration": fori_power_iteration,
    "scan_decode_attention": scan_decode_attention,
    "linear_rnn_grad": linear_rnn_grad,
    "grad_accum_mlp3_f32": grad_accum_mlp3_f32,
}
