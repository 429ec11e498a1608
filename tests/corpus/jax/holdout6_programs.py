"""Hold-out set 6 of the trace-driven simulator (bench/FIDELITY-real.md).

Models written the way JAX users write them, with flax.linen layers and
optax optimizers, where the earlier sets were hand-written jax.numpy: what
the linker, the parser and the simulator must take from a real training
script (flax's parameter trees, BatchNorm's mutable statistics, nn.RNN's
scan, attention masks, random numbers drawn inside the step). Declared
before they were first captured; scored once, blind, with the model as it
stands. Each builder takes (jnp, jax, dims) and returns (function, argument
specs): the step takes the flattened parameter and optimizer-state leaves,
then the batch, and returns the loss and the new leaves.
"""


def _train_step(jax, loss_fn, params, opt, batch_specs, has_aux=False):
    """An optax step over flat leaves; loss_fn(params, *batch) -> loss (, aux leaves)."""
    import optax
    opt_state = jax.eval_shape(opt.init, params)
    p_leaves, p_tree = jax.tree_util.tree_flatten(params)
    o_leaves, o_tree = jax.tree_util.tree_flatten(opt_state)
    n_p, n_o = len(p_leaves), len(o_leaves)

    def step(*args):
        p = jax.tree_util.tree_unflatten(p_tree, args[:n_p])
        o = jax.tree_util.tree_unflatten(o_tree, args[n_p:n_p + n_o])
        batch = args[n_p + n_o:]
        if has_aux:
            (loss, aux), g = jax.value_and_grad(loss_fn, has_aux=True)(p, *batch)
        else:
            loss, g = jax.value_and_grad(loss_fn)(p, *batch)
            aux = ()
        updates, o = opt.update(g, o, p)
        p = optax.apply_updates(p, updates)
        return ((loss,) + tuple(jax.tree_util.tree_leaves(p)) + tuple(jax.tree_util.tree_leaves(o))
                + tuple(jax.tree_util.tree_leaves(aux)))

    specs = [jax.ShapeDtypeStruct(x.shape, x.dtype) for x in p_leaves + o_leaves]
    return step, specs + list(batch_specs)


def _xent(jax, jnp, logits, labels, classes):
    import optax
    return jnp.mean(optax.softmax_cross_entropy(logits, jax.nn.one_hot(labels % classes, classes)))


def flax_cnn(jnp, jax, dims):
    """flax's MNIST example: two convolutions with pooling, two dense layers, adam."""
    import flax.linen as nn
    import optax
    b, hw, c1, c2, hidden = dims((2, 8, 4, 8, 16), (128, 28, 32, 64, 256))

    class CNN(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.avg_pool(nn.relu(nn.Conv(c1, (3, 3))(x)), (2, 2), (2, 2))
            x = nn.avg_pool(nn.relu(nn.Conv(c2, (3, 3))(x)), (2, 2), (2, 2))
            x = nn.relu(nn.Dense(hidden)(x.reshape((x.shape[0], -1))))
            return nn.Dense(10)(x)

    s = jax.ShapeDtypeStruct
    x, y = s((b, hw, hw, 1), jnp.float32), s((b,), jnp.int32)
    model = CNN()
    params = jax.eval_shape(model.init, jax.random.key(0), x)["params"]
    loss = lambda p, x, y: _xent(jax, jnp, model.apply({"params": p}, x), y, 10)
    return _train_step(jax, loss, params, optax.adam(1e-3), [x, y])


def flax_lm_block(jnp, jax, dims):
    """A decoder block (causal self-attention, GELU MLP, pre-norm) with an
    embedding and its tied output projection, trained with adamw."""
    import flax.linen as nn
    import optax
    b, t, d, heads, vocab = dims((2, 8, 16, 2, 32), (8, 256, 512, 8, 8192))

    class Block(nn.Module):
        @nn.compact
        def __call__(self, tokens):
            embed = nn.Embed(vocab, d)
            x = embed(tokens)
            h = nn.LayerNorm()(x)
            mask = nn.make_causal_mask(tokens)
            x = x + nn.MultiHeadDotProductAttention(num_heads=heads, qkv_features=d)(h, h, mask=mask)
            h = nn.LayerNorm()(x)
            x = x + nn.Dense(d)(nn.gelu(nn.Dense(4 * d)(h)))
            return embed.attend(nn.LayerNorm()(x))

    s = jax.ShapeDtypeStruct
    tokens = s((b, t), jnp.int32)
    model = Block()
    params = jax.eval_shape(model.init, jax.random.key(0), tokens)["params"]

    def loss(p, tokens, targets):
        return _xent(jax, jnp, model.apply({"params": p}, tokens % vocab), targets, vocab)

    return _train_step(jax, loss, params, optax.adamw(1e-3, weight_decay=0.01), [tokens, s((b, t), jnp.int32)])


def flax_resnet_bn(jnp, jax, dims):
    """Two residual blocks with BatchNorm in training mode (its statistics a
    mutable collection the step returns), SGD with momentum."""
    import flax.linen as nn
    import optax
    b, hw, c = dims((2, 8, 4), (64, 32, 64))

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x):
            y = nn.relu(nn.BatchNorm(use_running_average=False)(nn.Conv(c, (3, 3), use_bias=False)(x)))
            y = nn.BatchNorm(use_running_average=False)(nn.Conv(c, (3, 3), use_bias=False)(y))
            return nn.relu(x + y)

    class Net(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.relu(nn.BatchNorm(use_running_average=False)(nn.Conv(c, (3, 3), use_bias=False)(x)))
            x = Block()(Block()(x))
            return nn.Dense(10)(jnp.mean(x, axis=(1, 2)))

    s = jax.ShapeDtypeStruct
    x, y = s((b, hw, hw, 3), jnp.float32), s((b,), jnp.int32)
    model = Net()
    variables = jax.eval_shape(model.init, jax.random.key(0), x)
    stats = variables["batch_stats"]
    s_leaves, s_tree = jax.tree_util.tree_flatten(stats)
    n_s = len(s_leaves)

    def loss(p, *batch):
        st = jax.tree_util.tree_unflatten(s_tree, batch[:n_s])
        logits, updated = model.apply({"params": p, "batch_stats": st}, batch[n_s], mutable=["batch_stats"])
        return _xent(jax, jnp, logits, batch[n_s + 1], 10), updated["batch_stats"]

    stat_specs = [s(v.shape, v.dtype) for v in s_leaves]
    return _train_step(jax, loss, variables["params"], optax.sgd(0.1, momentum=0.9), stat_specs + [x, y],
                       has_aux=True)


def flax_lstm(jnp, jax, dims):
    """nn.RNN over an LSTM cell (a scan XLA runs as a loop), a dense head on
    every step, adam."""
    import flax.linen as nn
    import optax
    t, b, d, h = dims((4, 2, 8, 8), (64, 32, 128, 256))

    class Seq(nn.Module):
        @nn.compact
        def __call__(self, x):
            return nn.Dense(d)(nn.RNN(nn.LSTMCell(h))(x))

    s = jax.ShapeDtypeStruct
    x = s((b, t, d), jnp.float32)
    model = Seq()
    params = jax.eval_shape(model.init, jax.random.key(0), x)["params"]
    loss = lambda p, x, y: jnp.mean((model.apply({"params": p}, x) - y) ** 2)
    return _train_step(jax, loss, params, optax.adam(1e-3), [x, x])


def flax_vae(jnp, jax, dims):
    """A dense VAE: the reparameterization draws its noise inside the step
    from a key the step takes, KL plus reconstruction loss, adam."""
    import flax.linen as nn
    import optax
    b, d, hidden, latent = dims((4, 16, 16, 4), (256, 784, 512, 32))

    class VAE(nn.Module):
        @nn.compact
        def __call__(self, x, key):
            h = nn.relu(nn.Dense(hidden)(x))
            mean, logvar = nn.Dense(latent)(h), nn.Dense(latent)(h)
            z = mean + jnp.exp(0.5 * logvar) * jax.random.normal(key, mean.shape)
            out = nn.Dense(d)(nn.relu(nn.Dense(hidden)(z)))
            return out, mean, logvar

    s = jax.ShapeDtypeStruct
    x, key = s((b, d), jnp.float32), s((2,), jnp.uint32)
    model = VAE()
    params = jax.eval_shape(model.init, jax.random.key(0), x, jax.random.key(1))["params"]

    def loss(p, x, key):
        # The raw key data a caller passes, as a typed key.
        out, mean, logvar = model.apply({"params": p}, x, jax.random.wrap_key_data(key))
        recon = jnp.mean(optax.sigmoid_binary_cross_entropy(out, jax.nn.sigmoid(x)))
        kl = -0.5 * jnp.mean(1 + logvar - mean ** 2 - jnp.exp(logvar))
        return recon + kl

    return _train_step(jax, loss, params, optax.adam(1e-3), [x, key])


PROGRAMS = {
    "flax_cnn": flax_cnn,
    "flax_lm_block": flax_lm_block,
    "flax_resnet_bn": flax_resnet_bn,
    "flax_lstm": flax_lstm,
    "flax_vae": flax_vae,
}
