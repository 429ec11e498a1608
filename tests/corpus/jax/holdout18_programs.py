"""Hold-out set 18 of the trace-driven simulator (bench/FIDELITY-real.md).

Five programs no set has compiled, two straight-line train steps and three
loops, for what-ifs across XLA's GEMM choice and its command buffers,
measured two ways: each setting in a process of its own (as sets 12-17)
and all settings in one process (bench/gpu/capture_jax_one_process.sh).
Declared before they were first captured; scored once, blind. Each
builder takes (jnp, jax, dims) and returns (function, argument specs). The
inputs are streamlens' ramp values (-5 to 5), so each program scales what
it multiplies.
"""


def residual_mlp_adam_f32(jnp, jax, dims):
    """Three residual blocks of a wide f32 MLP, with a hand-written Adam
    step over their weights: no loop, one graph a step."""
    b, d = dims((4, 8), (256, 1024))

    def loss(ws, x):
        h = x
        for w in ws:
            h = h + jnp.tanh(h @ (0.001 * w))
        return jnp.mean(h ** 2)

    def step(w0, w1, w2, m0, m1, m2, x):
        ws, ms = (w0, w1, w2), (m0, m1, m2)
        gs = jax.grad(loss)(ws, x)
        new_m = [0.9 * m + 0.1 * g for m, g in zip(ms, gs)]
        new_w = [w - 0.01 * m / (jnp.sqrt(m * m) + 1e-6) for w, m in zip(ws, new_m)]
        return tuple(new_w) + tuple(new_m)

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return step, [s((d, d), f32)] * 6 + [s((b, d), f32)]


def attention_head_grad_bf16(jnp, jax, dims):
    """One causal attention head in bf16: the gradient of its projections'
    weights through softmax attention, no loop."""
    t, d = dims((8, 8), (512, 256))

    def loss(wq, wk, wv, x):
        q, k, v = x @ (0.01 * wq), x @ (0.01 * wk), x @ (0.01 * wv)
        scores = (q @ k.T).astype(jnp.float32) / jnp.float32(d)
        mask = jnp.tril(jnp.ones((t, t), bool))
        p = jax.nn.softmax(jnp.where(mask, scores, -1e9), axis=-1).astype(jnp.bfloat16)
        return jnp.mean((p @ v).astype(jnp.float32) ** 2)

    def step(wq, wk, wv, x):
        gs = jax.grad(loss, argnums=(0, 1, 2))(wq, wk, wv, x)
        return tuple(w - 0.1 * g for w, g in zip((wq, wk, wv), gs))

    s = jax.ShapeDtypeStruct
    bf = jnp.bfloat16
    return step, [s((d, d), bf)] * 3 + [s((t, d), bf)]


def scan_elman_grad_bf16(jnp, jax, dims):
    """The gradient of an Elman network over lax.scan in bf16: each trip
    multiplies its input slice and the state."""
    trips, b, d = dims((4, 2, 8), (48, 64, 512))

    def loss(wx, wh, xs, h0):
        def body(h, x):
            h = jnp.tanh(x @ (0.01 * wx) + h @ (0.01 * wh))
            return h, None

        h, _ = jax.lax.scan(body, h0, xs)
        return jnp.mean(h.astype(jnp.float32) ** 2)

    def step(wx, wh, xs, h0):
        gx, gh = jax.grad(loss, argnums=(0, 1))(wx, wh, xs, h0)
        return wx - 0.1 * gx, wh - 0.1 * gh

    s = jax.ShapeDtypeStruct
    bf = jnp.bfloat16
    return step, [s((d, d), bf)] * 2 + [s((trips, b, d), bf), s((b, d), bf)]


def fori_subspace_iteration(jnp, jax, dims):
    """Subspace iteration in lax.fori_loop: a block of vectors multiplied by
    a matrix and its columns normalized, every trip."""
    trips, n, k = dims((4, 8, 2), (40, 2048, 64))

    def f(a, q0):
        def body(_, q):
            z = a @ q / jnp.float32(n * 5)
            return z / (jnp.linalg.norm(z, axis=0, keepdims=True) + 1e-6)

        return jax.lax.fori_loop(0, trips, body, q0)

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return f, [s((n, n), f32), s((n, k), f32)]


def scan_mixture_gate_readout(jnp, jax, dims):
    """A soft mixture over lax.scan: each trip gates four experts' products
    of its input slice by a softmax over a gate's product."""
    trips, b, d, e = dims((4, 2, 8, 2), (64, 32, 384, 4))

    def f(wg, we, xs):
        def body(acc, x):
            gate = jax.nn.softmax(x @ (0.01 * wg), axis=-1)
            experts = jnp.einsum("bd,edf->bef", x, 0.01 * we)
            y = jnp.einsum("be,bef->bf", gate, experts)
            return acc + jnp.tanh(y), y[:, :8]

        acc0 = jnp.zeros(xs.shape[1:], jnp.float32)
        return jax.lax.scan(body, acc0, xs)

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return f, [s((d, e), f32), s((e, d, d), f32), s((trips, b, d), f32)]


PROGRAMS = {
    "residual_mlp_adam_f32": residual_mlp_adam_f32,
    "attention_head_grad_bf16": attention_head_grad_bf16,
    "scan_elman_grad_bf16": scan_elman_grad_bf16,
    "fori_subspace_iteration": fori_subspace_iteration,
    "scan_mixture_gate_readout": scan_mixture_gate_readout,
}
