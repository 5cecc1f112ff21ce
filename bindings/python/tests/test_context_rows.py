"""Contexts with rows (library 1.10): Context(n, rows=k) holds k rows of n elements, ctx.x and ctx.y are
(k, n) views, and ctx.dot_each_row() gives each row's dot, bit for bit cudot.dot on a copy of that row.
On HOST here; test_context_rows_gpu.py runs the same checks on the GPU strategies, and test_wait_ms.py
checks with the config spy that rows reach their field of cudot_config."""
import numpy as np
import pytest

import cudot
from support import bits, element_values, operand

PAIRS = [("f32", "f32"), ("f64", "f64"), ("f16", "i8"), ("bf16", "f32"), ("u8", "bool")]
SHAPES = [(11, 37), (3, 8192 + 5), (1, 100), (4, 0)]  # rows, n: tiles, a short last tile, one row, empty rows


def fill(ctx, xt, yt, seed):
    rows, n = ctx.rows, ctx.row_length
    ctx.x[:] = element_values(xt, rows * n, seed).reshape(rows, n)
    ctx.y[:] = element_values(yt, rows * n, seed + 1).reshape(rows, n)


def row_dot(ctx, xt, yt, r, n):
    """cudot.dot on copies of the first n elements of row r: the bits dot_each_row must give."""
    return cudot.dot(operand(ctx.x[r, :n].copy(), xt), operand(ctx.y[r, :n].copy(), yt))


def assert_each_row(ctx, xt, yt, got, n):
    assert got.dtype == np.float64 and got.shape == (len(got),)
    assert [bits(v) for v in got] == [bits(row_dot(ctx, xt, yt, r, n)) for r in range(len(got))]


@pytest.mark.parametrize("xt, yt", PAIRS)
@pytest.mark.parametrize("rows, n", SHAPES)
def test_each_row_has_the_bits_of_its_own_dot(xt, yt, rows, n):
    with cudot.Context(n, xt, memory="host", y_dtype=yt, rows=rows) as ctx:
        fill(ctx, xt, yt, rows * 1000 + n)
        assert_each_row(ctx, xt, yt, ctx.dot_each_row(), n)
        # Prefixes: fewer rows, shorter rows, both.
        for k in sorted({rows, rows // 2, 1, 0}):
            for m in sorted({n, n // 3, 1 if n else 0, 0}):
                got = ctx.dot_each_row(k, m)
                assert got.shape == (k,)
                assert_each_row(ctx, xt, yt, got, m)
        # dot() and dot(k) still see one vector of rows * n elements.
        whole = cudot.dot(operand(ctx.x.ravel().copy(), xt), operand(ctx.y.ravel().copy(), yt))
        assert bits(ctx.dot()) == bits(whole)


def test_views_sizes_and_rows_of_a_context_with_rows():
    with cudot.Context(5, "f64", memory="host", rows=3) as ctx:
        assert (ctx.rows, ctx.row_length, ctx.capacity) == (3, 5, 15)
        x, y = ctx.inputs()
        assert x.shape == y.shape == (3, 5) and x.flags.c_contiguous and x.flags.writeable
        assert x.dtype == np.float64
        assert "rows=3, n=5" in repr(ctx)
        x[:] = 0.0
        y[:] = 1.0
        x[1, 2] = 7.0  # row 1 starts at element 5: element 7 of the buffer
        assert ctx.dot() == 7.0 and ctx.dot(7) == 0.0 and ctx.dot(8) == 7.0
        assert ctx.dot_each_row().tolist() == [0.0, 7.0, 0.0]
    with cudot.Context(6, memory="host", rows=1) as ctx:  # rows given: 2-D views, even of one row
        assert ctx.x.shape == (1, 6) and (ctx.rows, ctx.row_length, ctx.capacity) == (1, 6, 6)


def test_a_context_without_rows_has_one_row_of_its_capacity():
    with cudot.Context(9, "f32", memory="host") as ctx:
        assert ctx.x.shape == (9,)
        assert (ctx.rows, ctx.row_length, ctx.capacity) == (1, 9, 9)
        ctx.x[:] = np.arange(9)
        ctx.y[:] = 2.0
        assert ctx.dot_each_row().tolist() == [ctx.dot()] == [72.0]


def test_out_is_filled_and_returned():
    with cudot.Context(40, "f32", memory="host", rows=6) as ctx:
        fill(ctx, "f32", "f32", 7)
        out = np.full(6, -1.0)
        assert ctx.dot_each_row(out=out) is out
        assert_each_row(ctx, "f32", "f32", out, 40)
        strided = np.full(8, -1.0)[::2]  # not contiguous: written through a copy
        assert ctx.dot_each_row(4, 10, out=strided) is strided
        assert_each_row(ctx, "f32", "f32", strided, 10)
        with pytest.raises(cudot.InvalidArgumentError, match="shape"):
            ctx.dot_each_row(out=np.zeros(5))
        with pytest.raises(cudot.InvalidArgumentError, match="float64"):
            ctx.dot_each_row(out=np.zeros(6, np.float32))


def test_beyond_the_context_is_refused_and_nothing_is_written():
    with cudot.Context(10, "f64", memory="host", rows=4) as ctx:
        fill(ctx, "f64", "f64", 3)
        for rows, n in ((5, 10), (4, 11), (5, 0), (2 ** 62, 1)):
            with pytest.raises(cudot.InvalidArgumentError, match="exceed") as info:
                ctx.dot_each_row(rows, n)
            assert info.value.status == cudot.Status.INVALID_ARGUMENT
            if rows < 100:
                out = np.full(rows, 42.0)
                with pytest.raises(cudot.InvalidArgumentError, match="exceed"):
                    ctx.dot_each_row(rows, n, out=out)
                assert (out == 42.0).all()  # untouched
        with pytest.raises(ValueError):
            ctx.dot_each_row(-1)
        with pytest.raises(TypeError):
            ctx.dot_each_row(1.5)  # type: ignore[arg-type]


def test_no_rows_writes_nothing_and_no_elements_give_positive_zeros():
    with cudot.Context(8, "f32", memory="host", rows=3) as ctx:
        ctx.x[:] = -1.0
        ctx.y[:] = 1.0
        assert ctx.dot_each_row(0).shape == (0,)
        empty = np.empty(0)
        assert ctx.dot_each_row(0, out=empty) is empty
        zeros = ctx.dot_each_row(3, 0)
        assert [bits(v) for v in zeros] == [bits(0.0)] * 3  # +0.0, not -0.0


@pytest.mark.parametrize("rows, error", [(0, ValueError), (-2, ValueError), (2 ** 64, ValueError), (1.5, TypeError),
                                         ("3", TypeError)])
def test_rows_out_of_range_are_refused_before_the_library(rows, error):
    with pytest.raises(error, match="rows" if error is ValueError else None):
        cudot.Context(4, memory="host", rows=rows)


def test_rows_times_n_beyond_memory_is_the_library_s_error():
    with pytest.raises(cudot.CudotError) as info:
        cudot.Context(2 ** 40, "f64", memory="host", rows=2 ** 40)
    assert info.value.status in (cudot.Status.INVALID_ARGUMENT, cudot.Status.OUT_OF_MEMORY)
    assert info.value.message
