"""JAX programs that calibrate the device file's XLA host and graph costs.

They are measured, never scored: bench/fidelity/fit_launch_modes.py reads
their captures under command buffers on and off. No fidelity table uses
them, so fitting on them leaves every hold-out set out of sample.
Each builder takes (jnp, jax, dims) and returns (function, argument specs).
"""


def calib_kernel_chain(jnp, jax, dims):
    """24 small dependent matmuls: many short kernels, one graph a step."""
    b, d, n = dims((4, 8, 3), (16, 64, 24))

    def f(x, ws):
        for i in range(n):
            x = jnp.tanh(x @ ws[i]) + 0.5
        return x

    s = jax.ShapeDtypeStruct
    return f, [s((b, d), jnp.float32), s((n, d, d), jnp.float32)]


def calib_fori_carry(jnp, jax, dims):
    """A known-trip-count loop of three kernels a trip, too few for a command buffer."""
    b, d, trips = dims((4, 8, 3), (16, 64, 32))

    def f(h, w):
        return jax.lax.fori_loop(0, trips, lambda i, h: jnp.tanh(h @ w) + 0.5, h)

    s = jax.ShapeDtypeStruct
    return f, [s((b, d), jnp.float32), s((d, d), jnp.float32)]


def calib_fori_slice(jnp, jax, dims):
    """The same loop reading xs[i] each trip (XLA fuses the read: no dynamic-slice copy)."""
    b, d, trips = dims((4, 8, 3), (16, 64, 32))

    def f(h, w, xs):
        return jax.lax.fori_loop(0, trips, lambda i, h: jnp.tanh(h @ w + xs[i]), h)

    s = jax.ShapeDtypeStruct
    return f, [s((b, d), jnp.float32), s((d, d), jnp.float32), s((trips, b, d), jnp.float32)]


def calib_loop_graph(jnp, jax, dims):
    """A loop whose body forms a command buffer with no slice to move: launched as recorded."""
    b, d, trips = dims((4, 8, 3), (16, 64, 32))

    def body(i, h):
        w1, w2, w3, h = h
        a = jnp.tanh(h @ w1)
        g = jax.nn.sigmoid(a @ w2) * jnp.mean(a)
        h = jnp.tanh(g @ w3) - jnp.max(g)
        return w1, w2, w3, h

    def f(w1, w2, w3, h):
        return jax.lax.fori_loop(0, trips, body, (w1, w2, w3, h))[-1]

    s = jax.ShapeDtypeStruct
    w = s((d, d), jnp.float32)
    return f, [w, w, w, s((b, d), jnp.float32)]


def calib_scan_copy(jnp, jax, dims):
    """A scan reading xs[i] into a GEMM and writing ys[i]: dynamic-slice copies in its body's graph."""
    t, b, d = dims((3, 4, 8), (32, 16, 64))

    def f(w, u, h, xs):
        def cell(h, x):
            h = jnp.tanh(h @ w + x @ u)
            return h, h
        return jax.lax.scan(cell, h, xs)

    s = jax.ShapeDtypeStruct
    m = s((d, d), jnp.float32)
    return f, [m, m, s((b, d), jnp.float32), s((t, b, d), jnp.float32)]


def calib_scan_wide(jnp, jax, dims):
    """The same with two stacked cells: more commands re-recorded each trip."""
    t, b, d = dims((3, 4, 8), (32, 16, 64))

    def f(w1, u1, w2, u2, h1, h2, xs):
        def cell(carry, x):
            h1, h2 = carry
            h1 = jnp.tanh(h1 @ w1 + x @ u1)
            h2 = jnp.tanh(h2 @ w2 + h1 @ u2)
            return (h1, h2), (h1, h2)
        return jax.lax.scan(cell, (h1, h2), xs)

    s = jax.ShapeDtypeStruct
    m, v = s((d, d), jnp.float32), s((b, d), jnp.float32)
    return f, [m, m, m, m, v, v, s((t, b, d), jnp.float32)]


PROGRAMS = {
    "calib_kernel_chain": calib_kernel_chain,
    "calib_fori_carry": calib_fori_carry,
    "calib_fori_slice": calib_fori_slice,
    "calib_loop_graph": calib_loop_graph,
    "calib_scan_copy": calib_scan_copy,
    "calib_scan_wide": calib_scan_wide,
}
