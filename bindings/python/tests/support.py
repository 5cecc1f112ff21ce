"""Helpers shared by the test files (pytest puts this folder on sys.path)."""
import os

import numpy as np
import pytest

import cudot
from cudot import _context

GPU_REQUIRED = os.environ.get("CUDOT_TEST_GPU") == "1"
GPU_MEMORIES = ["pinned", "mapped", "managed"]
EPS = np.finfo(np.float64).eps


def bits(value):
    """A double's exact bit pattern, so comparisons are bitwise (and NaN equals the same NaN)."""
    return np.float64(value).tobytes()


def open_count():
    return len(_context._open_pointers)


def gpu_context_or_skip(n, dtype, memory, **kw):
    """A context on a GPU strategy; skipped on NO_DEVICE, or failed there if CUDOT_TEST_GPU=1."""
    try:
        return cudot.Context(n, dtype=dtype, memory=memory, **kw)
    except cudot.CudotError as e:
        if e.status != cudot.Status.NO_DEVICE:
            raise
        assert e.message, "NO_DEVICE must come with a message"
        if GPU_REQUIRED:
            pytest.fail(f"CUDOT_TEST_GPU=1 but {memory} reports {e}")
        pytest.skip(f"{memory}: {e}")
