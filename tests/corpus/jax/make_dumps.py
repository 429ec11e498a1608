#!/usr/bin/env python3
"""Dump the HLO that XLA compiles for a set of real JAX programs.

Run on a GPU machine with JAX (CUDA plugin):
    python3 tests/corpus/jax/make_dumps.py OUT_DIR [--size small|large]

For each single-device program it writes OUT_DIR/NAME/ (XLA's dump: before and
after optimizations, thunk sequences) plus OUT_DIR/NAME/expected.json: the
program's outputs on streamlens' `--init ramp` inputs, in the format of
`streamlens run --results`, and JAX's own median step time. Multi-device
programs are compiled only (two processes on one GPU, see `compile_multi`).
"""
import json
import os
import subprocess
import sys
import time

SIZE = "small"
ONLY = None  # --only a,b: a subset of the programs
for i, a in enumerate(sys.argv):
    if a == "--size":
        SIZE = sys.argv[i + 1]
    if a == "--only":
        ONLY = set(sys.argv[i + 1].split(","))


def dims(small, large):
    return small if SIZE == "small" else large


# ---------------------------------------------------------------- programs
# Each builder returns (function, list of jax.ShapeDtypeStruct args).

def prog_mlp_train_step(jnp, jax):
    b, d, h = dims((8, 16, 32), (256, 1024, 4096))

    def loss(params, x, y):
        w1, b1, w2, b2 = params
        hid = jax.nn.gelu(x @ w1 + b1)
        out = hid @ w2 + b2
        return jnp.mean((out - y) ** 2)

    def step(w1, b1, w2, b2, x, y):
        params = (w1, b1, w2, b2)
        l, g = jax.value_and_grad(loss)(params, x, y)
        new = tuple(p - 0.01 * gp for p, gp in zip(params, g))
        return (l,) + new

    f32 = jnp.float32
    s = jax.ShapeDtypeStruct
    return step, [s((d, h), f32), s((h,), f32), s((h, d), f32), s((d,), f32), s((b, d), f32), s((b, d), f32)]


def prog_layernorm_gelu(jnp, jax):
    b, d = dims((4, 32), (4096, 4096))

    def f(x, scale, bias):
        mean = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
        y = (x - mean) * jax.lax.rsqrt(var + 1e-5) * scale + bias
        return jax.nn.gelu(y, approximate=False), jax.nn.gelu(y, approximate=True)

    f32 = jnp.float32
    s = jax.ShapeDtypeStruct
    return f, [s((b, d), f32), s((d,), f32), s((d,), f32)]


def prog_adam_update(jnp, jax):
    import optax
    n1, n2 = dims((16, 8), (4096, 4096))
    opt = optax.adamw(1e-3, weight_decay=0.01)

    def f(p1, p2, g1, g2, m1, m2, v1, v2, count):
        params = {"a": p1, "b": p2}
        grads = {"a": g1, "b": g2}
        state = (optax.ScaleByAdamState(count=count, mu={"a": m1, "b": m2}, nu={"a": v1, "b": v2}),
                 optax.EmptyState(), optax.EmptyState())
        updates, new_state = opt.update(grads, state, params)
        new_params = optax.apply_updates(params, updates)
        adam = new_state[0]
        return (new_params["a"], new_params["b"], adam.mu["a"], adam.mu["b"], adam.nu["a"],
                adam.nu["b"], adam.count)

    f32 = jnp.float32
    s = jax.ShapeDtypeStruct
    a, b = s((n1, n2), f32), s((n2,), f32)
    return f, [a, b, a, b, a, b, a, b, s((), jnp.int32)]


def prog_scan_rnn(jnp, jax):
    t, b, d = dims((6, 2, 8), (128, 64, 1024))

    def f(w, u, h0, xs):
        def cell(h, x):
            h = jnp.tanh(h @ w + x @ u)
            return h, h.sum(axis=-1)

        h, ys = jax.lax.scan(cell, h0, xs)
        return h, ys

    f32 = jnp.float32
    s = jax.ShapeDtypeStruct
    return f, [s((d, d), f32), s((d, d), f32), s((b, d), f32), s((t, b, d), f32)]


def prog_random(jnp, jax):
    n = dims(64, 1 << 20)

    def f(key_data, x):
        key = jax.random.wrap_key_data(key_data)
        k1, k2, k3 = jax.random.split(key, 3)
        keep = jax.random.bernoulli(k1, 0.9, x.shape)
        dropped = jnp.where(keep, x / 0.9, 0.0)
        noise = jax.random.normal(k2, x.shape)
        u = jax.random.uniform(k3, (n,))
        bits = jax.random.bits(k3, (8,), jnp.uint32)
        return dropped + noise, u, bits

    s = jax.ShapeDtypeStruct
    return f, [s((2,), jnp.uint32), s((n,), jnp.float32)]


def prog_misc_ops(jnp, jax):
    n, v, d = dims((16, 10, 8), (4096, 32000, 1024))

    def f(table, ids, x, upd):
        emb = table[ids]                              # gather
        grad_table = jnp.zeros_like(table).at[ids].add(upd)   # scatter-add
        sorted_x = jnp.sort(x)
        top_v, top_i = jax.lax.top_k(x, 3)
        arg = jnp.argmax(x)
        csum = jnp.cumsum(x)                          # reduce-window / associative scan
        padded = jnp.pad(x, (2, 3))
        clipped = jnp.clip(x, -2.0, 2.0)
        logsm = jax.nn.log_softmax(emb, axis=-1)
        mx = jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (3,), (1,), "SAME")
        bits = jax.lax.bitcast_convert_type(x, jnp.int32) >> 3
        return (emb, grad_table, sorted_x, top_v, top_i, arg, csum, padded, clipped, logsm, mx,
                bits, jnp.log1p(jnp.abs(x)), jax.lax.erf(x), jnp.expm1(x / 4))

    f32 = jnp.float32
    s = jax.ShapeDtypeStruct
    return f, [s((v, d), f32), s((n,), jnp.int32), s((n,), f32), s((n, d), f32)]


def prog_transformer_train_step(jnp, jax, dtype_name="float32"):
    b, t, d, heads, vocab = dims((2, 8, 16, 2, 32), (8, 1024, 1024, 16, 32000))
    dt = getattr(jnp, dtype_name)

    def layer_norm(x, g):
        m = jnp.mean(x, -1, keepdims=True)
        v = jnp.mean((x - m) ** 2, -1, keepdims=True)
        return (x - m) * jax.lax.rsqrt(v + 1e-5) * g

    def forward(params, tokens):
        emb, ln1, wqkv, wo, ln2, w1, w2, lnf = params
        x = emb[tokens].astype(dt)
        h = layer_norm(x, ln1)
        qkv = h @ wqkv
        q, k, v = jnp.split(qkv, 3, axis=-1)
        hd = d // heads
        q = q.reshape(b, t, heads, hd).transpose(0, 2, 1, 3)
        k = k.reshape(b, t, heads, hd).transpose(0, 2, 1, 3)
        v = v.reshape(b, t, heads, hd).transpose(0, 2, 1, 3)
        att = (q @ k.transpose(0, 1, 3, 2)) / jnp.sqrt(jnp.asarray(hd, dt))
        mask = jnp.tril(jnp.ones((t, t), bool))
        att = jnp.where(mask, att, jnp.asarray(-1e4, dt))
        att = jax.nn.softmax(att.astype(jnp.float32), axis=-1).astype(dt)
        o = (att @ v).transpose(0, 2, 1, 3).reshape(b, t, d)
        x = x + o @ wo
        h = layer_norm(x, ln2)
        x = x + jax.nn.gelu(h @ w1) @ w2
        x = layer_norm(x, lnf)
        return (x @ emb.T.astype(dt)).astype(jnp.float32)

    def loss(params, tokens, targets):
        logits = forward(params, tokens)
        logp = jax.nn.log_softmax(logits, -1)
        return -jnp.mean(jnp.take_along_axis(logp, targets[..., None], -1))

    def step(emb, ln1, wqkv, wo, ln2, w1, w2, lnf, tokens, targets):
        params = (emb, ln1, wqkv, wo, ln2, w1, w2, lnf)
        l, g = jax.value_and_grad(loss)(params, tokens, targets)
        return (l,) + tuple(p - (1e-3 * gp).astype(p.dtype) for p, gp in zip(params, g))

    s = jax.ShapeDtypeStruct
    i32 = jnp.int32
    args = [s((vocab, d), dt), s((d,), dt), s((d, 3 * d), dt), s((d, d), dt), s((d,), dt),
            s((d, 4 * d), dt), s((4 * d, d), dt), s((d,), dt), s((b, t), i32), s((b, t), i32)]
    return step, args


def prog_transformer_train_step_bf16(jnp, jax):
    return prog_transformer_train_step(jnp, jax, "bfloat16")


def prog_gemm_bf16(jnp, jax):
    m, k, n = dims((16, 32, 8), (1024, 24576, 24576))
    s = jax.ShapeDtypeStruct
    return (lambda x, w: x @ w), [s((m, k), jnp.bfloat16), s((k, n), jnp.bfloat16)]


# Hold-out set 2 (bench/FIDELITY-real.md): programs added after the
# simulator's host and command-buffer models were fitted, scored once.

def prog_conv_train_step(jnp, jax):
    """A small CNN's SGD step: cuDNN convolutions forward and backward."""
    b, hw, c1, c2, classes = dims((2, 8, 4, 8, 10), (128, 32, 64, 128, 10))

    def conv(x, w, stride):
        return jax.lax.conv_general_dilated(x, w, (stride, stride), "SAME",
                                            dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def loss(params, x, labels):
        w1, w2, wd = params
        h = jax.nn.relu(conv(x, w1, 1))
        h = jax.nn.relu(conv(h, w2, 2))
        logits = jnp.mean(h, axis=(1, 2)) @ wd
        logp = jax.nn.log_softmax(logits, -1)
        return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], -1))

    def step(w1, w2, wd, x, labels):
        params = (w1, w2, wd)
        l, g = jax.value_and_grad(loss)(params, x, labels)
        return (l,) + tuple(p - 0.01 * gp for p, gp in zip(params, g))

    f32 = jnp.float32
    s = jax.ShapeDtypeStruct
    return step, [s((3, 3, 3, c1), f32), s((3, 3, c1, c2), f32), s((c2, classes), f32),
                  s((b, hw, hw, 3), f32), s((b,), jnp.int32)]


def prog_attention_bf16(jnp, jax):
    """Causal multi-head attention, forward and backward, in bf16."""
    b, t, d, heads = dims((2, 8, 16, 2), (4, 2048, 1024, 8))
    bf16 = jnp.bfloat16

    def loss(wq, wk, wv, wo, x):
        hd = d // heads
        split = lambda y: y.reshape(b, t, heads, hd).transpose(0, 2, 1, 3)
        q, k, v = split(x @ wq), split(x @ wk), split(x @ wv)
        att = (q @ k.transpose(0, 1, 3, 2)).astype(jnp.float32) / (hd ** 0.5)
        att = jnp.where(jnp.tril(jnp.ones((t, t), bool)), att, -1e9)
        p = jax.nn.softmax(att, axis=-1).astype(bf16)
        o = (p @ v).transpose(0, 2, 1, 3).reshape(b, t, d) @ wo
        return jnp.mean(o.astype(jnp.float32) ** 2)

    def step(wq, wk, wv, wo, x):
        l, g = jax.value_and_grad(loss, argnums=(0, 1, 2, 3))(wq, wk, wv, wo, x)
        return (l,) + tuple(w - (1e-3 * gw).astype(bf16) for w, gw in zip((wq, wk, wv, wo), g))

    s = jax.ShapeDtypeStruct
    w = s((d, d), bf16)
    return step, [w, w, w, w, s((b, t, d), bf16)]


def prog_embed_xent_step(jnp, jax):
    """Embedding gather, a projection to the vocabulary, cross-entropy, and
    the embedding's gradient as a scatter-add."""
    n, vocab, d = dims((16, 32, 8), (4096, 50304, 512))

    def loss(table, proj, ids, targets):
        h = jnp.tanh(table[ids] @ proj)
        logits = h @ table.T
        logp = jax.nn.log_softmax(logits, -1)
        return -jnp.mean(jnp.take_along_axis(logp, targets[:, None], -1))

    def step(table, proj, ids, targets):
        l, (gt, gp) = jax.value_and_grad(loss, argnums=(0, 1))(table, proj, ids, targets)
        return l, table - 0.1 * gt, proj - 0.1 * gp

    f32 = jnp.float32
    s = jax.ShapeDtypeStruct
    return step, [s((vocab, d), f32), s((d, d), f32), s((n,), jnp.int32), s((n,), jnp.int32)]


def prog_gru_scan_train(jnp, jax):
    """A GRU over lax.scan and its gradient: a forward and a backward while loop."""
    t, b, d = dims((5, 2, 8), (64, 128, 512))

    def loss(wz, wr, wh, xs):
        def cell(h, x):
            hx = jnp.concatenate([h, x], -1)
            z = jax.nn.sigmoid(hx @ wz)
            r = jax.nn.sigmoid(hx @ wr)
            c = jnp.tanh(jnp.concatenate([r * h, x], -1) @ wh)
            h = (1 - z) * h + z * c
            return h, h
        _, hs = jax.lax.scan(cell, jnp.zeros((b, d), xs.dtype), xs)
        return jnp.mean(hs ** 2)

    def step(wz, wr, wh, xs):
        l, g = jax.value_and_grad(loss, argnums=(0, 1, 2))(wz, wr, wh, xs)
        return (l,) + tuple(w - 0.01 * gw for w, gw in zip((wz, wr, wh), g))

    f32 = jnp.float32
    s = jax.ShapeDtypeStruct
    w = s((2 * d, d), f32)
    return step, [w, w, w, s((t, b, d), f32)]


def prog_resmlp_adamw(jnp, jax):
    """Four residual MLP blocks with layer norm, trained with optax's adamw."""
    import optax
    b, d, layers = dims((4, 16, 2), (512, 2048, 4))
    opt = optax.adamw(1e-3, weight_decay=0.01)

    def forward(ws, x):
        for w1, w2 in ws:
            m = jnp.mean(x, -1, keepdims=True)
            v = jnp.mean((x - m) ** 2, -1, keepdims=True)
            h = (x - m) * jax.lax.rsqrt(v + 1e-5)
            x = x + jax.nn.gelu(h @ w1) @ w2
        return x

    def step(*args):
        flat, x, y, count = args[:4 * layers], args[4 * layers], args[4 * layers + 1], args[-1]
        ws = [(flat[2 * i], flat[2 * i + 1]) for i in range(layers)]
        mu = [(flat[2 * layers + 2 * i], flat[2 * layers + 2 * i + 1]) for i in range(layers)]
        nu = [(flat[2 * i], flat[2 * i + 1]) for i in range(layers)]  # nu starts as a copy of the weights
        l, g = jax.value_and_grad(lambda p: jnp.mean((forward(p, x) - y) ** 2))(ws)
        state = (optax.ScaleByAdamState(count=count, mu=mu, nu=jax.tree_util.tree_map(jnp.abs, nu)),
                 optax.EmptyState(), optax.EmptyState())
        updates, new_state = opt.update(g, state, ws)
        return l, optax.apply_updates(ws, updates), new_state[0].mu, new_state[0].nu, new_state[0].count

    f32 = jnp.float32
    s = jax.ShapeDtypeStruct
    blocks = [s((d, 4 * d), f32), s((4 * d, d), f32)] * layers
    return step, blocks + blocks + [s((b, d), f32), s((b, d), f32), s((), jnp.int32)]


SINGLE = {
    "mlp_train_step": prog_mlp_train_step,
    "layernorm_gelu": prog_layernorm_gelu,
    "adam_update": prog_adam_update,
    "scan_rnn": prog_scan_rnn,
    "random": prog_random,
    "misc_ops": prog_misc_ops,
    "transformer_train_step": prog_transformer_train_step,
    "transformer_train_step_bf16": prog_transformer_train_step_bf16,
    "gemm_bf16": prog_gemm_bf16,
    "conv_train_step": prog_conv_train_step,
    "attention_bf16": prog_attention_bf16,
    "embed_xent_step": prog_embed_xent_step,
    "gru_scan_train": prog_gru_scan_train,
    "resmlp_adamw": prog_resmlp_adamw,
}


def add_programs():
    """The calibration programs and hold-out sets 3 to 7 and 11 to 34, kept in their own files."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import calibration_programs
    import holdout3_programs
    import holdout4_programs
    import holdout5_programs
    import holdout6_programs
    import holdout7_programs
    import holdout11_programs
    import holdout12_programs
    import holdout13_programs
    import holdout14_programs
    import holdout15_programs
    import holdout16_programs
    import holdout17_programs
    import holdout18_programs
    import holdout19_programs
    import holdout20_programs
    import holdout21_programs
    import holdout22_programs
    import holdout23_programs
    import holdout24_programs
    import holdout25_programs
    import holdout26_programs
    import holdout27_programs
    import holdout28_programs
    import holdout29_programs
    import holdout30_programs
    import holdout31_programs
    import holdout32_programs
    import holdout33_programs
    import holdout34_programs
    for module in (calibration_programs, holdout3_programs, holdout4_programs, holdout5_programs,
                   holdout6_programs, holdout7_programs, holdout11_programs, holdout12_programs,
                   holdout13_programs, holdout14_programs, holdout15_programs,
                   holdout16_programs, holdout17_programs, holdout18_programs,
                   holdout19_programs, holdout20_programs, holdout21_programs,
                   holdout22_programs, holdout23_programs, holdout24_programs, holdout25_programs,
                   holdout26_programs, holdout27_programs, holdout28_programs, holdout29_programs,
                   holdout30_programs, holdout31_programs, holdout32_programs,
                   holdout33_programs, holdout34_programs):
        for name, build in module.PROGRAMS.items():
            SINGLE[name] = lambda jnp, jax, build=build: build(jnp, jax, dims)


add_programs()

# ---------------------------------------------------------------- ramp inputs

TYPE_NAMES = {"float32": "f32", "bfloat16": "bf16", "float16": "f16", "float64": "f64",
              "int32": "s32", "uint32": "u32", "int8": "s8", "uint8": "u8", "int64": "s64",
              "uint64": "u64", "bool": "pred", "int16": "s16", "uint16": "u16"}


def ramp(np, shape, dtype, parameter, device=0):
    """streamlens' `--init ramp`: element i of parameter p on device g is
    ((g*7 + p*3 + i) mod 11) - 5, converted to the element type."""
    n = int(np.prod(shape)) if shape else 1
    i = np.arange(n, dtype=np.int64)
    m = ((device % 11) * 7 + (parameter % 11) * 3 + i % 11) % 11
    v = m - 5
    if np.dtype(dtype) == np.bool_:
        return (v % 2 != 0).reshape(shape)
    return v.astype(np.dtype(dtype)).reshape(shape)


def to_results(np, outs):
    leaves = []
    for o in outs:
        a = np.asarray(o)
        name = TYPE_NAMES.get(str(a.dtype), str(a.dtype))
        if a.dtype == np.bool_:
            vals = [int(x) for x in a.reshape(-1)]
        elif np.issubdtype(a.dtype, np.integer):
            vals = [int(x) for x in a.reshape(-1)]
        else:
            vals = []
            for x in a.astype(np.float64).reshape(-1):
                if np.isnan(x):
                    vals.append("nan")
                elif np.isinf(x):
                    vals.append("inf" if x > 0 else "-inf")
                else:
                    vals.append(float(x))
        leaves.append({"shape": f"{name}[{','.join(str(d) for d in a.shape)}]", "values": vals})
    return {"devices": [{"device": 0, "replica": 0, "partition": 0, "outputs": leaves}]}


def run_single(name, out_dir):
    import numpy as np
    import jax
    import jax.numpy as jnp
    if SIZE == "small":
        # Full f32 dots, so the cpu backend's results can be compared closely.
        jax.config.update("jax_default_matmul_precision", "highest")
    f, args = SINGLE[name](jnp, jax)
    jitted = jax.jit(f, keep_unused=True)
    inputs = [jax.device_put(ramp(np, a.shape, a.dtype, p)) for p, a in enumerate(args)]
    outs = jitted(*inputs)
    outs = jax.tree_util.tree_leaves(outs)
    jax.block_until_ready(outs)
    times = []
    for _ in range(30):
        t0 = time.perf_counter()
        r = jitted(*inputs)
        jax.block_until_ready(r)
        times.append(time.perf_counter() - t0)
    times.sort()
    result = to_results(np, outs) if SIZE == "small" else {}
    result["jax_step_ms_median"] = times[len(times) // 2] * 1e3
    result["jax_version"] = jax.__version__
    result["device"] = str(jax.devices()[0].device_kind)
    with open(os.path.join(out_dir, "expected.json"), "w") as fh:
        json.dump(result, fh)


# ---------------------------------------------------------------- two devices

def multi_programs(jax, jnp, P):
    """Builders of (function, args with shardings) over a 2-device mesh."""
    s = jax.ShapeDtypeStruct
    import numpy as np
    from jax.sharding import Mesh
    # A plain Mesh has Auto axes: XLA's SPMD partitioner picks the collectives,
    # as it does for most users' programs (jax.make_mesh would be Explicit).
    mesh = Mesh(np.array(jax.devices()[:2]), ("x",))
    from jax.sharding import NamedSharding
    sh = lambda *spec: NamedSharding(mesh, P(*spec))
    d, h, b = dims((64, 128, 16), (4096, 16384, 4096))
    layers = 3

    def fsdp_step(ws, x, y):
        def loss(ws):
            a = x
            for w in ws:
                a = jax.nn.relu(a @ w)
            return jnp.mean((a - y) ** 2)
        l, g = jax.value_and_grad(loss)(ws)
        return l, [w - 0.01 * gw for w, gw in zip(ws, g)]

    fsdp_args = ([s((d, d), jnp.bfloat16, sharding=sh("x", None)) for _ in range(layers)],
                 s((b, d), jnp.bfloat16, sharding=sh("x", None)),
                 s((b, d), jnp.bfloat16, sharding=sh("x", None)))

    def tp_matmul(x, w):
        # x sharded along rows, w along columns: XLA all-gathers x (or loops
        # with collective-permutes when windowed einsum applies).
        return jax.lax.with_sharding_constraint(x @ w, sh(None, "x"))

    tp_args = (s((b, d), jnp.bfloat16, sharding=sh("x", None)),
               s((d, h), jnp.bfloat16, sharding=sh(None, "x")))

    def rs_matmul(x, w):
        # contraction dim sharded: partial sums reduce-scattered.
        return jax.lax.with_sharding_constraint(x @ w, sh("x", None))

    rs_args = (s((b, h), jnp.bfloat16, sharding=sh(None, "x")),
               s((h, d), jnp.bfloat16, sharding=sh("x", None)))

    def dp_step(w, x, y):
        g = jax.grad(lambda w: jnp.mean((jnp.tanh(x @ w) - y) ** 2))(w)
        return w - 0.1 * g

    dp_args = (s((d, d), jnp.float32, sharding=sh()), s((b, d), jnp.float32, sharding=sh("x")),
               s((b, d), jnp.float32, sharding=sh("x")))
    return {"fsdp_step": (fsdp_step, fsdp_args), "tp_allgather_matmul": (tp_matmul, tp_args),
            "tp_matmul_reduce_scatter": (rs_matmul, rs_args), "dp_allreduce_step": (dp_step, dp_args)}


def compile_multi_child(name, process_id, port):
    import jax
    jax.distributed.initialize(coordinator_address=f"localhost:{port}", num_processes=2,
                               process_id=process_id, local_device_ids=[0])
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as P
    f, args = multi_programs(jax, jnp, P)[name]
    jax.jit(f).lower(*args).compile()
    os._exit(0)


MULTI = [  # (program, variant name, extra XLA flags)
    ("fsdp_step", "fsdp_step", ""),
    ("dp_allreduce_step", "dp_allreduce_step", ""),
    ("tp_matmul_reduce_scatter", "tp_matmul_reduce_scatter", ""),
    ("tp_allgather_matmul", "tp_allgather_matmul", ""),
    ("tp_allgather_matmul", "windowed_einsum", "--xla_gpu_threshold_for_windowed_einsum_mib=0"),
    ("tp_allgather_matmul", "windowed_einsum_multistream",
     "--xla_gpu_threshold_for_windowed_einsum_mib=0 --xla_gpu_multi_streamed_windowed_einsum=true"),
    ("fsdp_step", "fsdp_step_no_lhs", "--xla_gpu_enable_latency_hiding_scheduler=false"),
]


def dump_flags(d, extra=""):
    return f"--xla_dump_to={d} --xla_dump_hlo_as_text {extra}".strip()


def main():
    if len(sys.argv) >= 5 and sys.argv[1] == "--child-multi":
        compile_multi_child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    if len(sys.argv) >= 3 and sys.argv[1] == "--child-single":
        run_single(sys.argv[2], sys.argv[3])
        return
    out = os.path.abspath(sys.argv[1])
    os.makedirs(out, exist_ok=True)
    me = os.path.abspath(__file__)
    size_args = ["--size", SIZE]
    os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"  # two processes share one GPU
    for name in SINGLE:
        if ONLY and name not in ONLY:
            continue
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        env = dict(os.environ, XLA_FLAGS=dump_flags(d))
        t0 = time.time()
        r = subprocess.run([sys.executable, me, "--child-single", name, d] + size_args, env=env)
        print(f"{name}: rc={r.returncode} {time.time() - t0:.1f}s", flush=True)
    for port, (prog, variant, extra) in enumerate(MULTI, start=23456):
        if ONLY and variant not in ONLY:
            continue
        d = os.path.join(out, variant)
        os.makedirs(d, exist_ok=True)
        procs = []
        for pid in (0, 1):
            dd = d if pid == 0 else d + ".rank1"
            env = dict(os.environ, XLA_FLAGS=dump_flags(dd, extra))
            procs.append(subprocess.Popen([sys.executable, me, "--child-multi", prog, str(pid), str(port)]
                                          + size_args, env=env))
        rcs = []
        for p in procs:
            try:
                rcs.append(p.wait(timeout=240))
            except subprocess.TimeoutExpired:
                p.kill()
                rcs.append("timeout")
        print(f"{variant}: rc={rcs}", flush=True)


if __name__ == "__main__":
    main()
