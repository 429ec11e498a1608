"""Hold-out set 14 of the trace-driven simulator (bench/FIDELITY-real.md).

Loops with GEMMs in their bodies, in plain JAX, none compiled by an earlier
set, for what-ifs across XLA's GEMM choice (`--xla_gpu_enable_triton_gemm=false`):
a loop body's GEMMs become cuBLAS commands of its command buffer, and each
costs the host more at every launch of it. Declared before they were first
captured; scored once, blind. Each builder takes (jnp, jax, dims) and
returns (function, argument specs). The inputs are streamlens' ramp values
(-5 to 5), so each program scales what it multiplies again and again.
"""


def fori_projection_sweep(jnp, jax, dims):
    """Repeated projection off a basis in lax.fori_loop: two GEMMs a trip."""
    trips, n, k, m = dims((3, 8, 2, 2), (48, 2048, 64, 32))

    def f(q, x0):
        qn = q / (jnp.linalg.norm(q, axis=0, keepdims=True) + 1.0)

        def body(_, x):
            x = x - qn @ (qn.T @ x)
            return x / (jnp.linalg.norm(x) + 1.0) + 0.01

        return jax.lax.fori_loop(0, trips, body, x0)

    s = jax.ShapeDtypeStruct
    return f, [s((n, k), jnp.float32), s((n, m), jnp.float32)]


def scan_bilinear_cell(jnp, jax, dims):
    """A bilinear recurrent cell over lax.scan in bf16: two GEMMs a trip."""
    trips, b, d = dims((4, 2, 8), (112, 48, 320))

    def f(w, v, h0, xs):
        def body(h, x):
            h = jnp.tanh(h @ (0.01 * w)) * jax.nn.sigmoid(x @ (0.01 * v))
            return h, h[:, :4]

        return jax.lax.scan(body, h0, xs)

    s = jax.ShapeDtypeStruct
    bf = jnp.bfloat16
    return f, [s((d, d), bf), s((d, d), bf), s((b, d), bf), s((trips, b, d), bf)]


def fori_chebyshev_filter(jnp, jax, dims):
    """A Chebyshev polynomial filter of a matrix applied to a block in
    lax.fori_loop (three-term recurrence): one GEMM a trip."""
    trips, n, k = dims((4, 8, 2), (64, 1024, 96))

    def f(a, y0):
        an = a / (jnp.float32(n) * 5.0)

        def body(_, ys):
            y_prev, y = ys
            return y, 2.0 * (an @ y) - y_prev

        return jax.lax.fori_loop(0, trips, body, (y0, an @ y0))

    s = jax.ShapeDtypeStruct
    return f, [s((n, n), jnp.float32), s((n, k), jnp.float32)]


def scan_tied_mlp_grad(jnp, jax, dims):
    """A weight-tied two-layer MLP applied over lax.scan steps and its
    gradient (a second scan backward), then an SGD step."""
    trips, b, d, h = dims((3, 2, 8, 16), (24, 128, 256, 1024))

    def loss(w1, w2, x0):
        def body(x, _):
            return x + 0.01 * (jax.nn.gelu(x @ (0.01 * w1)) @ (0.01 * w2)), None

        x, _ = jax.lax.scan(body, x0, None, length=trips)
        return jnp.mean(x ** 2)

    def step(w1, w2, x0):
        g1, g2 = jax.grad(loss, argnums=(0, 1))(w1, w2, x0)
        return w1 - 0.1 * g1, w2 - 0.1 * g2

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return step, [s((d, h), f32), s((h, d), f32), s((b, d), f32)]


def fori_normalized_power_bf16(jnp, jax, dims):
    """Normalised repeated multiplication by a matrix in bf16 in
    lax.fori_loop: one GEMM and a norm a trip."""
    trips, n, k = dims((4, 8, 4), (72, 1536, 48))

    def f(a, x0):
        def body(_, x):
            y = (x.T @ a).T
            return (y / (jnp.max(jnp.abs(y)) + 1.0)).astype(jnp.bfloat16)

        return jax.lax.fori_loop(0, trips, body, x0)

    s = jax.ShapeDtypeStruct
    bf = jnp.bfloat16
    return f, [s((n, n), bf), s((n, k), bf)]


PROGRAMS = {
    "fori_projection_sweep": fori_projection_sweep,
    "scan_bilinear_cell": scan_bilinear_cell,
    "fori_chebyshev_filter": fori_chebyshev_filter,
    "scan_tied_mlp_grad": scan_tied_mlp_grad,
    "fori_normalized_power_bf16": fori_normalized_power_bf16,
}
