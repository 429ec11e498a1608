"""Hold-out set 4 of the trace-driven simulator (bench/FIDELITY-real.md).

Declared before they were first captured; scored once, blind, with the model
as it stands when the set is scored. Each builder takes (jnp, jax, dims) and
returns (function, argument specs).
"""


def rmsprop_update(jnp, jax, dims):
    """RMSProp over six parameter tensors: elementwise work only, launch-bound."""
    shapes = dims([(8, 8)] * 6, [(256, 256), (256,), (256, 512), (512,), (512, 128), (128,)])

    def step(*args):
        n = len(args) // 3
        params, grads, sq = args[:n], args[n:2 * n], args[2 * n:]
        sq = tuple(0.9 * s + 0.1 * g * g for s, g in zip(sq, grads))
        params = tuple(p - 1e-3 * g / (jnp.sqrt(s) + 1e-8) for p, g, s in zip(params, grads, sq))
        return params + sq

    s = jax.ShapeDtypeStruct
    specs = [s(shape, jnp.float32) for shape in shapes]
    return step, specs * 3


def vae_small(jnp, jax, dims):
    """A small variational autoencoder's step: encoder, reparameterisation, decoder."""
    b, d, h, z = dims((4, 8, 8, 2), (64, 256, 128, 16))

    def loss(we, wm, wv, wd, wo, x, eps):
        e = jnp.tanh(x @ we)
        mu, logvar = e @ wm, e @ wv
        zs = mu + jnp.exp(0.5 * logvar) * eps
        out = jax.nn.sigmoid(jnp.tanh(zs @ wd) @ wo)
        rec = jnp.mean((out - x) ** 2)
        kl = -0.5 * jnp.mean(1 + logvar - mu ** 2 - jnp.exp(logvar))
        return rec + kl

    def step(we, wm, wv, wd, wo, x, eps):
        ws = (we, wm, wv, wd, wo)
        l, g = jax.value_and_grad(loss, argnums=(0, 1, 2, 3, 4))(*ws, x, eps)
        return (l,) + tuple(w - 0.01 * gw for w, gw in zip(ws, g))

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return step, [s((d, h), f32), s((h, z), f32), s((h, z), f32), s((z, h), f32), s((h, d), f32),
                  s((b, d), f32), s((b, z), f32)]


def ema_scan(jnp, jax, dims):
    """An exponential moving average over time with lax.scan: a slice of the input each trip."""
    t, b, d = dims((4, 2, 8), (64, 16, 512))

    def f(xs, decay):
        def trip(acc, x):
            acc = decay * acc + (1 - decay) * x
            return acc, jnp.tanh(acc)

        _, ys = jax.lax.scan(trip, jnp.zeros((b, d), xs.dtype), xs)
        return ys

    s = jax.ShapeDtypeStruct
    return f, [s((t, b, d), jnp.float32), s((), jnp.float32)]


def conv1d_train(jnp, jax, dims):
    """A two-layer 1-D convolutional network's SGD step (cuDNN)."""
    b, c, n, k = dims((2, 4, 16, 3), (32, 64, 1024, 5))

    def loss(w1, w2, x):
        spec = ("NCH", "OIH", "NCH")
        h = jax.lax.conv_general_dilated(x, w1, (1,), "SAME", dimension_numbers=spec)
        h = jax.nn.relu(h)
        y = jax.lax.conv_general_dilated(h, w2, (1,), "SAME", dimension_numbers=spec)
        return jnp.mean(y ** 2)

    def step(w1, w2, x):
        l, (g1, g2) = jax.value_and_grad(loss, argnums=(0, 1))(w1, w2, x)
        return l, w1 - 0.01 * g1, w2 - 0.01 * g2

    s = jax.ShapeDtypeStruct
    f32 = jnp.float32
    return step, [s((c, c, k), f32), s((c, c, k), f32), s((b, c, n), f32)]


def classifier_xent(jnp, jax, dims):
    """A two-layer classifier with label-smoothed cross-entropy, mid-size GEMMs in bf16."""
    b, d, h, classes = dims((4, 8, 8, 4), (1024, 1024, 2048, 1000))

    def loss(w1, w2, x, labels):
        logits = (jax.nn.gelu(x @ w1) @ w2).astype(jnp.float32)
        target = jax.nn.one_hot(labels, classes) * 0.9 + 0.1 / classes
        return -jnp.mean(jnp.sum(target * jax.nn.log_softmax(logits), -1))

    def step(w1, w2, x, labels):
        l, (g1, g2) = jax.value_and_grad(loss, argnums=(0, 1))(w1, w2, x, labels)
        return l, w1 - (0.01 * g1).astype(w1.dtype), w2 - (0.01 * g2).astype(w2.dtype)

    s = jax.ShapeDtypeStruct
    bf = jnp.bfloat16
    return step, [s((d, h), bf), s((h, classes), bf), s((b, d), bf), s((b,), jnp.int32)]


PROGRAMS = {
    "rmsprop_update": rmsprop_update,
    "vae_small": vae_small,
    "ema_scan": ema_scan,
    "conv1d_train": conv1d_train,
    "classifier_xent": classifier_xent,
}
