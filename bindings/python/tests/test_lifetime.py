"""Reliability of a context's lifetime: close twice, use after close, wrong element types, and release by
the finalizer alone. Each check makes sure the binding itself keeps track of closed contexts and never
hands the library a freed pointer (the library may or may not detect that; see cudot_deinit in cudot.h)."""
import gc
import itertools
import os

import numpy as np
import pytest

import cudot
from cudot import _lib
from support import open_count

NAMES = list(cudot.TYPE_NAMES)
VIEW_DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": np.uint16,
               "i8": np.int8, "u8": np.uint8, "bool": np.bool_}


class CountingLibrary:
    """Stands in for the loaded library: forwards every function, counts cudot_deinit per pointer."""

    def __init__(self, real):
        self._real = real
        self.deinit_calls = []

    def __getattr__(self, name):
        return getattr(self._real, name)

    def cudot_deinit(self, ptr):
        self.deinit_calls.append(ptr)
        return self._real.cudot_deinit(ptr)


class NoLibrary:
    """Stands in for the loaded library after close: any use of it fails the test."""

    def __getattr__(self, name):
        raise AssertionError(f"the binding called {name} on a closed context")


# --- close twice -------------------------------------------------------------------------------------
def test_close_twice_is_harmless_and_frees_once(monkeypatch):
    spy = CountingLibrary(_lib.lib)
    monkeypatch.setattr(_lib, "lib", spy)  # read by Context when it creates the handle
    base = open_count()

    plain = cudot.Context(64, "f64", memory="host")
    assert plain.close() is None and plain.close() is None and plain.closed
    for _ in range(3):
        plain.close()
    assert len(spy.deinit_calls) == 1

    with cudot.Context(64, "f32", y_dtype="bool", memory="host") as nested:
        nested.close()  # then __exit__ closes it again
    assert nested.closed and len(spy.deinit_calls) == 2

    viewed = cudot.Context(64, "i8", y_dtype="bf16", memory="host")
    x = viewed.x
    viewed.close()
    viewed.close()  # the view keeps the memory; neither close frees it
    assert open_count() == base + 1 and len(spy.deinit_calls) == 2
    x[:] = 1
    del x  # the last reference: freed now, once
    assert open_count() == base and len(spy.deinit_calls) == 3
    viewed.close()  # nothing left to free: still nothing happens
    plain.close()
    # (Addresses are not compared: the allocator may give each new context the address of the last.)
    assert len(spy.deinit_calls) == 3


# --- use after close ---------------------------------------------------------------------------------
def every_operation(ctx):
    """Every call that needs a live context, by name."""
    return {
        "dot()": ctx.dot, "dot(3)": lambda: ctx.dot(3), "dot_n(3)": lambda: ctx.dot_n(3),
        "dot_n(0)": lambda: ctx.dot_n(0), "x": lambda: ctx.x, "y": lambda: ctx.y, "inputs()": ctx.inputs,
        "inputs(typed)": lambda: ctx.inputs(*ctx.dtypes), "inputs(wrong type)": lambda: ctx.inputs("f64", "i8"),
        "memory": lambda: ctx.memory, "device": lambda: ctx.device, "capacity": lambda: ctx.capacity,
        "type_codes": lambda: ctx.type_codes, "with": ctx.__enter__,
    }


@pytest.mark.parametrize("xt, yt, keep_view", [("f32", "f32", False), ("f64", "f64", True),
                                                 ("f16", "bool", False), ("bf16", "u8", True)])
def test_use_after_close_raises_and_never_calls_the_library(monkeypatch, xt, yt, keep_view):
    ctx = cudot.Context(16, xt, memory="host", y_dtype=yt)
    ctx.x[:] = 1
    ctx.y[:] = 1
    kept = ctx.y if keep_view else None  # a view alive at close() must not reopen the context
    ctx.close()
    monkeypatch.setattr(_lib, "lib", NoLibrary())  # from here on, any native call fails the test
    for name, use in every_operation(ctx).items():
        with pytest.raises(ValueError, match="closed"):
            use()
        assert ctx.closed, name
    ctx.close()  # closing again calls nothing either
    # What does not need the library stays readable.
    assert ctx.dtypes == (xt, yt) and (ctx.dtype, ctx.y_dtype) == (VIEW_DTYPES[xt], VIEW_DTYPES[yt])
    assert repr(ctx) == "<cudot.Context closed>"
    if keep_view:
        assert kept.sum() == 16  # still the library's memory, still alive
    monkeypatch.undo()
    del kept  # the last reference: now the buffers are freed


def test_use_after_close_from_a_view_of_a_closed_context():
    with cudot.Context(8, "f32", y_dtype="i8", memory="host") as ctx:
        x, y = ctx.inputs()
    with pytest.raises(ValueError, match="closed"):
        ctx.inputs()
    # A view taken before close() keeps working (it holds the memory), even after the context is gone.
    x[:] = 2
    y[:] = 3
    assert x.dtype == np.float32 and y.dtype == np.int8 and float(np.dot(x, y)) == 48


# --- wrong element type ------------------------------------------------------------------------------
@pytest.mark.parametrize("xt, yt", list(itertools.product(NAMES, NAMES)))
def test_wrong_element_type_views_are_refused_for_every_pair(xt, yt):
    with cudot.Context(5, xt, memory="host", y_dtype=yt) as ctx:
        for want in NAMES:
            # x asked as `want`, y as what it holds; then the other way round.
            if want == xt:
                assert ctx.inputs(want, yt)[0].dtype == VIEW_DTYPES[xt]
            else:
                with pytest.raises(TypeError, match="this context's x holds"):
                    ctx.inputs(want, yt)
            if want == yt:
                assert ctx.inputs(xt, want)[1].dtype == VIEW_DTYPES[yt]
            else:
                with pytest.raises(TypeError, match="this context's y holds"):
                    ctx.inputs(xt, want)
            if want != yt:  # y_dtype defaults to dtype, so this asks for y as `want` too
                with pytest.raises(TypeError):
                    ctx.inputs(want)
        # Each side keeps its own type after all the refusals, and the two never alias.
        x, y = ctx.inputs()
        assert (x.dtype, y.dtype) == (VIEW_DTYPES[xt], VIEW_DTYPES[yt]) and x.shape == y.shape == (5,)
        assert not np.shares_memory(x, y)
        x[:] = 1 if xt != "bf16" else cudot.bf16_from_float(1.0)
        y[:] = 1 if yt != "bf16" else cudot.bf16_from_float(1.0)
        assert ctx.dot() == 5.0


# --- release by the finalizer alone ------------------------------------------------------------------
def resident_bytes():
    """The process's resident set (Linux)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        pytest.skip("needs Linux /proc/self/statm")


# Each buffer is above glibc's largest dynamic mmap threshold (32 MiB on 64-bit, see mallopt(3)), so
# malloc maps it on its own and free unmaps it at once: the resident set then shows exactly which buffers
# are still allocated, whatever malloc kept from earlier tests. Only every 32nd page is written: fast,
# and still 2.5 MiB resident per context.
FORGET_N = 5 << 20                  # float64 elements: 40 MiB per buffer
FORGET_STRIDE = 32 * 4096 // 8      # elements between two written ones


def make_unclosed_contexts(count):
    """count float64 contexts of FORGET_N elements, some pages of each buffer written, none closed. Every
    other one sits in a reference cycle, which only the cycle collector (gc.collect) can free."""
    contexts = []
    for i in range(count):
        ctx = cudot.Context(FORGET_N, "f64", memory="host")
        ctx.x[::FORGET_STRIDE] = 1.0
        ctx.y[::FORGET_STRIDE] = 2.0
        if i % 2:
            ctx.cycle = [ctx]  # ctx -> list -> ctx
        contexts.append(ctx)
    return contexts


def test_finalizer_releases_200_unclosed_contexts():
    rounds, per_round = 5, 40  # 200 contexts, never closed
    round_bytes = per_round * 2 * (FORGET_N // FORGET_STRIDE) * 4096  # resident per round: 100 MiB
    base = open_count()
    gc.collect()
    start = resident_bytes()
    after = []
    was_enabled = gc.isenabled()
    gc.disable()  # so that nothing but the gc.collect() below frees the cycles
    try:
        for r in range(rounds):
            contexts = make_unclosed_contexts(per_round)
            # The written pages are resident: had they leaked, the resident set would show it.
            assert resident_bytes() - start > round_bytes * 9 // 10, "not resident: the measurement is void"
            del contexts  # frees those outside a cycle (their finalizers run now, in CPython)
            assert open_count() == base + per_round // 2, "the cycles should wait for the collector"
            gc.collect()
            assert open_count() == base, f"round {r}: {open_count() - base} contexts not released"
            after.append(resident_bytes())
    finally:
        if was_enabled:
            gc.enable()
    # The resident set stays where the first round left it, where a leak would add 100 MiB per round.
    growth = max(after[1:]) - after[0]
    assert growth < round_bytes // 4, f"resident set grew by {growth >> 20} MiB over {rounds - 1} rounds " \
                                      f"(MiB after each round: {[a >> 20 for a in after]})"
