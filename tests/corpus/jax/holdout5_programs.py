"""Hold-out set 5 of the trace-driven simulator (bench/FIDELITY-real.md).

Declared before they were first captured, for the model of the wait after a
cold graph launch's first node; scored once, blind, with the model as it
stands when the set is scored. Each builder takes (jnp, jax, dims) and
returns (function, argument specs).
"""


def adamw_update(jnp, jax, dims):
    """AdamW over four parameter tensors: elementwise work, one graph."""
    shapes = dims([(8, 8)] * 4, [(512, 512), (512,), (512, 256), (256,)])

    def step(*args):
        n = len(args) // 4
        params, grads, m, v = args[:n], args[n:2 * n], args[2 * n:3 * n], args[3 * n:]
        m = tuple(0.9 * a + 0.1 * g for a, g in zip(m, grads))
        v = tuple(0.999 * b + 0.001 * g * g for b, g in zip(v, grads))
        params = tuple(p - 1e-3 * (a / (jnp.sqrt(b) + 1e-8) + 0.01 * p) for p, a, b in zip(params, m, v))
        return params + m + v

    s = jax.ShapeDtypeStruct
    return step, [s(shape, jnp.float32) for shape in shapes] * 4


def mlp3_gelu(jnp, jax, dims):
    """A three-layer GELU network's SGD step on a squared error."""
    b, d, h = dims((4, 8, 8), (256, 256, 512))

    def loss(w1, w2, w3, x, y):
        return jnp.mean((jax.nn.gelu(jax.nn.gelu(x @ w1) @ w2) @ w3 - y) ** 2)

    def step(w1, w2, w3, x, y):
        l, g = jax.value_and_grad(loss, argnums=(0, 1, 2))(w1, w2, w3, x, y)
        return (l,) + tuple(w - 0.01 * gw for w, gw in zip((w1, w2, w3), g))

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return step, [s((d, h), f32), s((h, h), f32), s((h, d), f32), s((b, d), f32), s((b, d), f32)]


def layernorm_regression(jnp, jax, dims):
    """Layer norm, a linear map and a squared error, with a momentum update."""
    b, d = dims((4, 8), (512, 512))

    def loss(w, g, x, y):
        mu = jnp.mean(x, -1, keepdims=True)
        var = jnp.mean((x - mu) ** 2, -1, keepdims=True)
        xn = (x - mu) / jnp.sqrt(var + 1e-5) * g
        return jnp.mean((xn @ w - y) ** 2)

    def step(w, g, mw, mg, x, y):
        l, (gw, gg) = jax.value_and_grad(loss, argnums=(0, 1))(w, g, x, y)
        mw, mg = 0.9 * mw + gw, 0.9 * mg + gg
        return l, w - 0.01 * mw, g - 0.01 * mg, mw, mg

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return step, [s((d, d), f32), s((d,), f32), s((d, d), f32), s((d,), f32), s((b, d), f32), s((b, d), f32)]


def gated_scan(jnp, jax, dims):
    """A gated recurrence with lax.scan: a GEMM and a gate each trip."""
    t, b, d = dims((4, 2, 8), (32, 64, 256))

    def f(w, u, xs):
        def trip(h, x):
            gate = jax.nn.sigmoid(x @ u)
            h = gate * jnp.tanh(h @ w + x) + (1 - gate) * h
            return h, h

        _, hs = jax.lax.scan(trip, jnp.zeros((b, d), xs.dtype), xs)
        return hs

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return f, [s((d, d), f32), s((d, d), f32), s((t, b, d), f32)]


def huber_sgd(jnp, jax, dims):
    """A linear model's SGD step on a Huber loss with weight decay: a small graph."""
    b, d = dims((4, 8), (1024, 256))

    def loss(w, x, y):
        r = x @ w - y
        a = jnp.abs(r)
        return jnp.mean(jnp.where(a < 1.0, 0.5 * r * r, a - 0.5))

    def step(w, x, y):
        l, g = jax.value_and_grad(loss)(w, x, y)
        return l, w - 0.01 * (g + 1e-4 * w)

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return step, [s((d, 1), f32), s((b, d), f32), s((b, 1), f32)]


PROGRAMS = {
    "adamw_update": adamw_update,
    "mlp3_gelu": mlp3_gelu,
    "layernorm_regression": layernorm_regression,
    "gated_scan": gated_scan,
    "huber_sgd": huber_sgd,
}
