"""Hold-out set 33 of the trace-driven simulator (bench/FIDELITY-real.md).

Five programs no set has compiled, measured as sets 18 to 32 were, to
score out of sample where a what-if keeps a loop body's graph's first
node's measured gap. Set 32's scans did not compile to the case (a
notriton body whose graph starts with the input slice's copy, as the
default body's does, and whose launch traces a cuBLAS call again): these
are kept closer to hold-out set 31's opr, which did: bf16 recurrences
whose trip output is the state's product with a readout matrix and
nothing after it. Declared before they were first captured; scored once,
blind. Each builder takes (jnp, jax, dims) and returns (function,
argument specs). The inputs are streamlens' ramp values (-5 to 5).
"""


def _readout_rnn(jnp, jax, dims, small, large, cell, extra=0):
    """A recurrence over lax.scan in bf16 that emits h @ v every trip;
    `cell(x_proj, h_proj, h, *extra)` gives the new state."""
    trips, b, d, o = dims(small, large)

    def f(w, u, v, xs, h0, *rest):
        def body(h, x):
            h = cell(x @ (0.01 * w), h @ (0.01 * u), h, *rest)
            return h, h @ (0.01 * v)

        return jax.lax.scan(body, h0, xs)

    s = jax.ShapeDtypeStruct
    bf = jnp.bfloat16
    return f, [s((d, d), bf), s((d, d), bf), s((d, o), bf), s((trips, b, d), bf), s((b, d), bf)] + \
        [s((d,), bf)] * extra


def scan_relu_rnn_wide_readout_bf16(jnp, jax, dims):
    """A ReLU RNN with a readout as wide as its state, bf16."""
    return _readout_rnn(jnp, jax, dims, (4, 8, 16, 16), (24, 256, 256, 256),
                        lambda xp, hp, h: 0.5 * jax.nn.relu(xp + hp))


def scan_relu_rnn_narrow_readout_bf16(jnp, jax, dims):
    """A ReLU RNN with a narrow state and readout and many trips, bf16."""
    return _readout_rnn(jnp, jax, dims, (4, 8, 16, 8), (40, 64, 128, 64),
                        lambda xp, hp, h: 0.5 * jax.nn.relu(xp + hp))


def scan_quarter_relu_rnn_readout_bf16(jnp, jax, dims):
    """A ReLU RNN scaled by a quarter each trip with a readout, bf16."""
    return _readout_rnn(jnp, jax, dims, (4, 8, 16, 8), (28, 128, 320, 160),
                        lambda xp, hp, h: jax.nn.relu(xp + hp) * 0.25)


def scan_clipped_rnn_readout_bf16(jnp, jax, dims):
    """A linear RNN whose state is clipped to [-1, 1] each trip, with a
    readout, bf16."""
    return _readout_rnn(jnp, jax, dims, (4, 8, 16, 8), (32, 96, 256, 128),
                        lambda xp, hp, h: jnp.clip(xp + hp, -1.0, 1.0))


def scan_biased_relu_rnn_readout_bf16(jnp, jax, dims):
    """A ReLU RNN with a bias, with a readout, bf16."""
    return _readout_rnn(jnp, jax, dims, (4, 8, 16, 8), (30, 128, 192, 96),
                        lambda xp, hp, h, bias: 0.5 * jax.nn.relu(xp + hp + 0.01 * bias), extra=1)


PROGRAMS = {
    "scan_relu_rnn_wide_readout_bf16": scan_relu_rnn_wide_readout_bf16,
    "scan_relu_rnn_narrow_readout_bf16": scan_relu_rnn_narrow_readout_bf16,
    "scan_quarter_relu_rnn_readout_bf16": scan_quarter_relu_rnn_readout_bf16,
    "scan_clipped_rnn_readout_bf16": scan_clipped_rnn_readout_bf16,
    "scan_biased_relu_rnn_readout_bf16": scan_biased_relu_rnn_readout_bf16,
}
