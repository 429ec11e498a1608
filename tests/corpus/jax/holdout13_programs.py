"""Hold-out set 13 of the trace-driven simulator (bench/FIDELITY-real.md).

Loops with GEMMs in their bodies, in plain JAX, none compiled by an earlier
set, for what-ifs across XLA's GEMM choice (`--xla_gpu_enable_triton_gemm=false`):
the cuBLAS calls a loop body gets then are traced again whenever XLA records
the body's command buffer again, a host cost the capture of the other setting
cannot show. Declared before they were first captured; scored once, blind.
Each builder takes (jnp, jax, dims) and returns (function, argument specs).
The inputs are streamlens' ramp values (-5 to 5), so each program scales
what it multiplies again and again.
"""


def scan_gated_unit(jnp, jax, dims):
    """A gated recurrent unit of two GEMMs over lax.scan, forward only."""
    trips, b, d = dims((4, 2, 8), (96, 64, 384))

    def f(w, u, h0, xs):
        def body(h, x):
            gate = jax.nn.sigmoid(0.01 * (x @ u))
            h = gate * h + (1 - gate) * jnp.tanh(0.01 * (h @ w))
            return h, h[:, 0]

        return jax.lax.scan(body, h0, xs)

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return f, [s((d, d), f32), s((d, d), f32), s((b, d), f32), s((trips, b, d), f32)]


def fori_newton_schulz(jnp, jax, dims):
    """Newton-Schulz iteration toward an orthogonal factor in lax.fori_loop:
    two GEMMs a trip."""
    trips, n, k = dims((3, 8, 4), (40, 1024, 128))

    def f(x0):
        x = x0 / (jnp.linalg.norm(x0) + 1.0)

        def body(_, x):
            return 1.5 * x - 0.5 * x @ (x.T @ x)

        return jax.lax.fori_loop(0, trips, body, x)

    s = jax.ShapeDtypeStruct
    return f, [s((n, k), jnp.float32)]


def scan_ssm_readout(jnp, jax, dims):
    """A diagonal-plus-low-rank state-space layer over lax.scan: state update
    and readout GEMMs a trip, bf16."""
    trips, b, d, r = dims((4, 2, 8, 4), (128, 32, 256, 64))

    def f(p, q, c, h0, xs):
        def body(h, x):
            h = 0.9 * h + ((h @ (0.01 * p)) @ (0.01 * q)) + x
            return h, jnp.tanh(h @ (0.01 * c))

        return jax.lax.scan(body, h0, xs)

    s = jax.ShapeDtypeStruct
    bf = jnp.bfloat16
    return f, [s((d, r), bf), s((r, d), bf), s((d, d), bf), s((b, d), bf), s((trips, b, d), bf)]


def rnn_two_layer_grad(jnp, jax, dims):
    """Two stacked tanh RNN layers over lax.scan and their gradient (a second
    scan backward), then an SGD step."""
    trips, b, d = dims((4, 2, 8), (48, 64, 256))

    def loss(w1, w2, xs):
        def body(hs, x):
            h1, h2 = hs
            h1 = jnp.tanh(0.01 * (h1 @ w1 + x))
            h2 = jnp.tanh(0.01 * (h2 @ w2 + h1))
            return (h1, h2), None

        z = jnp.zeros((b, d), jnp.float32)
        (_, h2), _ = jax.lax.scan(body, (z, z), xs)
        return jnp.mean(h2 ** 2)

    def step(w1, w2, xs):
        g1, g2 = jax.grad(loss, argnums=(0, 1))(w1, w2, xs)
        return w1 - 0.1 * g1, w2 - 0.1 * g2

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return step, [s((d, d), f32), s((d, d), f32), s((trips, b, d), f32)]


def fori_block_jacobi(jnp, jax, dims):
    """Jacobi iteration for a block of right-hand sides in lax.fori_loop:
    one GEMM and an update a trip, bf16 operands, f32 accumulation."""
    trips, n, k = dims((4, 8, 2), (80, 1536, 64))

    def f(a, b, x0):
        d = jnp.float32(n) * 10.0

        def body(_, x):
            r = b - jnp.dot((0.001 * a).astype(jnp.bfloat16), x.astype(jnp.bfloat16),
                            preferred_element_type=jnp.float32)
            return x + r / d

        return jax.lax.fori_loop(0, trips, body, x0)

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return f, [s((n, n), f32), s((n, k), f32), s((n, k), f32)]


PROGRAMS = {
    "scan_gated_unit": scan_gated_unit,
    "fori_newton_schulz": fori_newton_schulz,
    "scan_ssm_readout": scan_ssm_readout,
    "rnn_two_layer_grad": rnn_two_layer_grad,
    "fori_block_jacobi": fori_block_jacobi,
}
