"""Context(..., wait_ms=...): the bound on waits for the GPU (cudot_config.wait_ms, library 1.5); and, with the
same spy, Context(..., rows=...) (cudot_config.rows, library 1.10).

Without a GPU the library gives wait_ms no visible effect, so the value's way into the library is checked
with bindings/testing/config_spy.c, a stand-in whose cudot_init reports the config it received, read through
include/cudot.h; the real library is checked to accept every valid value and compute as before."""
import ctypes

import numpy as np
import pytest

import cudot
from cudot import _lib
from support import bits, build_config_spy, gpu_context_or_skip

WAIT_MS_MAX = 2 ** 32 - 1


@pytest.fixture
def spy(tmp_path, monkeypatch):
    """The config spy in place of the library, for this test only."""
    lib = ctypes.CDLL(build_config_spy(tmp_path))
    _lib._declare(lib)
    monkeypatch.setattr(_lib, "lib", lib)


def received(**kwargs):
    """The fields of the cudot_config the spy received for Context(**kwargs), as ints."""
    with pytest.raises(cudot.UnsupportedError, match="config spy") as info:
        cudot.Context(**kwargs)
    words = info.value.message.split()
    assert words[:2] == ["config", "spy:"], info.value.message
    return {key: int(value) for key, value in (w.split("=") for w in words[2:])}


@pytest.mark.parametrize("wait_ms", [0, 1, 1234, cudot.DEFAULT_WAIT_MS, WAIT_MS_MAX])
def test_wait_ms_reaches_its_field_of_the_header_s_config(spy, wait_ms):
    # Options of distinct values, so that two fields swapped would show: CUDOT_BF16 = 4, CUDOT_MEMORY_MAPPED = 2,
    # CUDOT_U8 = 6 in cudot.h.
    got = received(n=7, dtype="bf16", memory="mapped", device=5, y_dtype="u8", wait_ms=wait_ms)
    # The binding's struct has the header's size, and every field lands where the header puts it.
    assert got["size"] == got["sizeof"] == ctypes.sizeof(_lib.Config)
    assert got == dict(n=7, size=got["sizeof"], sizeof=got["sizeof"], dtype=4, memory=2, device=5, y_dtype=6,
                       wait_ms=wait_ms, rows=0)


def test_wait_ms_defaults_to_zero_the_library_s_default(spy):
    # 0 asks for the library's default bound, and keeps the config valid for libraries older than 1.5,
    # which accept bytes past the fields they know only while those are zero.
    assert received(n=1)["wait_ms"] == 0
    assert received(n=1, memory="host", y_dtype="f32")["wait_ms"] == 0


@pytest.mark.parametrize("wait_ms, error", [(-1, ValueError), (WAIT_MS_MAX + 1, ValueError), (1.5, TypeError),
                                            ("10", TypeError), (None, TypeError)])
def test_wait_ms_outside_uint32_is_refused_before_the_library(monkeypatch, wait_ms, error):
    class NoInit:
        def __getattr__(self, name):
            pytest.fail(f"{name} was called for wait_ms={wait_ms!r}")

    monkeypatch.setattr(_lib, "lib", NoInit())
    with pytest.raises(error, match="wait_ms" if error is ValueError else None):
        cudot.Context(4, memory="host", wait_ms=wait_ms)


# Every strategy, against a HOST context holding the same values (the library promises their bits). On a
# GPU, 2000 ms leaves a dot of 2^15 + 3 elements ample time; AUTO there measures the GPU at this size. The
# GPU strategies are skipped without a usable GPU (failed instead with CUDOT_TEST_GPU=1).
@pytest.mark.parametrize("memory, wait_ms", [("host", 1), ("host", WAIT_MS_MAX), ("auto", 2000),
                                             ("auto", WAIT_MS_MAX), ("pinned", 2000),
                                             ("mapped", cudot.DEFAULT_WAIT_MS), ("managed", WAIT_MS_MAX)])
def test_contexts_with_wait_ms_compute_as_without(memory, wait_ms):
    n = 2 ** 15 + 3
    rng = np.random.default_rng(wait_ms)
    x, y = rng.standard_normal(n), rng.standard_normal(n)
    if memory in ("host", "auto"):
        bounded = cudot.Context(n, "f64", memory=memory, wait_ms=wait_ms)
    else:
        bounded = gpu_context_or_skip(n, "f64", memory, wait_ms=wait_ms)
    with bounded, cudot.Context(n, "f64", memory="host") as host:
        for ctx in (host, bounded):
            ctx.x[:], ctx.y[:] = x, y
        assert bounded.memory == memory or memory == "auto"
        for k in (n, n // 3, 1):
            for _ in range(3):  # AUTO times the CPU and the GPU on the first dots of a size
                assert bits(bounded.dot(k)) == bits(host.dot(k))


@pytest.mark.parametrize("rows, wire", [(None, 0), (1, 0), (2, 2), (12345, 12345), (2 ** 64 - 1, 2 ** 64 - 1)])
def test_rows_reach_their_field_of_the_header_s_config(spy, rows, wire):
    # One row goes as 0, so that a library older than 1.10 (which needs the bytes past 24 zero) accepts it.
    got = received(n=7, dtype="f64", memory="host", device=3, wait_ms=9, rows=rows)
    assert got == dict(n=7, size=got["sizeof"], sizeof=got["sizeof"], dtype=2, memory=4, device=3, y_dtype=0,
                       wait_ms=9, rows=wire)
    assert got["sizeof"] == 40
