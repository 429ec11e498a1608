"""Hold-out set 17 of the trace-driven simulator (bench/FIDELITY-real.md).

Loops whose trips slice their input and multiply the slice, so that
without Triton GEMMs (`--xla_gpu_enable_triton_gemm=false`) XLA wraps a
cuBLAS call in a dynamic-slice fusion, none compiled by an earlier set,
for what-ifs across XLA's GEMM choice. Declared before they were first
captured; scored once, blind. Each builder takes (jnp, jax, dims) and
returns (function, argument specs). The inputs are streamlens' ramp
values (-5 to 5), so each program scales what it multiplies again and
again.
"""


def scan_minimal_gated_readin(jnp, jax, dims):
    """A minimal gated unit over lax.scan: each step's input slice times an
    input matrix, the state times a recurrent one."""
    trips, b, d = dims((4, 2, 8), (64, 32, 512))

    def f(wx, wh, xs, h0):
        def body(h, x):
            g = jax.nn.sigmoid(x @ (0.01 * wx) + h @ (0.01 * wh))
            h = g * h + (1.0 - g) * jnp.tanh(x)
            return h, h[:, :8]

        h, ys = jax.lax.scan(body, h0, xs)
        return h, ys

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return f, [s((d, d), f32), s((d, d), f32), s((trips, b, d), f32), s((b, d), f32)]


def scan_linear_attention(jnp, jax, dims):
    """Causal linear attention as a recurrence over lax.scan: the state
    gains k_t^T v_t and each step reads q_t times the state."""
    trips, b, d = dims((4, 2, 8), (80, 16, 256))

    def f(qs, ks, vs):
        def body(state, qkv):
            q, k, v = qkv
            state = 0.99 * state + (k.T @ v) / jnp.float32(b * d)
            return state, q @ state

        s0 = jnp.zeros((d, d), jnp.float32)
        _, out = jax.lax.scan(body, s0, (qs, ks, vs))
        return out

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return f, [s((trips, b, d), f32)] * 3


def scan_input_projection_grad(jnp, jax, dims):
    """The gradient of a leaky recurrence over lax.scan whose steps project
    their input slice: the backward scan slices and multiplies again."""
    trips, b, d = dims((4, 2, 8), (40, 48, 384))

    def loss(w, u, xs, h0):
        def body(h, x):
            return 0.9 * h + 0.1 * jnp.tanh(x @ (0.01 * w) + h @ (0.01 * u)), None

        h, _ = jax.lax.scan(body, h0, xs)
        return jnp.mean(h ** 2)

    def step(w, u, xs, h0):
        gw, gu = jax.grad(loss, argnums=(0, 1))(w, u, xs, h0)
        return w - 0.1 * gw, u - 0.1 * gu

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return step, [s((d, d), f32), s((d, d), f32), s((trips, b, d), f32), s((b, d), f32)]


def fori_block_row_sweep(jnp, jax, dims):
    """A sweep over a tall matrix's row blocks in lax.fori_loop: each trip
    slices its block with lax.dynamic_slice and multiplies it."""
    trips, rows, n, k = dims((4, 8, 8, 2), (48, 128, 1024, 64))

    def f(a, x0):
        def body(i, x):
            block = jax.lax.dynamic_slice(a, (i * rows, 0), (rows, n))
            y = block @ x / jnp.float32(n * 5)
            return x + 0.01 * jnp.tanh(block.T @ y)

        return jax.lax.fori_loop(0, trips, body, x0)

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return f, [s((trips * rows, n), f32), s((n, k), f32)]


def scan_two_stream_mix_bf16(jnp, jax, dims):
    """Two input streams projected and mixed over lax.scan in bf16: two
    sliced inputs times their matrices and the state times a third, a step."""
    trips, b, d = dims((4, 2, 8), (56, 32, 768))

    def f(wa, wb, wh, xa, xb, h0):
        def body(h, xs):
            a, c = xs
            z = a @ (0.01 * wa) + c @ (0.01 * wb) + h @ (0.01 * wh)
            return jnp.tanh(z).astype(jnp.bfloat16), None

        h, _ = jax.lax.scan(body, h0, (xa, xb))
        return h

    s = jax.ShapeDtypeStruct
    bf = jnp.bfloat16
    return f, [s((d, d), bf)] * 3 + [s((trips, b, d), bf)] * 2 + [s((b, d), bf)]


PROGRAMS = {
    "scan_minimal_gated_readin": scan_minimal_gated_readin,
    "scan_linear_attention": scan_linear_attention,
    "scan_input_projection_grad": scan_input_projection_grad,
    "fori_block_row_sweep": fori_block_row_sweep,
    "scan_two_stream_mix_bf16": scan_two_stream_mix_bf16,
}
