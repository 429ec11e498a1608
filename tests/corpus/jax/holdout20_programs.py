"""Hold-out set 20 of the trace-driven simulator (bench/FIDELITY-real.md).

Five programs no set has compiled, two straight-line train steps and three
loops, for what-ifs across XLA's GEMM choice and command buffers, measured
in one process and in separate processes as sets 18 and 19 were. Declared
before they were first captured; scored once, blind. Each builder takes
(jnp, jax, dims) and returns (function, argument specs). The inputs are
streamlens' ramp values (-5 to 5), so each program scales what it
multiplies.
"""


def swiglu_ffn_grad_bf16(jnp, jax, dims):
    """A SwiGLU feed-forward block's train step in bf16: three weight
    matrices, a gated product, and plain SGD; no loop."""
    b, d, h = dims((4, 8, 16), (768, 512, 1024))

    def loss(wg, wu, wd, x):
        g = x @ (0.01 * wg)
        u = x @ (0.01 * wu)
        y = (jax.nn.silu(g) * u) @ (0.01 * wd)
        return jnp.mean((y + x).astype(jnp.float32) ** 2)

    def step(wg, wu, wd, x):
        gg, gu, gd = jax.grad(loss, argnums=(0, 1, 2))(wg, wu, wd, x)
        return wg - 0.1 * gg, wu - 0.1 * gu, wd - 0.1 * gd

    s = jax.ShapeDtypeStruct
    bf = jnp.bfloat16
    return step, [s((d, h), bf), s((d, h), bf), s((h, d), bf), s((b, d), bf)]


def two_head_attention_grad_f32(jnp, jax, dims):
    """Self-attention with two heads and an output projection, and its
    gradient in f32: batched products after a reshape; no loop."""
    t, d = dims((8, 8), (256, 256))
    heads = 2

    def loss(wq, wk, wv, wo, x):
        def split(m):
            return m.reshape(t, heads, d // heads).transpose(1, 0, 2)

        q, k, v = split(x @ (0.01 * wq)), split(x @ (0.01 * wk)), split(x @ (0.01 * wv))
        p = jax.nn.softmax(jnp.einsum("htd,hsd->hts", q, k) / jnp.float32(d), axis=-1)
        o = jnp.einsum("hts,hsd->htd", p, v).transpose(1, 0, 2).reshape(t, d)
        return jnp.mean(jnp.tanh(o @ (0.01 * wo)) ** 2)

    def step(wq, wk, wv, wo, x):
        grads = jax.grad(loss, argnums=(0, 1, 2, 3))(wq, wk, wv, wo, x)
        return tuple(w - 0.1 * g for w, g in zip((wq, wk, wv, wo), grads))

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return step, [s((d, d), f32)] * 4 + [s((t, d), f32)]


def scan_two_layer_rnn_f32(jnp, jax, dims):
    """A two-layer tanh RNN over lax.scan in f32: each trip runs four
    products of two shapes, the second layer fed by the first."""
    trips, b, d = dims((4, 2, 8), (48, 64, 384))

    def f(wx1, wh1, wx2, wh2, xs, h1, h2):
        def body(carry, x):
            a, c = carry
            a2 = jnp.tanh(x @ (0.01 * wx1) + a @ (0.01 * wh1))
            c2 = jnp.tanh(a2 @ (0.01 * wx2) + c @ (0.01 * wh2))
            return (a2, c2), c2[:, :4]

        return jax.lax.scan(body, (h1, h2), xs)

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return f, [s((d, d), f32)] * 4 + [s((trips, b, d), f32), s((b, d), f32), s((b, d), f32)]


def fori_newton_schulz_f32(jnp, jax, dims):
    """Newton-Schulz steps toward an orthogonal factor in lax.fori_loop, f32:
    each trip multiplies square matrices three times."""
    trips, n = dims((4, 8), (24, 768))

    def f(m):
        x0 = m / (jnp.sqrt(jnp.sum(m * m)) + 1e-6)

        def body(_, x):
            a = x @ x.T
            return 1.5 * x - 0.5 * (a @ x)

        return jax.lax.fori_loop(0, trips, body, x0)

    s = jax.ShapeDtypeStruct
    return f, [s((n, n), jnp.float32)]


def scan_block_power_iteration_bf16(jnp, jax, dims):
    """Block power iteration over lax.scan in bf16, a fresh matrix each trip:
    the block is multiplied by the matrix and its transpose and renormed."""
    trips, n, k = dims((4, 8, 2), (32, 1024, 64))

    def f(ms, v0):
        def body(v, m):
            w = m.T @ (m @ v)
            norm = jnp.sqrt(jnp.sum(w.astype(jnp.float32) ** 2, axis=0, keepdims=True)) + 1e-6
            v2 = (w.astype(jnp.float32) / norm).astype(jnp.bfloat16)
            return v2, jnp.sum(norm)

        return jax.lax.scan(body, v0, ms)

    s = jax.ShapeDtypeStruct
    bf = jnp.bfloat16
    return f, [s((trips, n, n), bf), s((n, k), bf)]


PROGRAMS = {
    "swiglu_ffn_grad_bf16": swiglu_ffn_grad_bf16,
    "two_head_attention_grad_f32": two_head_attention_grad_f32,
    "scan_two_layer_rnn_f32": scan_two_layer_rnn_f32,
    "fori_newton_schulz_f32": fori_newton_schulz_f32,
    "scan_block_power_iteration_bf16": scan_block_power_iteration_bf16,
}
