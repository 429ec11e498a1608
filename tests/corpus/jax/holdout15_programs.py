"""Hold-out set 15 of the trace-driven simulator (bench/FIDELITY-real.md).

Programs whose GEMMs have a long contraction and a narrow result, the shape
cuBLAS splits over K (a GEMM kernel and a reduction kernel a call), in
loops and without, none compiled by an earlier set, for what-ifs across
XLA's GEMM choice (`--xla_gpu_enable_triton_gemm=false`). Declared before
they were first captured; scored once, blind. Each builder takes (jnp, jax,
dims) and returns (function, argument specs). The inputs are streamlens'
ramp values (-5 to 5), so each program scales what it multiplies again and
again.
"""


def fori_krylov_block(jnp, jax, dims):
    """A block Krylov sequence in lax.fori_loop: one tall GEMM a trip, each
    block normalised."""
    trips, n, k = dims((3, 8, 2), (56, 1536, 64))

    def f(a, v0):
        an = a / (jnp.float32(n) * 5.0)

        def body(_, v):
            w = an @ v
            return w / (jnp.max(jnp.abs(w)) + 1.0)

        return jax.lax.fori_loop(0, trips, body, v0)

    s = jax.ShapeDtypeStruct
    return f, [s((n, n), jnp.float32), s((n, k), jnp.float32)]


def scan_lowrank_adapter_bf16(jnp, jax, dims):
    """A residual layer with a low-rank adapter over lax.scan in bf16: the
    dense GEMM and the adapter's two narrow GEMMs a trip."""
    trips, b, d, r = dims((3, 2, 8, 2), (40, 32, 1024, 16))

    def f(w, a, bm, h0):
        def body(h, _):
            y = h @ (0.01 * w) + (h @ (0.1 * a)) @ (0.1 * bm)
            return (h + jnp.tanh(y)).astype(jnp.bfloat16), None

        h, _ = jax.lax.scan(body, h0, None, length=trips)
        return h

    s = jax.ShapeDtypeStruct
    bf = jnp.bfloat16
    return f, [s((d, d), bf), s((d, r), bf), s((r, d), bf), s((b, d), bf)]


def tall_least_squares_step(jnp, jax, dims):
    """One gradient step of a multi-output least-squares fit on a tall
    design matrix: X^T (X w - y) contracts over every row. No loop."""
    rows, feats, outs = dims((16, 8, 2), (16384, 384, 24))

    def step(x, w, y):
        r = x @ w - y
        g = x.T @ r / jnp.float32(rows)
        return w - 1e-4 * g, jnp.mean(r ** 2)

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return step, [s((rows, feats), f32), s((feats, outs), f32), s((rows, outs), f32)]


def fori_gram_correction(jnp, jax, dims):
    """Repeated Gram correction of a tall block in lax.fori_loop: Q^T Q over
    the long side, then Q times the small correction."""
    trips, n, k = dims((3, 16, 2), (40, 4096, 48))

    def f(q0):
        def body(_, q):
            g = q.T @ q / jnp.float32(n)
            q = q - 0.01 * (q @ g)
            return q / (jnp.max(jnp.abs(q)) + 1.0)

        return jax.lax.fori_loop(0, trips, body, q0)

    s = jax.ShapeDtypeStruct
    return f, [s((n, k), jnp.float32)]


def scan_memory_readout_grad(jnp, jax, dims):
    """Attention of a few queries over a long memory, one read a scan step,
    and its gradient (a second scan backward)."""
    trips, q, m, d = dims((3, 2, 16, 8), (24, 8, 2048, 128))

    def loss(mem, wq, x0):
        def body(x, _):
            scores = (x @ wq) @ mem.T / jnp.float32(d)
            read = jax.nn.softmax(scores, axis=-1) @ mem
            return x + 0.1 * jnp.tanh(read), None

        x, _ = jax.lax.scan(body, x0, None, length=trips)
        return jnp.mean(x ** 2)

    def step(mem, wq, x0):
        gm, gw = jax.grad(loss, argnums=(0, 1))(mem, wq, x0)
        return mem - 0.1 * gm, wq - 0.1 * gw

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return step, [s((m, d), f32), s((d, d), f32), s((q, d), f32)]


PROGRAMS = {
    "fori_krylov_block": fori_krylov_block,
    "scan_lowrank_adapter_bf16": scan_lowrank_adapter_bf16,
    "tall_least_squares_step": tall_least_squares_step,
    "fori_gram_correction": fori_gram_correction,
    "scan_memory_readout_grad": scan_memory_readout_grad,
}
