"""Hold-out set 3 of the trace-driven simulator (bench/FIDELITY-real.md).

Declared before they were first captured; scored once, blind, with the model
as it stands when the set is scored. Each builder takes (jnp, jax, dims) and
returns (function, argument specs).
"""


def lstm_scan_train(jnp, jax, dims):
    """An LSTM over lax.scan and its gradient, small enough to be launch-bound."""
    t, b, d = dims((4, 2, 8), (32, 8, 128))

    def loss(w, xs):
        def cell(carry, x):
            h, c = carry
            gates = jnp.concatenate([h, x], -1) @ w
            i, f, g, o = jnp.split(gates, 4, -1)
            c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            return (h, c), h
        zeros = jnp.zeros((b, d), xs.dtype)
        _, hs = jax.lax.scan(cell, (zeros, zeros), xs)
        return jnp.mean(hs ** 2)

    def step(w, xs):
        l, g = jax.value_and_grad(loss)(w, xs)
        return l, w - 0.01 * g

    s = jax.ShapeDtypeStruct
    return step, [s((2 * d, 4 * d), jnp.float32), s((t, b, d), jnp.float32)]


def mlp_momentum_small(jnp, jax, dims):
    """A three-layer MLP trained with SGD and momentum, at a launch-bound size."""
    b, d = dims((4, 8), (32, 256))

    def loss(ws, x, y):
        h = x
        for w in ws[:-1]:
            h = jax.nn.relu(h @ w)
        return jnp.mean((h @ ws[-1] - y) ** 2)

    def step(w1, w2, w3, m1, m2, m3, x, y):
        ws, ms = (w1, w2, w3), (m1, m2, m3)
        l, g = jax.value_and_grad(loss)(ws, x, y)
        ms = tuple(0.9 * m + gw for m, gw in zip(ms, g))
        return (l,) + tuple(w - 0.01 * m for w, m in zip(ws, ms)) + ms

    s = jax.ShapeDtypeStruct
    w = s((d, d), jnp.float32)
    return step, [w] * 6 + [s((b, d), jnp.float32)] * 2


def rmsnorm_swiglu_bf16(jnp, jax, dims):
    """An LLM feed-forward block (RMSNorm, SwiGLU) forward and backward in bf16."""
    n, d, ff = dims((4, 16, 32), (2048, 1024, 4096))

    def loss(scale, wg, wu, wd, x):
        h = x * jax.lax.rsqrt(jnp.mean(x.astype(jnp.float32) ** 2, -1, keepdims=True) + 1e-6).astype(x.dtype)
        h = h * scale
        y = (jax.nn.silu(h @ wg) * (h @ wu)) @ wd
        return jnp.mean((x + y).astype(jnp.float32) ** 2)

    def step(scale, wg, wu, wd, x):
        l, g = jax.value_and_grad(loss, argnums=(0, 1, 2, 3))(scale, wg, wu, wd, x)
        return (l,) + tuple(p - (0.01 * gp).astype(p.dtype) for p, gp in zip((scale, wg, wu, wd), g))

    s = jax.ShapeDtypeStruct
    bf = jnp.bfloat16
    return step, [s((d,), bf), s((d, ff), bf), s((d, ff), bf), s((ff, d), bf), s((n, d), bf)]


def newton_while(jnp, jax, dims):
    """Newton's square root until it converges: a while loop with no known trip count."""
    n = dims(16, 4096)

    def f(a):
        a = jnp.abs(a) * 100.0 + 1.0

        def cond(state):
            x, delta, i = state
            return jnp.logical_and(delta > 1e-6, i < 60)

        def body(state):
            x, _, i = state
            nx = 0.5 * (x + a / x)
            return nx, jnp.max(jnp.abs(nx - x)), i + 1

        x, _, i = jax.lax.while_loop(cond, body, (a, jnp.float32(1e9), 0))
        return x, i

    return f, [jax.ShapeDtypeStruct((n,), jnp.float32)]


def topk_router(jnp, jax, dims):
    """A mixture-of-experts router's gradient: top-2 gating over 8 dense experts."""
    tokens, d, experts = dims((8, 16, 4), (4096, 512, 8))

    def loss(wg, we, x):
        logits = x @ wg
        top, idx = jax.lax.top_k(logits, 2)
        gates = jax.nn.softmax(top, -1)
        weight = jnp.sum(jax.nn.one_hot(idx, experts, dtype=x.dtype) * gates[..., None], -2)
        out = jnp.einsum("te,ted->td", weight, jnp.einsum("td,edf->tef", x, we))
        return jnp.mean(out ** 2)

    def step(wg, we, x):
        l, (gg, ge) = jax.value_and_grad(loss, argnums=(0, 1))(wg, we, x)
        return l, wg - 0.01 * gg, we - 0.01 * ge

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return step, [s((d, experts), f32), s((experts, d, d), f32), s((tokens, d), f32)]


PROGRAMS = {
    "lstm_scan_train": lstm_scan_train,
    "mlp_momentum_small": mlp_momentum_small,
    "rmsnorm_swiglu_bf16": rmsnorm_swiglu_bf16,
    "newton_while": newton_while,
    "topk_router": topk_router,
}
