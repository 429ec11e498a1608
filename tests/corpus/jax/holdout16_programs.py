"""Hold-out set 16 of the trace-driven simulator (bench/FIDELITY-real.md).

Programs with several GEMMs of different shapes a loop trip (graphs with
more than one cuBLAS command under `--xla_gpu_enable_triton_gemm=false`),
a gradient through a scan, and one program without a loop, none compiled
by an earlier set, for what-ifs across XLA's GEMM choice. Declared before
they were first captured; scored once, blind. Each builder takes (jnp,
jax, dims) and returns (function, argument specs). The inputs are
streamlens' ramp values (-5 to 5), so each program scales what it
multiplies again and again.
"""


def fori_sinkhorn_transport(jnp, jax, dims):
    """Sinkhorn iterations in lax.fori_loop: a kernel matrix times a narrow
    block, then its transpose times another, each trip."""
    trips, n, m, k = dims((3, 8, 8, 2), (48, 2048, 1536, 16))

    def f(c, u0, v0):
        kmat = jnp.exp(-jnp.abs(c) / 5.0)

        def body(_, uv):
            u, v = uv
            u = 1.0 / (kmat @ v + 1.0)
            v = 1.0 / (kmat.T @ u + 1.0)
            return u, v

        return jax.lax.fori_loop(0, trips, body, (u0, v0))

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return f, [s((n, m), f32), s((n, k), f32), s((m, k), f32)]


def scan_highway_layer_grad(jnp, jax, dims):
    """Highway layers (a transform and a gate GEMM) over lax.scan, and the
    gradient of their output's mean square (a second scan backward)."""
    trips, b, d = dims((3, 4, 8), (16, 64, 512))

    def loss(wh, wt, x0):
        def body(x, _):
            h = jnp.tanh(x @ (0.02 * wh))
            t = jax.nn.sigmoid(x @ (0.02 * wt))
            return t * h + (1.0 - t) * x, None

        x, _ = jax.lax.scan(body, x0, None, length=trips)
        return jnp.mean(x ** 2)

    def step(wh, wt, x0):
        gh, gt = jax.grad(loss, argnums=(0, 1))(wh, wt, x0)
        return wh - 0.1 * gh, wt - 0.1 * gt

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return step, [s((d, d), f32), s((d, d), f32), s((b, d), f32)]


def deep_linear_chain_bf16(jnp, jax, dims):
    """Six bf16 GEMMs of different widths in a chain, each followed by a
    bias and a GELU. No loop."""
    b, w = dims((8, 8), (512, 768))
    widths = [w, 2 * w, w // 2, 3 * w, w, w // 4, w]

    def f(x, *ws):
        h = x
        for wm in ws:
            h = jax.nn.gelu(h @ (0.02 * wm) + 0.1).astype(jnp.bfloat16)
        return h

    s = jax.ShapeDtypeStruct
    bf = jnp.bfloat16
    return f, [s((b, widths[0]), bf)] + [s((widths[i], widths[i + 1]), bf) for i in range(len(widths) - 1)]


def fori_polynomial_filter_bf16(jnp, jax, dims):
    """A polynomial filter p(A) X by Horner's rule in lax.fori_loop, bf16:
    one square-by-narrow GEMM and an update a trip."""
    trips, n, k = dims((3, 8, 2), (64, 2048, 32))

    def f(a, x):
        an = (a / (jnp.float32(n) * 5.0)).astype(jnp.bfloat16)

        def body(i, y):
            c = 1.0 / (1.0 + i.astype(jnp.float32))
            return (an @ y + c * x).astype(jnp.bfloat16)

        return jax.lax.fori_loop(0, trips, body, x)

    s = jax.ShapeDtypeStruct
    bf = jnp.bfloat16
    return f, [s((n, n), bf), s((n, k), bf)]


def scan_bottleneck_cell(jnp, jax, dims):
    """A recurrent bottleneck cell over lax.scan: a wide down-projection, a
    narrow core GEMM and an up-projection a trip, with a residual."""
    trips, b, d, r = dims((3, 2, 16, 4), (32, 16, 2048, 64))

    def f(wd, wc, wu, h0):
        def body(h, _):
            z = jnp.tanh(h @ (0.01 * wd))
            z = jnp.tanh(z @ (0.1 * wc))
            return h + 0.1 * (z @ (0.01 * wu)), None

        h, _ = jax.lax.scan(body, h0, None, length=trips)
        return h

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return f, [s((d, r), f32), s((r, r), f32), s((r, d), f32), s((b, d), f32)]


PROGRAMS = {
    "fori_sinkhorn_transport": fori_sinkhorn_transport,
    "scan_highway_layer_grad": scan_highway_layer_grad,
    "deep_linear_chain_bf16": deep_linear_chain_bf16,
    "fori_polynomial_filter_bf16": fori_polynomial_filter_bf16,
    "scan_bottleneck_cell": scan_bottleneck_cell,
}
