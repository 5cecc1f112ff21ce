"""Exact rows (library 1.14, cudot_rows.mode) on host memory: cudot.vecdot(..., exact=True),
cudot.dot_segments(..., exact=True) and dot_each_row of an exact context. Every result must have the bits of
cudot.dot(..., exact=True) on its own pair of vectors alone (whose own tests, against Python's exact
arithmetic, are in test_exact.py), and a few are checked against that arithmetic (support.exact_value) too.
The data spans a wide range of magnitudes and has terms that nearly cancel, so that a sum rounded anywhere
on the way would show in the bits. The CuPy and PyTorch cases are in test_rows_gpu.py."""
import ctypes
import math

import numpy as np
import pytest

import cudot
from cudot import _lib
from support import bits, exact_value

RNG = np.random.default_rng(20261129)
INTEGERS = (np.int8, np.uint8)


def values(shape, dtype, seed):
    """Wide-range values of a type (integers for i8 and u8), each odd element along the last axis nearly
    undoing the even one before it once multiplied by partner() of the same seed."""
    rng = np.random.default_rng(seed)
    if dtype in INTEGERS:
        lo, hi = (-128, 128) if dtype is np.int8 else (0, 256)
        return rng.integers(lo, hi, shape).astype(dtype)
    span = {np.float16: 8, np.float32: 40, np.float64: 400}[dtype]
    v = rng.standard_normal(shape) * 2.0 ** rng.integers(-span, span, shape)
    h = shape[-1] // 2
    v[..., 1:2 * h:2] = -v[..., 0:2 * h:2]
    return v.astype(dtype)


def partner(shape, dtype, seed):
    """y for values(shape, ., seed): the odd elements a hair above the even ones, so that pairs of
    products nearly cancel."""
    v = values(shape, dtype, seed + 1)
    if dtype not in INTEGERS:
        h = shape[-1] // 2
        v[..., 1:2 * h:2] = (v[..., 0:2 * h:2].astype(np.float64) * (1 + 2.0 ** -10)).astype(dtype)
    return v


def exact_alone(x, y, axis=-1):
    """cudot.dot(..., exact=True) on every broadcast pair of vectors: the bits vecdot(exact=True) must give."""
    xm, ym = np.broadcast_arrays(np.moveaxis(x, axis, -1), np.moveaxis(y, axis, -1))
    out = np.empty(xm.shape[:-1])
    for index in np.ndindex(*out.shape):
        out[index] = cudot.dot(xm[index], ym[index], exact=True)
    return out


def same_bits(a, b):
    assert a.shape == b.shape
    assert [bits(v) for v in a.ravel()] == [bits(v) for v in b.ravel()]


CASES = [
    ((300, 64), (64,), -1),              # one query against a table: the query's row stride is 0
    ((64,), (300, 64), -1),
    ((5, 7, 33), (5, 7, 33), -1),        # rows one after another: one strided batch
    ((3, 1, 40), (4, 40), -1),           # broadcasting in the leading dimensions
    ((40, 6), (40, 6), 0),               # the summed axis first: rows of stride 6
    ((2, 9000), (2, 9000), 1),           # rows longer than a tile
    ((6, 4, 10), (1, 4, 10), 1),         # axis in the middle, broadcasting before it
]
PAIRS = [(np.float32, np.float32), (np.float64, np.float64), (np.float32, np.float64), (np.float16, np.float64),
         (np.int8, np.uint8), (np.uint8, np.float16)]


@pytest.mark.parametrize("xshape, yshape, axis", CASES)
@pytest.mark.parametrize("xt, yt", PAIRS)  # (on f32 x f32 the canonical mode gives other bits for some rows)
def test_vecdot_exact_gives_each_pairs_exact_dot(xshape, yshape, axis, xt, yt):
    seed = len(xshape) * 100 + xshape[0]
    x = values(xshape, xt, seed)
    y = partner(yshape, yt, seed) if xshape[-1] == yshape[-1] else values(yshape, yt, seed + 1)
    got = cudot.vecdot(x, y, axis=axis, exact=True)
    assert got.dtype == np.float64
    same_bits(got, exact_alone(x, y, axis))


def test_vecdot_exact_against_pythons_exact_arithmetic():
    x, y = values((6, 500), np.float64, 1), partner((6, 500), np.float64, 1)
    got = cudot.vecdot(x, y, exact=True)
    assert [bits(v) for v in got] == [bits(exact_value(a, b)) for a, b in zip(x, y)]
    # float32 rows: the canonical mode (plain double sums) gives other bits on this data.
    xf, yf = values((4, 3000), np.float32, 2), partner((4, 3000), np.float32, 2)
    got = cudot.vecdot(xf, yf, exact=True)
    assert [bits(v) for v in got] == [bits(exact_value(a, b)) for a, b in zip(xf, yf)]
    assert [bits(v) for v in cudot.vecdot(xf, yf)] != [bits(v) for v in got]


def test_one_query_against_a_table_of_known_answers():
    row = np.array([1e16, 1, -1e16] * 100 + [3], dtype=np.float32)
    table = np.stack([row, row[::-1], np.ones_like(row), np.zeros_like(row)])
    query = np.ones(len(row), dtype=np.float32)  # broadcast: read in place for every row (stride 0)
    got = cudot.vecdot(table, query, exact=True)
    assert got.tolist() == [103.0, 103.0, 301.0, 0.0]
    canonical = cudot.vecdot(table, query)
    assert canonical[0] != 103.0  # the canonical mode's bound allows this: the mode reached the library
    same_bits(canonical, np.array([cudot.dot(r, query) for r in table]))


def test_values_that_break_naive_sums():
    # float64 pairs: the canonical mode sums them compensated, correctly rounded on the random data above,
    # so these tell the modes apart (the canonical mode's products overflow to inf and give NaN).
    x, y = np.array([[1e308, 1e308]]), np.array([10.0, -10.0])
    zero = cudot.vecdot(x, y, exact=True)
    assert bits(zero[0]) == bits(0.0)  # the products overflow a double and cancel exactly: +0.0
    assert math.isnan(cudot.vecdot(x, y)[0])
    over = cudot.vecdot(np.array([[1e300, 1e300, -1e300] * 3, [1e300, -1e300, 1.0] * 3]), np.full(9, 1e10),
                        exact=True)
    assert over.tolist() == [math.inf, 3e10]  # the exact sum of the first, 3e310, rounds past the largest
    assert cudot.vecdot(np.array([1e200, 1e200, 1.0]), np.array([1e200, -1e200, 1.0]), exact=True) == 1.0


def test_special_values_and_empty_rows():
    inf, nan = math.inf, math.nan
    x = np.array([[inf, 0.0], [inf, -inf], [nan, 1.0], [inf, 1e308], [-0.0, -0.0], [0.0, 0.0]])
    y = np.array([[0.0, 1.0], [1.0, 1.0], [1.0, 1.0], [2.0, -10.0], [1.0, 1.0], [-1.0, 1.0]])
    got = cudot.vecdot(x, y, exact=True)
    want = exact_alone(x, y)
    assert [math.isnan(v) for v in got] == [True, True, True, False, False, False]
    assert got[3] == inf and bits(got[4]) == bits(got[5]) == bits(0.0)
    same_bits(got[3:], want[3:])
    assert all(math.isnan(v) for v in want[:3])
    empty = cudot.vecdot(np.ones((3, 0)), np.ones((3, 0), dtype=np.float32), exact=True)
    same_bits(empty, np.zeros(3))  # an empty row's dot is +0.0
    assert cudot.vecdot(np.ones((0, 5)), np.ones(5), exact=True).shape == (0,)


def test_rows_that_are_not_one_strided_batch():
    x = values((6, 5, 16), np.float64, 3)[:, ::2, ::-1]  # rows not evenly spaced: read through row pointers
    y = values((16,), np.float64, 4)
    same_bits(cudot.vecdot(x, y, exact=True), exact_alone(x, y))
    t = values((9, 7), np.float32, 5).T  # the summed axis strided in both
    same_bits(cudot.vecdot(t, t, exact=True), exact_alone(t, t))


def test_out_is_written_exactly():
    x, y = values((4, 3000), np.float32, 6), partner((4, 3000), np.float32, 6)
    want = exact_alone(x, y)
    out = np.full(4, -1.0)
    assert cudot.vecdot(x, y, out=out, exact=True) is out
    same_bits(out, want)
    strided_out = np.full(8, -1.0)[::2]  # not contiguous: written through a copy
    assert cudot.vecdot(x, y, out=strided_out, exact=True) is strided_out
    same_bits(strided_out, want)
    table = values((3, 2, 50), np.float64, 7)
    out2 = np.empty((3, 2))
    cudot.vecdot(table, table[0, 0], out=out2, exact=True)
    same_bits(out2, exact_alone(table, table[0, 0]))


@pytest.mark.parametrize("xt, yt", [(np.float32, np.float32), (np.float64, np.float64), (np.float32, np.float64),
                                    (np.uint8, np.float16)])
def test_dot_segments_exact_gives_each_segments_exact_dot(xt, yt):
    n = 50_000
    x, y = values((n,), xt, 8), partner((n,), yt, 8)
    offsets = np.array([0, 0, 1, 8193, 8193, 20_000, 20_001, n])  # empty, one, tile-long and long segments
    got = cudot.dot_segments(x, y, offsets, exact=True)
    want = [cudot.dot(x[a:b], y[a:b], exact=True) for a, b in zip(offsets[:-1], offsets[1:])]
    assert [bits(v) for v in got] == [bits(v) for v in want]
    assert bits(got[0]) == bits(got[3]) == bits(0.0)
    known = np.array([1e16, 1, -1e16] * 100 + [3] + [1e308, 1e308], dtype=np.float64)
    partners = np.array([1.0] * 301 + [10.0, -10.0])
    got = cudot.dot_segments(known, partners, [0, 301, 301, 303], exact=True)
    assert got.tolist() == [103.0, 0.0, 0.0] and bits(got[2]) == bits(0.0)


@pytest.mark.parametrize("exact", [1, 0, "yes", None, 1.0])
def test_exact_must_be_a_bool(monkeypatch, exact):
    # As Context's exact=: a truthy value is not taken as True, and is refused before any library call.
    class NoLibrary:
        def __getattr__(self, name):
            pytest.fail(f"{name} was called for exact={exact!r}")

    monkeypatch.setattr(_lib, "lib", NoLibrary())
    with pytest.raises(TypeError, match="exact must be True or False"):
        cudot.vecdot(np.ones((2, 3)), np.ones(3), exact=exact)
    with pytest.raises(TypeError, match="exact must be True or False"):
        cudot.dot_segments(np.ones(3), np.ones(3), [0, 3], exact=exact)


def test_numpys_bools_are_taken():
    x = np.array([[1e16, 1, -1e16, 3]], dtype=np.float32)
    assert cudot.vecdot(x, np.ones(4, np.float32), exact=np.bool_(True)).tolist() == [4.0]
    assert cudot.dot_segments(x[0], np.ones(4, np.float32), [0, 4], exact=np.bool_(False)).shape == (1,)


# --- the request ------------------------------------------------------------------------------------
def test_the_rows_request_carries_mode_and_reserved():
    assert ctypes.sizeof(_lib.Rows) == 144 and _lib.Rows.mode.offset == 136 and _lib.Rows.reserved.offset == 140
    x = np.array([1e16, 1, -1e16, 3], dtype=np.float32)
    y = np.ones(4, dtype=np.float32)
    result = ctypes.c_double()

    def send(size=144, mode=_lib.MODE_CANONICAL, reserved=0):
        rows = _lib.Rows()
        rows.size, rows.layout, rows.count, rows.n = size, _lib.ROWS_STRIDED, 1, 4
        rows.x = _lib.Array(x.ctypes.data, 1, 0, 1)
        rows.y = _lib.Array(y.ctypes.data, 1, 0, 1)
        rows.mode, rows.reserved = mode, reserved
        return _lib.lib.cudot_dot_rows(ctypes.byref(rows), ctypes.byref(result))

    assert send(mode=_lib.MODE_EXACT) == cudot.Status.OK and result.value == 4.0
    assert send() == cudot.Status.OK and result.value == cudot.dot(x, y)
    assert send(size=136) == cudot.Status.OK and result.value == cudot.dot(x, y)  # 1.13's size: canonical
    assert send(mode=2) == cudot.Status.INVALID_ARGUMENT and "mode" in _lib.last_error(None)
    assert send(reserved=1) == cudot.Status.INVALID_ARGUMENT and "reserved" in _lib.last_error(None)


def test_a_refused_mode_raises_with_the_librarys_message(monkeypatch):
    # What an unknown mode gets from the library, through the binding's error path.
    monkeypatch.setattr(_lib, "MODE_EXACT", 7)
    with pytest.raises(cudot.InvalidArgumentError, match="mode is 7"):
        cudot.vecdot(np.ones((2, 3)), np.ones(3), exact=True)


# --- exact contexts with rows -------------------------------------------------------------------------
@pytest.mark.parametrize("memory", ["host", "auto"])  # AUTO is HOST here, without a GPU
@pytest.mark.parametrize("xt, yt", [("f32", "f32"), ("f64", "f64"), ("f32", "f64")])
def test_dot_each_row_of_an_exact_context(memory, xt, yt):
    npt = {"f32": np.float32, "f64": np.float64}
    rows, n = 7, 3001
    x, y = values((rows, n), npt[xt], 9), partner((rows, n), npt[yt], 9)
    with cudot.Context(n, xt, memory=memory, y_dtype=yt, rows=rows, exact=True) as ctx:
        ctx.x[:], ctx.y[:] = x, y
        assert ctx.exact is True
        for _ in range(2):  # AUTO measures the CPU and the GPUs on its first calls
            same_bits(ctx.dot_each_row(), np.array([cudot.dot(a, b, exact=True) for a, b in zip(x, y)]))
        same_bits(ctx.dot_each_row(4, 100), np.array([cudot.dot(a[:100], b[:100], exact=True)
                                                      for a, b in zip(x[:4], y[:4])]))
        out = np.full(10, -1.0)[::2]
        assert ctx.dot_each_row(5, 0, out=out) is out
        same_bits(out, np.zeros(5))  # n = 0: +0.0 for every row
        if xt == "f32" == yt:
            with cudot.Context(n, xt, memory=memory, rows=rows) as canonical:
                canonical.x[:], canonical.y[:] = x, y
                assert [bits(v) for v in canonical.dot_each_row()] != [bits(v) for v in ctx.dot_each_row()]


def test_dot_each_row_of_an_exact_context_known_answers():
    row = np.array([1e16, 1, -1e16] * 100 + [3], dtype=np.float32)
    with cudot.Context(len(row), "f32", memory="host", rows=3, exact=True) as ctx:
        ctx.x[:] = [row, row[::-1], np.zeros_like(row)]
        ctx.y[:] = 1
        got = ctx.dot_each_row()
        assert got.tolist() == [103.0, 103.0, 0.0] and bits(got[2]) == bits(0.0)
        big = int(np.float32(1e16))  # 10000000272564224, as float32 holds 1e16
        assert ctx.dot_each_row(2, 3).tolist() == [1.0, float(3 - big + 1)]  # each sum exact, rounded once
    with cudot.Context(2, "f64", memory="host", rows=2, exact=True) as ctx:
        ctx.x[:] = [[1e308, 1e308], [math.inf, 1.0]]
        ctx.y[:] = [[10.0, -10.0], [0.0, 1.0]]
        got = ctx.dot_each_row()
        assert bits(got[0]) == bits(0.0) and math.isnan(got[1])
