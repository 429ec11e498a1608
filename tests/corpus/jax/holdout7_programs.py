"""Hold-out set 7 of the trace-driven simulator (bench/FIDELITY-real.md).

GEMM-heavy models, most in bf16, for what-ifs across XLA's GEMM choice:
with `--xla_gpu_enable_triton_gemm=false` every dot XLA would have fused
into a Triton GEMM becomes a cuBLAS call, so a what-if between the two
settings costs instructions the capture never ran (the device model
corrected by the matched GEMMs' bias). Declared before they were first
captured; scored once, blind, with the model as it stands. Each builder
takes (jnp, jax, dims) and returns (function, argument specs).
"""

from holdout6_programs import _train_step, _xent


def vit_block_bf16(jnp, jax, dims):
    """A vision transformer's patch embedding (a reshape and a dense layer),
    one encoder block and a pooled head, in bf16, trained with adamw."""
    import flax.linen as nn
    import optax
    b, img, patch, d, heads = dims((2, 8, 4, 16, 2), (64, 64, 8, 384, 6))
    side, bf = img // patch, jnp.bfloat16

    class ViT(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = x.reshape(b, side, patch, side, patch, 3).transpose(0, 1, 3, 2, 4, 5)
            x = nn.Dense(d, dtype=bf)(x.reshape(b, side * side, patch * patch * 3))
            x = x + self.param("position", nn.initializers.normal(0.02), (1, side * side, d))
            h = nn.LayerNorm(dtype=bf)(x)
            x = x + nn.MultiHeadDotProductAttention(num_heads=heads, dtype=bf)(h, h)
            h = nn.LayerNorm(dtype=bf)(x)
            x = x + nn.Dense(d, dtype=bf)(nn.gelu(nn.Dense(4 * d, dtype=bf)(h)))
            return nn.Dense(10, dtype=bf)(jnp.mean(x, axis=1))

    s = jax.ShapeDtypeStruct
    x, y = s((b, img, img, 3), jnp.float32), s((b,), jnp.int32)
    model = ViT()
    params = jax.eval_shape(model.init, jax.random.key(0), x)["params"]
    loss = lambda p, x, y: _xent(jax, jnp, model.apply({"params": p}, x).astype(jnp.float32), y, 10)
    return _train_step(jax, loss, params, optax.adamw(1e-3, weight_decay=0.05), [x, y])


def two_tower_retrieval(jnp, jax, dims):
    """A two-tower retrieval model: user and item embeddings (gathers, and a
    scatter in the gradient) through MLP towers, an in-batch softmax over
    the batch's items, adagrad."""
    import flax.linen as nn
    import optax
    b, users, items, e, h = dims((4, 16, 16, 8, 8), (1024, 50000, 100000, 64, 256))

    class Tower(nn.Module):
        rows: int

        @nn.compact
        def __call__(self, ids):
            x = nn.Dense(e)(nn.relu(nn.Dense(h)(nn.Embed(self.rows, e)(ids))))
            return x / jnp.linalg.norm(x, axis=-1, keepdims=True)

    class TwoTower(nn.Module):
        @nn.compact
        def __call__(self, u, i):
            return 20.0 * Tower(users)(u) @ Tower(items)(i).T

    s = jax.ShapeDtypeStruct
    u, i = s((b,), jnp.int32), s((b,), jnp.int32)
    model = TwoTower()
    params = jax.eval_shape(model.init, jax.random.key(0), u, i)["params"]

    def loss(p, u, i):
        logits = model.apply({"params": p}, jnp.abs(u) % users, jnp.abs(i) % items)
        return _xent(jax, jnp, logits, jnp.arange(b), b)

    return _train_step(jax, loss, params, optax.adagrad(1e-2), [u, i])


def grad_accum_mlp_bf16(jnp, jax, dims):
    """Gradient accumulation with lax.scan: a bf16 MLP's gradient for each
    microbatch (a loop XLA runs with GEMMs inside), summed in f32, then one
    SGD step."""
    micro, b, d, h = dims((2, 4, 8, 16), (8, 256, 1024, 4096))
    bf, f32 = jnp.bfloat16, jnp.float32

    def loss(w1, w2, x, y):
        hidden = jax.nn.gelu(x.astype(bf) @ w1.astype(bf))
        return jnp.mean(((hidden @ w2.astype(bf)).astype(f32) - y) ** 2)

    def step(w1, w2, xs, ys):
        def body(acc, xy):
            g1, g2 = jax.grad(loss, argnums=(0, 1))(w1, w2, *xy)
            return (acc[0] + g1, acc[1] + g2), None

        (g1, g2), _ = jax.lax.scan(body, (jnp.zeros_like(w1), jnp.zeros_like(w2)), (xs, ys))
        return w1 - 0.01 * g1 / micro, w2 - 0.01 * g2 / micro

    s = jax.ShapeDtypeStruct
    return step, [s((d, h), f32), s((h, d), f32), s((micro, b, d), f32), s((micro, b, d), f32)]


def mixer_block(jnp, jax, dims):
    """An MLP-Mixer block (token mixing over a transpose, then channel
    mixing) with a pooled head, trained with LAMB."""
    import flax.linen as nn
    import optax
    b, patches, c, token_hidden, channel_hidden = dims((2, 4, 8, 8, 16), (64, 196, 512, 256, 2048))

    class MlpBlock(nn.Module):
        hidden: int

        @nn.compact
        def __call__(self, x):
            return nn.Dense(x.shape[-1])(nn.gelu(nn.Dense(self.hidden)(x)))

    class Mixer(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = x + MlpBlock(token_hidden)(nn.LayerNorm()(x).swapaxes(1, 2)).swapaxes(1, 2)
            x = x + MlpBlock(channel_hidden)(nn.LayerNorm()(x))
            return nn.Dense(10)(jnp.mean(nn.LayerNorm()(x), axis=1))

    s = jax.ShapeDtypeStruct
    x, y = s((b, patches, c), jnp.float32), s((b,), jnp.int32)
    model = Mixer()
    params = jax.eval_shape(model.init, jax.random.key(0), x)["params"]
    loss = lambda p, x, y: _xent(jax, jnp, model.apply({"params": p}, x), y, 10)
    return _train_step(jax, loss, params, optax.lamb(1e-3), [x, y])


def moe_einsum_bf16(jnp, jax, dims):
    """A mixture-of-experts layer written as einsums: top-1 gating, dense
    dispatch and combine tensors with a capacity, batched expert GEMMs in
    bf16; trained with adafactor."""
    import optax
    t, d, e, capacity, h = dims((8, 8, 2, 4, 16), (2048, 512, 8, 256, 1024))
    bf, f32 = jnp.bfloat16, jnp.float32
    s = jax.ShapeDtypeStruct
    params = {"gate": s((d, e), f32), "w_in": s((e, d, h), f32), "w_out": s((e, h, d), f32)}

    def loss(p, x, y):
        probs = jax.nn.softmax(x @ p["gate"], axis=-1)
        chosen = jax.nn.one_hot(jnp.argmax(probs, axis=-1), e)
        # A token's slot in its expert; -1 elsewhere, and one_hot drops both
        # that and a slot past the capacity.
        slot = jnp.cumsum(chosen, axis=0) * chosen - 1
        dispatch = chosen[:, :, None] * jax.nn.one_hot(slot, capacity)
        tokens = jnp.einsum("tec,td->ecd", dispatch.astype(bf), x.astype(bf))
        hidden = jax.nn.relu(jnp.einsum("ecd,edh->ech", tokens, p["w_in"].astype(bf)))
        out = jnp.einsum("ech,ehd->ecd", hidden, p["w_out"].astype(bf))
        combine = dispatch * jnp.max(probs, axis=-1)[:, None, None]
        y_hat = jnp.einsum("tec,ecd->td", combine.astype(bf), out).astype(f32)
        return jnp.mean((y_hat - y) ** 2)

    return _train_step(jax, loss, params, optax.adafactor(1e-3), [s((t, d), f32), s((t, d), f32)])


PROGRAMS = {
    "vit_block_bf16": vit_block_bf16,
    "two_tower_retrieval": two_tower_retrieval,
    "grad_accum_mlp_bf16": grad_accum_mlp_bf16,
    "mixer_block": mixer_block,
    "moe_einsum_bf16": moe_einsum_bf16,
}
