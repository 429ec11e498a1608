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
    """A known-trip-count loop whose body reads no slice: one graph launch a trip."""
    b, d, trips = dims((4, 8, 3), (16, 64, 32))

    def f(h, w):
        return jax.lax.fori_loop(0, trips, lambda i, h: jnp.tanh(h @ w) + 0.5, h)

    s = jax.ShapeDtypeStruct
    return f, [s((b, d), jnp.float32), s((d, d), jnp.float32)]


def calib_fori_slice(jnp, jax, dims):
    """The same loop reading xs[i] each trip: a dynamic-slice fusion in its body."""
    b, d, trips = dims((4, 8, 3), (16, 64, 32))

    def f(h, w, xs):
        return jax.lax.fori_loop(0, trips, lambda i, h: jnp.tanh(h @ w + xs[i]), h)

    s = jax.ShapeDtypeStruct
    return f, [s((b, d), jnp.float32), s((d, d), jnp.float32), s((trips, b, d), jnp.float32)]


PROGRAMS = {
    "calib_kernel_chain": calib_kernel_chain,
    "calib_fori_carry": calib_fori_carry,
    "calib_fori_slice": calib_fori_slice,
}
