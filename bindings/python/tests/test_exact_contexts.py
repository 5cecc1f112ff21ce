"""Contexts in the exact mode (Context(..., exact=True), library 1.13) and exact partials.

Every dot of an exact context must have the bits of cudot.dot(x, y, exact=True) on the same values (whose
own tests are in test_exact.py) and of Python's exact arithmetic (support.exact_value: the products summed
as fractions.Fraction, rounded once). Exact partials of pieces of a vector, from contexts and from
arrays, joined in any order, must give the whole's bits. The data spans a wide range of magnitudes and
has terms that nearly cancel, so that a sum rounded anywhere on the way shows in the bits. The GPU
strategies are in test_exact_contexts_gpu.py."""
import functools
import math
import random

import numpy as np
import pytest

import cudot
from cudot import _lib
from support import NUMPY, bits, exact_value, wide

SIZES = [0, 1, 7, 5000, 100003]
PAIRS = [("f32", "f32"), ("f64", "f64"), ("f32", "f64")]
SPAN = {"f32": 40, "f64": 400}  # binary exponents of the data: +-SPAN (f32 products stay far from overflow)
EP = cudot.EXACT_PARTIAL_BYTES


@functools.lru_cache(maxsize=None)
def data(xt, yt, n):
    """(x, y, their exact dot by Fraction): random values of wide range, each odd term nearly undoing the
    even one before it. Cached: the Fraction sum of 100003 terms takes about a second."""
    rng = np.random.default_rng(n * 1000 + sum(map(ord, xt + yt)))
    x = (rng.standard_normal(n) * 2.0 ** rng.integers(-SPAN[xt], SPAN[xt], n)).astype(NUMPY[xt])
    y = (rng.standard_normal(n) * 2.0 ** rng.integers(-SPAN[yt], SPAN[yt], n)).astype(NUMPY[yt])
    h = n // 2
    x[1:2 * h:2] = -x[0:2 * h:2]
    y[1:2 * h:2] = y[0:2 * h:2] * (1 + 2.0 ** -20)
    x.flags.writeable = y.flags.writeable = False  # shared by the tests through the cache
    return x, y, exact_value(x, y)


def exact_context(x, y, memory="host", **kw):
    ctx = cudot.Context(len(x), x.dtype, memory=memory, y_dtype=y.dtype, exact=True, **kw)
    ctx.x[:], ctx.y[:] = x, y
    return ctx


# --- dots ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("memory", ["host", "auto"])  # AUTO is HOST here, without a GPU
@pytest.mark.parametrize("xt, yt", PAIRS)
@pytest.mark.parametrize("n", SIZES)
def test_exact_contexts_give_the_bits_of_the_exact_dot(memory, xt, yt, n):
    x, y, fraction = data(xt, yt, n)
    want = cudot.dot(x, y, exact=True)
    assert bits(want) == bits(fraction)
    with exact_context(x, y, memory) as ctx:
        assert ctx.exact is True and ctx.dtypes == (xt, yt)
        for _ in range(3):  # AUTO measures the CPU and the GPUs on its first calls
            assert bits(ctx.dot()) == bits(want)
        for k in sorted({0, min(n, 1), n // 3, max(n - 1, 0)}):
            assert bits(ctx.dot(k)) == bits(cudot.dot(x[:k], y[:k], exact=True)), k
    if (xt, yt, n) in (("f32", "f32", 5000), ("f32", "f32", 100003)):
        # The canonical mode sums f32 products in plain double: on this data its bound allows another
        # result, and gives one, so these checks would see a context that ignored the mode. (Pairs with
        # f64 are summed compensated, which is correctly rounded on this data too.)
        with cudot.Context(n, xt, memory=memory, y_dtype=yt) as canonical:
            canonical.x[:], canonical.y[:] = x, y
            assert canonical.exact is False and bits(canonical.dot()) != bits(want)


@pytest.mark.parametrize("memory", ["host", "auto"])
def test_known_answers(memory):
    x = np.array([1e16, 1, -1e16] * 100 + [3], dtype=np.float32)
    with exact_context(x, np.ones_like(x), memory) as ctx:
        assert ctx.dot() == 103.0
    with cudot.Context(len(x), "f32", memory=memory) as canonical:
        canonical.x[:], canonical.y[:] = x, 1
        assert canonical.dot() != 103.0
    with exact_context(np.array([1e300, 1e300, -1e300]), np.full(3, 1e10), memory) as ctx:
        assert ctx.dot() == math.inf  # the exact sum, 1e310, rounds past the largest double
    with exact_context(np.array([1e308, 1e308]), np.array([10.0, -10.0]), memory) as ctx:
        zero = ctx.dot()  # the products overflow a double, and cancel exactly
        assert zero == 0.0 and not math.copysign(1.0, zero) < 0  # +0.0
        assert ctx.dot(1) == math.inf


@pytest.mark.parametrize("seed", range(8))
def test_float64_of_the_whole_range_against_fractions(seed):
    rng = random.Random(seed)
    lo, hi = [(-1074, 1023), (-600, 600), (-560, -500), (-30, 30)][seed % 4]
    x, y = wide(rng, 400, lo, hi), wide(rng, 400, lo, hi)
    if seed % 2:  # cancellation
        x[1::2], y[1::2] = -x[0::2], y[0::2] * (1 + 2.0 ** -52)
    want = exact_value(x, y)
    with exact_context(x, y) as ctx:
        assert bits(ctx.dot()) == bits(want)
        ctx.x[:], ctx.y[:] = x[::-1], y[::-1]  # another order: the same bits
        assert bits(ctx.dot()) == bits(want)


def test_special_values_follow_the_header():
    inf, nan = math.inf, math.nan
    cases = [([inf], [0.0], nan), ([inf, -inf], [1.0, 1.0], nan), ([nan, 1.0], [1.0, 1.0], nan),
             ([inf, 1e308], [2.0, -10.0], inf), ([-0.0], [1.0], 0.0)]
    for x, y, want in cases:
        with exact_context(np.array(x), np.array(y)) as ctx:
            got = ctx.dot()
            assert (math.isnan(got) if math.isnan(want) else bits(got) == bits(want)), (x, y, got)


def test_fresh_data_after_a_dot():
    x, y, _ = data("f64", "f64", 5000)
    with exact_context(x, y) as ctx:
        first = ctx.dot()
        ctx.x[:] = x[::-1]
        assert bits(ctx.dot()) == bits(cudot.dot(x[::-1], y, exact=True)) != bits(first)


# --- exact partials -----------------------------------------------------------------------------------
def test_constant():
    assert cudot.EXACT_PARTIAL_BYTES == 1120


@pytest.mark.parametrize("seed", range(6))
def test_partials_of_random_cuts_joined_in_any_order_give_the_whole(seed):
    x, y, fraction = data("f64", "f64", 100003)
    rng = random.Random(seed)
    cuts = sorted({0, len(x)} | {rng.randrange(len(x) + 1) for _ in range(rng.randint(1, 9))})
    if seed == 0:
        cuts = [0, 0, 5, 5, len(x)]  # empty pieces give partials too
    with exact_context(x, y) as whole:
        want = whole.dot()
        assert bits(want) == bits(fraction)
        parts = []
        for i, (a, b) in enumerate(zip(cuts, cuts[1:])):
            # Any first element: the exact mode has no tiles to align the pieces to.
            if i % 3 == 0:
                p = whole.tile_partials(a, b - a)
            elif i % 3 == 1:
                with exact_context(x[a:b], y[a:b]) as piece:
                    p = piece.tile_partials()
            else:
                p = cudot.tile_partials(x[a:b], y[a:b], exact=True)
            assert p.dtype == np.uint8 and p.shape == (EP,)
            parts.append(p)
        rng.shuffle(parts)
        joined = cudot.join_exact_partials(np.concatenate(parts))
        assert isinstance(joined, float) and bits(joined) == bits(want)
        assert bits(cudot.join_exact_partials(whole.tile_partials())) == bits(want)


def test_partials_of_pieces_of_other_element_types_join():
    # float32 values held as float64 are the same values: pieces computed in either type join exactly.
    x, y, fraction = data("f32", "f32", 5000)
    parts = [cudot.tile_partials(x[:1000].astype(np.float64), y[:1000].astype(np.float64), exact=True)]
    with exact_context(x[1000:3000], y[1000:3000].astype(np.float64)) as piece:  # f32 x f64
        parts.append(piece.tile_partials())
    with exact_context(x[3000:], y[3000:]) as piece:  # f32 x f32
        parts.append(piece.tile_partials())
    assert bits(cudot.join_exact_partials(b"".join(p.tobytes() for p in parts[::-1]))) == bits(fraction)


def test_the_forms_partials_are_taken_in():
    x, y, fraction = data("f32", "f32", 5000)
    p = np.concatenate([cudot.tile_partials(x[:10], y[:10], exact=True),
                        cudot.tile_partials(x[10:], y[10:], exact=True)])
    for form in (p, p.tobytes(), bytearray(p.tobytes()), memoryview(p.tobytes()), p.reshape(2, EP),
                 p.reshape(2, EP)[::-1]):
        assert bits(cudot.join_exact_partials(form)) == bits(fraction)


def test_empty_sums():
    zero = cudot.join_exact_partials(b"")
    assert zero == 0.0 and math.copysign(1.0, zero) == 1.0
    with cudot.Context(0, "f32", memory="host", exact=True) as empty:
        assert empty.tile_partials().shape == (EP,)  # n = 0 still writes the partial of an empty sum
        assert bits(cudot.join_exact_partials(empty.tile_partials())) == bits(0.0)
    with cudot.Context(10, "f64", memory="host", exact=True) as ctx:
        ctx.x[:], ctx.y[:] = 1, 2
        assert ctx.tile_partials(10, 0).shape == ctx.tile_partials(3, 0).shape == (EP,)
        assert cudot.join_exact_partials(np.concatenate([ctx.tile_partials(3, 0), ctx.tile_partials(0, 3)])) == 6.0
    p = cudot.tile_partials(np.zeros(0, np.float32), np.zeros(0, np.float32), exact=True)
    assert p.shape == (EP,) and bits(cudot.join_exact_partials(p)) == bits(0.0)


def test_range_beyond_capacity_is_refused_in_the_exact_mode_too():
    with cudot.Context(100, "f32", memory="host", exact=True) as ctx:
        for first, n in ((0, 101), (99, 2), (101, 0)):
            with pytest.raises(cudot.InvalidArgumentError, match="capacity"):
                ctx.tile_partials(first, n)
        assert ctx.tile_partials(99).shape == (EP,)


@pytest.mark.parametrize("where, offset", [("tag", 0), ("special bits", 5), ("reserved bytes", 9),
                                           ("a digit's top byte", 16 + 8 * 3 + 7)])
def test_a_corrupted_partial_is_refused_with_its_index(where, offset):
    x, y, _ = data("f64", "f64", 5000)
    good = [cudot.tile_partials(x[a:a + 1000], y[a:a + 1000], exact=True) for a in range(0, 5000, 1000)]
    assert bits(cudot.join_exact_partials(np.concatenate(good))) == bits(cudot.dot(x, y, exact=True))
    bad = np.concatenate(good)
    bad[2 * EP + offset] ^= 0x80
    with pytest.raises(cudot.InvalidArgumentError, match="partial") as info:
        cudot.join_exact_partials(bad)
    assert "partial 2 " in info.value.message, where  # the library names the partial's index


def test_canonical_partials_are_not_exact_partials():
    n = 70 * cudot.TILE_ELEMENTS  # 70 tile partials of 16 bytes: the length of one exact partial
    with cudot.Context(n, "f32", memory="host") as ctx:
        ctx.x[:], ctx.y[:] = 1, 1
        canonical = ctx.tile_partials()
    assert canonical.size == EP
    with pytest.raises(cudot.InvalidArgumentError, match="partial 0 "):
        cudot.join_exact_partials(canonical)


def test_wrong_lengths_and_types_are_refused():
    with pytest.raises(cudot.InvalidArgumentError, match="multiple of 1120 bytes") as info:
        cudot.join_exact_partials(b"\0" * (EP + 16))
    assert "partial" in info.value.message
    with pytest.raises(TypeError, match="uint8"):
        cudot.join_exact_partials(np.zeros(EP // 8, np.float64))
    with pytest.raises(TypeError):
        cudot.join_exact_partials([0] * EP)


# --- the mode and what does not take it ---------------------------------------------------------------
def test_exact_is_read_from_the_library():
    with cudot.Context(4, memory="host", exact=True) as exact, cudot.Context(4, memory="host") as plain, \
            cudot.Context(4, memory="host", exact=False) as chosen, cudot.Context(4, exact=np.True_) as np_bool:
        assert (exact.exact, plain.exact, chosen.exact, np_bool.exact) == (True, False, False, True)
        assert "exact=True" in repr(exact) and "exact" not in repr(plain)
    with pytest.raises(ValueError, match="closed"):
        exact.exact


def test_the_mode_reaches_its_field_of_the_config(monkeypatch):
    seen = []
    real = _lib.lib

    class Spy:
        def __getattr__(self, name):
            return getattr(real, name)

        def cudot_init(self, ptr, n, config):
            c = config._obj
            seen.append((c.size, c.rows, c.mode, c.reserved))
            return real.cudot_init(ptr, n, config)

    monkeypatch.setattr(_lib, "lib", Spy())
    for exact in (False, True):
        with cudot.Context(4, memory="host", exact=exact, rows=2) as ctx:
            assert ctx.exact is exact
    # 40 bytes (the 1.13 header), mode CUDOT_MODE_EXACT = 1 only when asked, reserved 0.
    assert seen == [(40, 2, 0, 0), (40, 2, 1, 0)]


@pytest.mark.parametrize("exact", [1, 0, "yes", None, 1.0])
def test_exact_must_be_a_bool(monkeypatch, exact):
    # A truthy value is not taken as True: Context and tile_partials refuse it before any library call.
    class NoLibrary:
        def __getattr__(self, name):
            pytest.fail(f"{name} was called for exact={exact!r}")

    monkeypatch.setattr(_lib, "lib", NoLibrary())
    with pytest.raises(TypeError, match="exact must be True or False"):
        cudot.Context(4, memory="host", exact=exact)
    with pytest.raises(TypeError, match="exact must be True or False"):
        cudot.tile_partials(np.ones(3), np.ones(3), exact=exact)


def test_rows_of_an_exact_context():
    x, y, _ = data("f64", "f64", 5000)
    with cudot.Context(1000, "f64", memory="host", rows=5, exact=True) as ctx:
        ctx.x[:], ctx.y[:] = x.reshape(5, 1000), y.reshape(5, 1000)
        # Each row's exact dot (library 1.14; more in test_exact_rows.py).
        got = ctx.dot_each_row()
        assert [bits(v) for v in got] == [bits(exact_value(x[i:i + 1000], y[i:i + 1000])) for i in range(0, 5000, 1000)]
        # dot and tile_partials still see the buffers as one vector of rows * n elements.
        assert bits(ctx.dot()) == bits(cudot.dot(x, y, exact=True))
        assert bits(cudot.join_exact_partials(ctx.tile_partials(1500))) == bits(cudot.dot(x[1500:], y[1500:],
                                                                                          exact=True))


def test_a_library_older_than_1_13(monkeypatch):
    class Without:  # the loaded library minus the 1.13 functions
        def __init__(self, lib):
            self._lib = lib

        def __getattr__(self, name):
            if name in ("cudot_get_mode", "cudot_join_exact_partials"):
                raise AttributeError(name)
            return getattr(self._lib, name)

    with cudot.Context(4, "f32", memory="host") as ctx:
        monkeypatch.setattr(_lib, "lib", Without(_lib.lib))
        assert ctx.exact is False  # such a library makes only canonical contexts
        ctx.x[:], ctx.y[:] = 2, 3
        assert ctx.dot() == 24 and ctx.tile_partials().size == cudot.PARTIAL_BYTES
        with pytest.raises(cudot.UnsupportedError, match=r"lacks cudot_join_exact_partials \(new in 1.13\)"):
            cudot.join_exact_partials(b"")
