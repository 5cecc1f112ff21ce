"""Many dots in one call (library 1.9) on host memory: cudot.vecdot against NumPy 2's vecdot semantics
(shapes, broadcasting, axis, out) and, bit for bit, against cudot.dot on each pair of vectors alone;
cudot.dot_segments against cudot.dot on each segment."""
import numpy as np
import pytest

import cudot
from support import bits

RNG = np.random.default_rng(20261128)


def reference(x, y, axis=-1):
    """np.vecdot for real types, spelled with numpy 1.x: the core axis last, then a broadcast product sum."""
    xm, ym = np.moveaxis(x, axis, -1), np.moveaxis(y, axis, -1)
    return (xm.astype(np.float64) * ym.astype(np.float64)).sum(-1)


def each_alone(x, y, axis=-1):
    """cudot.dot on every broadcast pair of vectors: the bits vecdot must give."""
    xm, ym = np.broadcast_arrays(np.moveaxis(x, axis, -1), np.moveaxis(y, axis, -1))
    shape = xm.shape[:-1]
    out = np.empty(shape)
    for index in np.ndindex(*shape):
        out[index] = cudot.dot(xm[index], ym[index])
    return out


def same_bits(a, b):
    assert a.shape == b.shape
    assert [bits(v) for v in a.ravel()] == [bits(v) for v in b.ravel()]


CASES = [
    ((1000, 64), (64,), -1),             # one query against a table: the query's row stride is 0
    ((64,), (1000, 64), -1),
    ((5, 7, 33), (5, 7, 33), -1),        # rows one after another: one strided batch
    ((3, 1, 40), (4, 40), -1),           # broadcasting in the leading dimensions
    ((40, 6), (40, 6), 0),               # the summed axis first: rows of stride 6
    ((2, 9000), (2, 9000), 1),           # rows longer than a tile
    ((6, 4, 10), (1, 4, 10), 1),         # axis in the middle, broadcasting before it
]


@pytest.mark.parametrize("xshape, yshape, axis", CASES)
@pytest.mark.parametrize("xt, yt", [(np.float32, np.float32), (np.float64, np.float32), (np.float16, np.int8)])
def test_vecdot_has_numpys_shapes_and_each_vectors_bits(xshape, yshape, axis, xt, yt):
    x = (RNG.standard_normal(xshape) * 4).astype(xt)
    y = (RNG.standard_normal(yshape) * 4).astype(yt)
    got = cudot.vecdot(x, y, axis=axis)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, reference(x, y, axis), rtol=1e-6, atol=1e-6)
    same_bits(got, each_alone(x, y, axis))


def test_vecdot_on_views_that_are_not_one_strided_batch():
    x = RNG.standard_normal((6, 5, 8))[:, ::2, ::-1]  # rows not evenly spaced: read through row pointers
    y = RNG.standard_normal((8,))
    got = cudot.vecdot(x, y)
    assert got.shape == (6, 3)
    same_bits(got, each_alone(x, y))
    t = RNG.standard_normal((7, 9)).T  # the summed axis strided in both
    same_bits(cudot.vecdot(t, t), each_alone(t, t))


def test_vecdot_writes_into_out_and_handles_empty_shapes():
    x, y = RNG.standard_normal((4, 16)), RNG.standard_normal((4, 16))
    out = np.full(4, -1.0)
    assert cudot.vecdot(x, y, out=out) is out
    same_bits(out, each_alone(x, y))
    strided_out = np.full(8, -1.0)[::2]  # not contiguous: written through a copy
    cudot.vecdot(x, y, out=strided_out)
    same_bits(strided_out, each_alone(x, y))
    assert cudot.vecdot(np.ones((0, 5)), np.ones(5)).shape == (0,)
    same_bits(cudot.vecdot(np.ones((3, 0)), np.ones((3, 0))), np.zeros(3))


def test_vecdot_refuses_what_numpy_refuses():
    with pytest.raises(cudot.InvalidArgumentError, match="must be equal"):
        cudot.vecdot(np.ones((3, 4)), np.ones(5))
    with pytest.raises(cudot.InvalidArgumentError, match="do not broadcast"):
        cudot.vecdot(np.ones((3, 4)), np.ones((2, 4)))
    with pytest.raises(cudot.InvalidArgumentError, match="out of range"):
        cudot.vecdot(np.ones((3, 4)), np.ones(4), axis=2)
    with pytest.raises(TypeError, match="complex128"):
        cudot.vecdot(np.ones(4, dtype=complex), np.ones(4))
    with pytest.raises(cudot.InvalidArgumentError, match="float64 of shape"):
        cudot.vecdot(np.ones((3, 4)), np.ones(4), out=np.ones(4))


@pytest.mark.parametrize("xt", [np.float32, np.float64, np.uint8])
def test_dot_segments_gives_each_segments_bits(xt):
    n = 50_000
    x = (RNG.standard_normal(n) * 3).astype(xt)
    y = RNG.standard_normal(n).astype(np.float32)
    offsets = np.array([0, 0, 1, 8193, 8193, 20_000, n])
    got = cudot.dot_segments(x, y, offsets)
    want = np.array([cudot.dot(x[a:b], y[a:b]) if b > a else 0.0 for a, b in zip(offsets[:-1], offsets[1:])])
    same_bits(got, want)
    with pytest.raises(cudot.InvalidArgumentError, match="below offsets"):
        cudot.dot_segments(x, y, [0, 5, 3])
    with pytest.raises(cudot.InvalidArgumentError, match="passes the end"):
        cudot.dot_segments(x, y, [0, n + 1])
