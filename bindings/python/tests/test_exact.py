"""cudot.dot(..., exact=True) (library 1.11, CUDOT_MODE_EXACT) on numpy arrays: the correctly rounded dot,
checked against Python's exact arithmetic: the products summed as fractions.Fraction and rounded once
(float(Fraction) rounds to nearest, ties to even). For float32 pairs math.fsum of the products taken in
float64 gives the same number, which is checked too."""
import math
import random

import numpy as np
import pytest

import cudot
from support import exact_value, wide


def bits(v):
    return np.float64(v).view(np.uint64).item()


def test_known_answers():
    x = np.array([1e16, 1, -1e16] * 100 + [3], dtype=np.float32)
    assert cudot.dot(x, np.ones_like(x), exact=True) == 103.0
    assert cudot.dot(x, np.ones_like(x)) != 103.0  # the canonical mode's bound allows this
    assert cudot.dot(np.array([1e200, 1e200, 1.0]), np.array([1e200, -1e200, 1.0]), exact=True) == 1.0
    assert bits(cudot.dot(np.array([1e308, 1e308]), np.array([10.0, -10.0]), exact=True)) == bits(0.0)
    over = cudot.dot(np.array([1e300, 1e300, -1e300] * 3), np.full(9, 1e10), exact=True)
    assert over == math.inf


def test_special_values_follow_ieee():
    inf, nan = math.inf, math.nan
    assert math.isnan(cudot.dot(np.array([inf]), np.array([0.0]), exact=True))
    assert math.isnan(cudot.dot(np.array([inf, -inf]), np.array([1.0, 1.0]), exact=True))
    assert math.isnan(cudot.dot(np.array([nan, 1.0]), np.array([1.0, 1.0]), exact=True))
    assert cudot.dot(np.array([inf, 1e308]), np.array([2.0, -10.0]), exact=True) == inf
    assert bits(cudot.dot(np.array([-0.0]), np.array([1.0]), exact=True)) == bits(0.0)


@pytest.mark.parametrize("seed", range(12))
def test_float64_against_fractions(seed):
    rng = random.Random(seed)
    lo, hi = [(-1074, 1023), (-600, 600), (-560, -500), (-30, 30)][seed % 4]
    x, y = wide(rng, 300, lo, hi), wide(rng, 300, lo, hi)
    if seed % 3 == 0:  # cancellation: pairs that nearly undo each other
        x[1::2], y[1::2] = -x[0::2], y[0::2] * (1 + 2.0 ** -52)
    want = exact_value(x, y)
    assert bits(cudot.dot(x, y, exact=True)) == bits(want)
    # Any permutation, and a reversed view, give the same bits.
    p = np.random.default_rng(seed).permutation(len(x))
    assert bits(cudot.dot(x[p], y[p], exact=True)) == bits(want)
    assert bits(cudot.dot(x[::-1], y[::-1], exact=True)) == bits(want)


@pytest.mark.parametrize("seed", range(6))
def test_float32_against_fsum(seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(5000) * 2.0 ** rng.integers(-60, 60, 5000)).astype(np.float32)
    y = (rng.standard_normal(5000) * 2.0 ** rng.integers(-60, 60, 5000)).astype(np.float32)
    got = cudot.dot(x, y, exact=True)
    assert bits(got) == bits(math.fsum(float(a) * float(b) for a, b in zip(x, y)))
    assert bits(got) == bits(exact_value(x, y))


@pytest.mark.parametrize("xt, yt", [(np.float16, np.float64), (np.int8, np.uint8), (np.float32, np.float64),
                                    (np.uint8, np.float16)])
def test_mixed_pairs(xt, yt):
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(2000) * 50).astype(xt) if xt not in (np.int8, np.uint8) else rng.integers(0, 100, 2000).astype(xt)
    scale = 100.0 if yt is np.float16 else 1e10
    y = (rng.standard_normal(2000) * scale).astype(yt) if yt not in (np.int8, np.uint8) else rng.integers(0, 200, 2000).astype(yt)
    assert bits(cudot.dot(x, y, exact=True)) == bits(exact_value(x, y))
