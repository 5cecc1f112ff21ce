"""Contexts with rows (library 1.10) on the GPU strategies: every result of dot_each_row bit for bit cudot.dot on
a copy of its row (the CPU), as on HOST (test_context_rows.py). PINNED, MAPPED and MANAGED are skipped without
a usable GPU, and AUTO where it resolves to HOST (no GPU); with CUDOT_TEST_GPU=1 both are failures instead."""
import numpy as np
import pytest

import cudot
from support import GPU_MEMORIES, bits, element_values, any_gpu_context_or_skip, operand

SHAPES = [(64, 3000), (5, 2 ** 15 + 3), (300, 17), (1, 8192)]  # rows, n


def context_or_skip(n, xt, yt, memory, rows, **kw):
    return any_gpu_context_or_skip(n, xt, memory, y_dtype=yt, rows=rows, **kw)


def fill(ctx, xt, yt, seed):
    rows, n = ctx.rows, ctx.row_length
    ctx.x[:] = element_values(xt, rows * n, seed).reshape(rows, n)
    ctx.y[:] = element_values(yt, rows * n, seed + 1).reshape(rows, n)


def assert_each_row(ctx, xt, yt, got, n):
    want = [cudot.dot(operand(ctx.x[r, :n].copy(), xt), operand(ctx.y[r, :n].copy(), yt)) for r in range(len(got))]
    assert [bits(v) for v in got] == [bits(v) for v in want]


@pytest.mark.parametrize("memory", GPU_MEMORIES + ["auto"])
@pytest.mark.parametrize("xt, yt", [("f32", "f32"), ("f64", "f64"), ("f16", "bf16")])
@pytest.mark.parametrize("rows, n", SHAPES)
def test_gpu_rows_have_the_bits_of_their_own_dots(memory, xt, yt, rows, n):
    with context_or_skip(n, xt, yt, memory, rows) as ctx:
        assert (ctx.rows, ctx.row_length, ctx.capacity) == (rows, n, rows * n)
        assert memory == "auto" or ctx.memory == memory
        fill(ctx, xt, yt, rows + n)
        for _ in range(3):  # AUTO measures the CPU and the GPUs on the first calls
            assert_each_row(ctx, xt, yt, ctx.dot_each_row(), n)
        for k, m in ((rows // 2, n), (rows, n // 3), (1, 1), (rows, 0), (0, n)):
            assert_each_row(ctx, xt, yt, ctx.dot_each_row(k, m), m)
        fill(ctx, xt, yt, rows + n + 7)  # fresh data after a dot: PINNED copies it, MANAGED migrates it
        assert_each_row(ctx, xt, yt, ctx.dot_each_row(), n)
        out = np.full(rows + 1, 42.0)
        with pytest.raises(cudot.InvalidArgumentError):
            ctx.dot_each_row(rows + 1, n, out=out)
        with pytest.raises(cudot.InvalidArgumentError):
            ctx.dot_each_row(rows, n + 1, out=out[:rows])
        assert (out == 42.0).all()


@pytest.mark.parametrize("memory", GPU_MEMORIES)
def test_gpu_rows_on_every_visible_gpu(memory):
    rows, n = 37, 8192 * 3 + 11
    with context_or_skip(n, "f32", "f32", memory, rows, device=cudot.DEVICE_ALL) as ctx:
        assert ctx.device == cudot.DEVICE_ALL
        fill(ctx, "f32", "f32", 99)
        assert_each_row(ctx, "f32", "f32", ctx.dot_each_row(), n)
        assert_each_row(ctx, "f32", "f32", ctx.dot_each_row(rows - 1, n - 1), n - 1)
