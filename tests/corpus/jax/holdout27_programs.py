"""Hold-out set 27 of the trace-driven simulator (bench/FIDELITY-real.md).

Five programs no set has compiled, measured as sets 18 to 26 were but on
an H100, to score out of sample the H100's device file (its graph-node
gaps measured on sets 23-25) and the trace-driven run's choice of the
device file from the GPU its capture names. Each scales a weight before it
multiplies, so that XLA's default can fuse the product into a Triton GEMM.
Declared before they were first captured; scored once, blind. Each builder
takes (jnp, jax, dims) and returns (function, argument specs). The inputs
are streamlens' ramp values (-5 to 5).
"""


def gated_linear_unit_sgd_bf16(jnp, jax, dims):
    """A gated linear unit MLP's squared-error SGD step in bf16: the input
    projected twice, one half gating the other under a sigmoid, projected
    back; no loop."""
    b, d, h = dims((8, 8, 8), (384, 512, 1024))

    def loss(w_a, w_b, w_o, x, y):
        z = (x @ (0.01 * w_a)) * jax.nn.sigmoid(x @ (0.01 * w_b))
        return jnp.mean(((z @ (0.01 * w_o)).astype(jnp.float32) - y.astype(jnp.float32)) ** 2)

    def step(w_a, w_b, w_o, x, y):
        grads = jax.grad(loss, argnums=(0, 1, 2))(w_a, w_b, w_o, x, y)
        return tuple(w - 0.1 * g for w, g in zip((w_a, w_b, w_o), grads))

    s = jax.ShapeDtypeStruct
    bf = jnp.bfloat16
    return step, [s((d, h), bf), s((d, h), bf), s((h, d), bf), s((b, d), bf), s((b, d), bf)]


def cross_attention_forward_bf16(jnp, jax, dims):
    """One cross-attention layer in bf16, forward only: queries from one
    sequence, keys and values from another, two heads and the output
    projection; no loop."""
    t, s_len, d = dims((8, 8, 16), (256, 384, 512))
    heads = 2
    hd = d // heads

    def f(wq, wk, wv, wo, x, m):
        q = (x @ (0.01 * wq)).reshape(t, heads, hd).transpose(1, 0, 2)
        k = (m @ (0.01 * wk)).reshape(s_len, heads, hd).transpose(1, 0, 2)
        v = (m @ (0.01 * wv)).reshape(s_len, heads, hd).transpose(1, 0, 2)
        p = jax.nn.softmax(jnp.einsum("htd,hsd->hts", q, k).astype(jnp.float32) / 16.0, axis=-1)
        o = jnp.einsum("hts,hsd->htd", p.astype(jnp.bfloat16), v).transpose(1, 0, 2).reshape(t, d)
        return o @ (0.01 * wo)

    s = jax.ShapeDtypeStruct
    bf = jnp.bfloat16
    return f, [s((d, d), bf), s((d, d), bf), s((d, d), bf), s((d, d), bf), s((t, d), bf), s((s_len, d), bf)]


def scan_linear_attention_bf16(jnp, jax, dims):
    """Linear attention over lax.scan in bf16: each trip projects its
    block's keys and values, adds their outer products to an f32 state and
    reads the state out with the block's queries."""
    trips, t, d = dims((4, 8, 8), (24, 64, 256))

    def f(wq, wk, wv, xs, s0):
        def body(state, x):
            q, k, v = x @ (0.01 * wq), x @ (0.01 * wk), x @ (0.01 * wv)
            state = state + (k.T @ v).astype(jnp.float32)
            y = q @ state.astype(x.dtype)
            return state, jnp.mean(y.astype(jnp.float32), axis=0)

        return jax.lax.scan(body, s0, xs)

    s = jax.ShapeDtypeStruct
    bf = jnp.bfloat16
    return f, [s((d, d), bf), s((d, d), bf), s((d, d), bf), s((trips, t, d), bf), s((d, d), jnp.float32)]


def fori_jacobi_iteration_f32(jnp, jax, dims):
    """Jacobi iteration for a diagonally dominant system in
    lax.fori_loop, f32: each trip multiplies the iterate by the
    off-diagonal part and divides by the diagonal."""
    trips, n, k = dims((4, 8, 8), (20, 640, 256))

    def f(r, diag, rhs, x0):
        def body(_, x):
            return (rhs - (0.001 * r) @ x) / (4.0 + jnp.abs(diag))[:, None]

        return jax.lax.fori_loop(0, trips, body, x0)

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return f, [s((n, n), f32), s((n,), f32), s((n, k), f32), s((n, k), f32)]


def bottleneck_autoencoder_grad_f32(jnp, jax, dims):
    """A three-layer autoencoder with a narrow bottleneck in f32: the
    reconstruction's squared error and the gradient of every weight; no
    loop."""
    b, d, h, z = dims((8, 8, 8, 4), (512, 512, 256, 64))

    def loss(w1, w2, w3, w4, x):
        e = jnp.tanh(jnp.tanh(x @ (0.01 * w1)) @ (0.01 * w2))
        r = jnp.tanh(e @ (0.01 * w3)) @ (0.01 * w4)
        return jnp.mean((r - x) ** 2)

    def step(w1, w2, w3, w4, x):
        grads = jax.grad(loss, argnums=(0, 1, 2, 3))(w1, w2, w3, w4, x)
        return tuple(w - 0.1 * g for w, g in zip((w1, w2, w3, w4), grads))

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return step, [s((d, h), f32), s((h, z), f32), s((z, h), f32), s((h, d), f32), s((b, d), f32)]


PROGRAMS = {
    "gated_linear_unit_sgd_bf16": gated_linear_unit_sgd_bf16,
    "cross_attention_forward_bf16": cross_attention_forward_bf16,
    "scan_linear_attention_bf16": scan_linear_attention_bf16,
    "fori_jacobi_iteration_f32": fori_jacobi_iteration_f32,
    "bottleneck_autoencoder_grad_f32": bottleneck_autoencoder_grad_f32,
}
