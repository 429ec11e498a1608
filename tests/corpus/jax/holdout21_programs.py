"""Hold-out set 21 of the trace-driven simulator (bench/FIDELITY-real.md).

Five programs no set has compiled, two straight-line train steps and three
loops, for what-ifs across XLA's GEMM choice and command buffers, measured
in one process and in separate processes as sets 18 to 20 were. Each scales
a weight before it multiplies, so that XLA's default may fuse the product
into a Triton GEMM and its notriton setting calls cuBLAS (set 20's
Newton-Schulz steps made the same cuBLAS calls under both). Declared before
they were first captured; scored once, blind. Each builder takes (jnp, jax,
dims) and returns (function, argument specs). The inputs are streamlens'
ramp values (-5 to 5).
"""


def cross_attention_grad_bf16(jnp, jax, dims):
    """One head of cross-attention, queries from a sequence and keys and
    values from a memory, with its output projection and gradient in bf16;
    no loop."""
    t, m, d = dims((8, 16, 8), (256, 512, 512))

    def loss(wq, wk, wv, wo, x, mem):
        q, k, v = x @ (0.01 * wq), mem @ (0.01 * wk), mem @ (0.01 * wv)
        p = jax.nn.softmax((q @ k.T).astype(jnp.float32) / jnp.float32(d), axis=-1)
        o = p.astype(jnp.bfloat16) @ v
        return jnp.mean((o @ (0.01 * wo)).astype(jnp.float32) ** 2)

    def step(wq, wk, wv, wo, x, mem):
        grads = jax.grad(loss, argnums=(0, 1, 2, 3))(wq, wk, wv, wo, x, mem)
        return tuple(w - 0.1 * g for w, g in zip((wq, wk, wv, wo), grads))

    s = jax.ShapeDtypeStruct
    bf = jnp.bfloat16
    return step, [s((d, d), bf)] * 4 + [s((t, d), bf), s((m, d), bf)]


def glu_classifier_xent_f32(jnp, jax, dims):
    """A GLU hidden layer under a softmax cross-entropy classifier, one SGD
    step in f32; no loop."""
    b, d, h, c = dims((8, 8, 16, 4), (512, 384, 768, 128))

    def loss(wa, wb, wc, x):
        z = (x @ (0.01 * wa)) * jax.nn.sigmoid(x @ (0.01 * wb))
        logits = z @ (0.01 * wc)
        labels = jnp.arange(b) % c
        logp = jax.nn.log_softmax(logits, axis=-1)
        return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))

    def step(wa, wb, wc, x):
        ga, gb, gc = jax.grad(loss, argnums=(0, 1, 2))(wa, wb, wc, x)
        return wa - 0.1 * ga, wb - 0.1 * gb, wc - 0.1 * gc

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return step, [s((d, h), f32), s((d, h), f32), s((h, c), f32), s((b, d), f32)]


def scan_two_direction_mix_f32(jnp, jax, dims):
    """Two tanh states over lax.scan in f32, one reading the sequence
    forward and one backward, mixed into each other each trip."""
    trips, b, d = dims((4, 2, 8), (40, 128, 256))

    def f(wf, wb, wm, xs, hf, hb):
        def body(carry, x):
            a, c = carry
            xf, xb = x
            a2 = jnp.tanh(xf @ (0.01 * wf) + c @ (0.01 * wm))
            c2 = jnp.tanh(xb @ (0.01 * wb) + a2 @ (0.01 * wm))
            return (a2, c2), jnp.sum(a2 * c2)

        return jax.lax.scan(body, (hf, hb), (xs, xs[::-1]))

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return f, [s((d, d), f32)] * 3 + [s((trips, b, d), f32), s((b, d), f32), s((b, d), f32)]


def fori_lowrank_update_bf16(jnp, jax, dims):
    """Low-rank updates in lax.fori_loop, bf16: each trip moves a square
    matrix by a scaled product of tall and wide factors."""
    trips, n, r = dims((4, 8, 2), (24, 1024, 64))

    def f(x0, u, v):
        def body(_, x):
            w = (0.01 * v).T @ x
            return (x - (0.01 * u) @ w).astype(jnp.bfloat16)

        return jax.lax.fori_loop(0, trips, body, x0)

    s = jax.ShapeDtypeStruct
    bf = jnp.bfloat16
    return f, [s((n, n), bf), s((n, r), bf), s((n, r), bf)]


def scan_attention_pooling_f32(jnp, jax, dims):
    """Attention pooling over lax.scan in f32: each trip pools a chunk of the
    sequence under a learned query and feeds it into the carried state."""
    trips, t, d = dims((4, 8, 8), (32, 256, 384))

    def f(wq, ws, chunks, h0):
        def body(h, chunk):
            q = h @ (0.01 * wq)
            p = jax.nn.softmax(chunk @ q.T / jnp.float32(d), axis=0)
            pooled = p.T @ chunk
            return jnp.tanh(h + pooled @ (0.01 * ws)), jnp.sum(pooled)

        return jax.lax.scan(body, h0, chunks)

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return f, [s((d, d), f32), s((d, d), f32), s((trips, t, d), f32), s((8, d), f32)]


PROGRAMS = {
    "cross_attention_grad_bf16": cross_attention_grad_bf16,
    "glu_classifier_xent_f32": glu_classifier_xent_f32,
    "scan_two_direction_mix_f32": scan_two_direction_mix_f32,
    "fori_lowrank_update_bf16": fori_lowrank_update_bf16,
    "scan_attention_pooling_f32": scan_attention_pooling_f32,
}
