"""Hold-out set 12 of the trace-driven simulator (bench/FIDELITY-real.md).

GEMM-choice what-ifs (`--xla_gpu_enable_triton_gemm=false`) on programs no
earlier set compiled: two loops, three straight-line steps, bf16 and f32.
Declared before they were first captured; scored once, blind, by the model
that reads XLA's autotuning log. Each builder takes (jnp, jax, dims) and
returns (function, argument specs). The inputs are streamlens' ramp values
(-5 to 5), so each program scales what it multiplies.
"""


def bf16_attention_block(jnp, jax, dims):
    """One pre-norm attention block forward in bf16: qkv, scores, softmax,
    output projection, residual, a two-layer gelu MLP."""
    b, t, d, h = dims((2, 4, 16, 32), (8, 256, 512, 2048))

    def f(wqkv, wo, w1, w2, x):
        def norm(v):
            v32 = v.astype(jnp.float32)
            return ((v32 - v32.mean(-1, keepdims=True)) * jax.lax.rsqrt(v32.var(-1, keepdims=True) + 1e-5)).astype(v.dtype)

        q, k, v = jnp.split(norm(x) @ (0.02 * wqkv), 3, axis=-1)
        scores = jnp.einsum("btd,bsd->bts", q, k) / jnp.sqrt(jnp.bfloat16(d))
        attn = jnp.einsum("bts,bsd->btd", jax.nn.softmax(scores.astype(jnp.float32), -1).astype(q.dtype), v)
        x = x + attn @ (0.02 * wo)
        return x + jax.nn.gelu(norm(x) @ (0.02 * w1)) @ (0.02 * w2)

    s = jax.ShapeDtypeStruct
    bf = jnp.bfloat16
    return f, [s((d, 3 * d), bf), s((d, d), bf), s((d, h), bf), s((h, d), bf), s((b, t, d), bf)]


def f32_wide_regression_step(jnp, jax, dims):
    """A wide two-layer f32 regression trained one SGD step with weight decay."""
    b, d, h = dims((8, 16, 32), (256, 1024, 4096))

    def loss(w1, w2, x, y):
        return jnp.mean((jnp.tanh(x @ (0.01 * w1)) @ (0.01 * w2) - y) ** 2)

    def step(w1, w2, x, y):
        g1, g2 = jax.grad(loss, argnums=(0, 1))(w1, w2, x, y)
        return w1 * 0.999 - 0.01 * g1, w2 * 0.999 - 0.01 * g2

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return step, [s((d, h), f32), s((h, d), f32), s((b, d), f32), s((b, d), f32)]


def bf16_batched_einsum_chain(jnp, jax, dims):
    """Batched bf16 einsums in a chain (per-head projections and mixing)."""
    g, t, d, e = dims((2, 8, 16, 16), (16, 512, 128, 256))

    def f(a, b, c, x):
        y = jnp.einsum("gtd,gde->gte", x, 0.05 * a)
        y = jax.nn.relu(y)
        y = jnp.einsum("gte,ged->gtd", y, 0.05 * b)
        mix = jnp.einsum("gtd,gsd->gts", y, x) / 128.0
        return jnp.einsum("gts,gsd->gtd", jax.nn.softmax(mix.astype(jnp.float32), -1).astype(y.dtype), y) + c

    s = jax.ShapeDtypeStruct
    bf = jnp.bfloat16
    return f, [s((g, d, e), bf), s((g, e, d), bf), s((g, t, d), bf), s((g, t, d), bf)]


def bf16_scan_residual_mlp(jnp, jax, dims):
    """A residual bf16 MLP applied in lax.scan over layers whose weights are
    stacked (a scanned layer stack, as flax's nn.scan writes it)."""
    layers, b, d, h = dims((3, 4, 16, 32), (24, 256, 512, 1024))

    def f(w1s, w2s, x):
        def body(x, w):
            w1, w2 = w
            return x + jax.nn.relu(x @ (0.02 * w1)) @ (0.02 * w2), None

        x, _ = jax.lax.scan(body, x, (w1s, w2s))
        return x

    s = jax.ShapeDtypeStruct
    bf = jnp.bfloat16
    return f, [s((layers, d, h), bf), s((layers, h, d), bf), s((b, d), bf)]


def f32_fori_two_matmul(jnp, jax, dims):
    """lax.fori_loop of two f32 GEMMs and a normalisation a trip, a fixed
    trip count (XLA knows it and may unroll nothing)."""
    trips, n, k = dims((4, 16, 8), (96, 1024, 128))

    def f(a, b, v0):
        def body(_, v):
            w = jnp.tanh(a @ v)
            w = b @ w
            return w / (jnp.abs(w).max(axis=0, keepdims=True) + 1e-3)

        return jax.lax.fori_loop(0, trips, body, v0)

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return f, [s((n, n), f32), s((n, n), f32), s((n, k), f32)]


PROGRAMS = {
    "bf16_attention_block": bf16_attention_block,
    "f32_wide_regression_step": f32_wide_regression_step,
    "bf16_batched_einsum_chain": bf16_batched_einsum_chain,
    "bf16_scan_residual_mlp": bf16_scan_residual_mlp,
    "f32_fori_two_matmul": f32_fori_two_matmul,
}
