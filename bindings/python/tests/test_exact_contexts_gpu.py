"""Exact contexts (library 1.13) on the GPU strategies: every dot, the exact partials joined and (library 1.14)
each row's dot of a context with rows, with the bits the CPU gives for the same values (cudot.dot(x, y,
exact=True) on numpy arrays, checked against Python's exact arithmetic in test_exact.py and
test_exact_contexts.py). PINNED, MAPPED and MANAGED are skipped without
a usable GPU, and AUTO where it resolves to HOST (no GPU); with CUDOT_TEST_GPU=1 both are failures instead."""
import math

import numpy as np
import pytest

import cudot
from support import GPU_MEMORIES, NUMPY, bits, any_gpu_context_or_skip

SIZES = [1, 7, 8192 * 3 + 5, 1_000_003]
PAIRS = [("f32", "f32"), ("f64", "f64"), ("f32", "f64")]
SPAN = {"f32": 40, "f64": 400}


def context_or_skip(n, xt, yt, memory, **kw):
    return any_gpu_context_or_skip(n, xt, memory, y_dtype=yt, exact=True, **kw)


def values(xt, yt, n, seed):
    """Wide-range values, each odd term nearly undoing the even one before it."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * 2.0 ** rng.integers(-SPAN[xt], SPAN[xt], n)).astype(NUMPY[xt])
    y = (rng.standard_normal(n) * 2.0 ** rng.integers(-SPAN[yt], SPAN[yt], n)).astype(NUMPY[yt])
    h = n // 2
    x[1:2 * h:2] = -x[0:2 * h:2]
    y[1:2 * h:2] = y[0:2 * h:2] * (1 + 2.0 ** -20)
    return x, y


@pytest.mark.parametrize("memory", GPU_MEMORIES + ["auto"])
@pytest.mark.parametrize("xt, yt", PAIRS)
@pytest.mark.parametrize("n", SIZES)
def test_gpu_exact_contexts_have_the_cpu_s_bits(memory, xt, yt, n):
    with context_or_skip(n, xt, yt, memory) as ctx:
        assert ctx.exact is True and (memory == "auto" or ctx.memory == memory)
        for seed in (n, n + 1):  # fresh data after a dot: PINNED copies it, MANAGED migrates it
            x, y = values(xt, yt, n, seed)
            ctx.x[:], ctx.y[:] = x, y
            want = cudot.dot(x, y, exact=True)  # numpy arrays: the CPU
            for _ in range(3):  # AUTO measures the CPU and the GPUs on its first calls
                assert bits(ctx.dot()) == bits(want)
            for k in (n // 3, n - 1):
                assert bits(ctx.dot(k)) == bits(cudot.dot(x[:k], y[:k], exact=True)), k
            cuts = sorted([0, n // 5, n // 5 + 1, n // 2, n])  # any first element: no tiles in the exact mode
            parts = [ctx.tile_partials(a, b - a) for a, b in zip(cuts, cuts[1:])][::-1]
            assert all(p.shape == (cudot.EXACT_PARTIAL_BYTES,) for p in parts)
            assert bits(cudot.join_exact_partials(np.concatenate(parts))) == bits(want)


@pytest.mark.parametrize("memory", GPU_MEMORIES)
def test_gpu_exact_contexts_on_every_visible_gpu(memory):
    n = 8192 * 40 + 3
    x, y = values("f64", "f64", n, 5)
    with context_or_skip(n, "f64", "f64", memory, device=cudot.DEVICE_ALL) as ctx:
        assert ctx.device == cudot.DEVICE_ALL and ctx.exact is True
        ctx.x[:], ctx.y[:] = x, y
        assert bits(ctx.dot()) == bits(cudot.dot(x, y, exact=True))
        assert bits(ctx.dot(n // 2)) == bits(cudot.dot(x[:n // 2], y[:n // 2], exact=True))
        assert bits(cudot.join_exact_partials(ctx.tile_partials(7))) == bits(cudot.dot(x[7:], y[7:], exact=True))


@pytest.mark.parametrize("memory", GPU_MEMORIES + ["auto"])
def test_gpu_known_answers(memory):
    x = np.array([1e16, 1, -1e16] * 100 + [3], dtype=np.float32)
    with context_or_skip(len(x), "f32", "f32", memory) as ctx:
        ctx.x[:], ctx.y[:] = x, 1
        assert ctx.dot() == 103.0
    with context_or_skip(3, "f64", "f64", memory) as ctx:
        ctx.x[:], ctx.y[:] = [1e300, 1e300, -1e300], 1e10
        assert ctx.dot() == math.inf
    with context_or_skip(2, "f64", "f64", memory) as ctx:
        ctx.x[:], ctx.y[:] = 1e308, [10.0, -10.0]
        assert bits(ctx.dot()) == bits(0.0)  # +0.0


@pytest.mark.parametrize("memory", GPU_MEMORIES + ["auto"])
@pytest.mark.parametrize("xt, yt", PAIRS)
def test_gpu_exact_contexts_dot_each_row(memory, xt, yt):
    # Library 1.14: each row's exact dot, with the bits the CPU gives for that row alone.
    rows, n = 6, 8192 + 5
    with context_or_skip(n, xt, yt, memory, rows=rows) as ctx:
        x, y = values(xt, yt, rows * n, 7)
        x, y = x.reshape(rows, n), y.reshape(rows, n)
        x[2] = 0  # a row of zeros: +0.0
        ctx.x[:], ctx.y[:] = x, y
        for _ in range(3):  # AUTO measures the CPU and the GPUs on its first calls
            got = ctx.dot_each_row()
            assert [bits(v) for v in got] == [bits(cudot.dot(a, b, exact=True)) for a, b in zip(x, y)]
        got = ctx.dot_each_row(4, 1000)
        assert [bits(v) for v in got] == [bits(cudot.dot(a[:1000], b[:1000], exact=True)) for a, b in zip(x, y)][:4]
