"""Tests of the cudot Python binding. Needs CUDOT_LIBRARY (or an installed libcudot).
With CUDOT_TEST_GPU=1 a GPU strategy that reports NO_DEVICE fails instead of being skipped."""
import gc
import math
import os
import pickle
import re
import subprocess
import sys
import threading
from fractions import Fraction

import numpy as np
import pytest

import cudot
from cudot import _context, _lib
from support import EPS, GPU_MEMORIES, GPU_REQUIRED, bits, build_fake_library, gpu_context_or_skip, open_count

DTYPES = [np.float32, np.float64]


def filled(n, dtype, x, y, **kw):
    ctx = cudot.Context(n, dtype=dtype, **kw)
    ctx.x[:] = x
    ctx.y[:] = y
    return ctx


def random_inputs(n, dtype, seed=1):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)


# --- loading ----------------------------------------------------------------------------------------
def test_version_major_matches():
    assert cudot.library_version().split(".")[0] == str(_lib.MAJOR)
    assert _lib.lib.cudot_version() // 10000 == _lib.MAJOR


@pytest.mark.parametrize("version", [0, 9999, 20000, 20305])
def test_other_major_refused(version):
    with pytest.raises(ImportError, match="major version 1"):
        _lib.check_major(version)


@pytest.mark.parametrize("version", [10000, 10203, 19999])
def test_same_major_accepted(version):
    _lib.check_major(version)


# --- construction and arguments ---------------------------------------------------------------------
@pytest.mark.parametrize("spelling, expected", [
    (np.float32, np.float32), ("f32", np.float32), ("F32", np.float32), ("float32", np.float32),
    (np.dtype("float32"), np.float32),
    (np.float64, np.float64), ("f64", np.float64), ("float64", np.float64), (np.dtype("f8"), np.float64),
])
def test_dtype_spellings(spelling, expected):
    with cudot.Context(4, dtype=spelling, memory="host") as ctx:
        assert ctx.dtype == expected
        assert ctx.x.dtype == expected and ctx.y.dtype == expected


@pytest.mark.parametrize("spelling", ["int32", np.int64, None, ">f4" if sys.byteorder == "little" else "<f4",
                                      "nonsense", 3])
def test_bad_dtype(spelling):
    with pytest.raises(TypeError, match="element type must be one of f32, f64"):
        cudot.Context(4, dtype=spelling)


def test_bad_arguments():
    with pytest.raises(ValueError):
        cudot.Context(-1)
    with pytest.raises(TypeError):
        cudot.Context(2.5)
    with pytest.raises(ValueError, match="unknown memory"):
        cudot.Context(4, memory="gpu")
    with pytest.raises(TypeError):
        cudot.Context(4, memory=4)
    with pytest.raises(ValueError, match="32-bit"):
        cudot.Context(4, device=2 ** 40)


@pytest.mark.parametrize("kwargs, status", [
    (dict(n=2 ** 62, memory="host"), cudot.Status.INVALID_ARGUMENT),      # byte count overflows
    (dict(n=2 ** 44, dtype="f64", memory="host"), cudot.Status.OUT_OF_MEMORY),  # 128 TiB
    (dict(n=8, memory="mapped", device=-3), cudot.Status.INVALID_ARGUMENT),  # below DEVICE_ALL (-1)
    (dict(n=8, memory="pinned", device=-3), cudot.Status.INVALID_ARGUMENT),
    (dict(n=8, memory="auto", device=-2 ** 31), cudot.Status.INVALID_ARGUMENT),
])
def test_init_failure_carries_library_message(kwargs, status):
    with pytest.raises(cudot.CudotError) as info:
        cudot.Context(**kwargs)
    e = info.value
    assert e.status == status and e.status.name == status.name
    assert e.status_name == "CUDOT_ERROR_" + status.name
    assert e.message and e.message in str(e)
    if kwargs.get("device", 0) < cudot.DEVICE_ALL:
        assert "CUDOT_DEVICE_ALL" in e.message


def test_device_all_constant_and_host_ignores_device():
    assert cudot.DEVICE_ALL == -1 and "DEVICE_ALL" in cudot.__all__
    for device in (cudot.DEVICE_ALL, -3):  # HOST ignores the device, even an invalid one
        with cudot.Context(8, memory="host", device=device) as ctx:
            assert ctx.memory == "host" and ctx.device is None


def test_error_object():
    e = cudot.CudotError(3, "why")
    assert e.status is cudot.Status.NO_DEVICE and str(e) == "CUDOT_ERROR_NO_DEVICE: why"
    copy = pickle.loads(pickle.dumps(e))
    assert (copy.status, copy.message) == (e.status, e.message)
    future = cudot.CudotError(99, "")
    assert future.status == 99 and future.status_name == "CUDOT_ERROR_UNKNOWN"


# --- views -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_views_are_the_library_buffers(dtype):
    import ctypes
    n = 1000
    with cudot.Context(n, dtype=dtype, memory="host") as ctx:
        x, y = ctx.inputs()
        assert x is ctx.x and y is ctx.y
        assert x.shape == y.shape == (n,) and x.dtype == y.dtype == dtype
        assert x.flags.writeable and x.flags.c_contiguous and not x.flags.owndata
        px, py = ctypes.c_void_p(), ctypes.c_void_p()
        assert _lib.lib.cudot_get_inputs(ctx._handle.ptr, ctypes.byref(px), ctypes.byref(py)) == 0
        assert (x.ctypes.data, y.ctypes.data) == (px.value, py.value)  # no copy
        assert x.ctypes.data % 64 == 0 and not np.shares_memory(x, y)
        x[:] = 3
        y[:] = 0
        y[7] = 2  # the library sees a single write through the view
        assert ctx.dot() == 6.0
        with pytest.raises(AttributeError):
            ctx.x = np.zeros(n, dtype)  # rebinding would silently not fill the buffer


def library_older_than(version):
    """Whether the loaded library's version is below `version` ("1.8.0")."""
    def parse(text):
        return tuple(int(part) for part in re.match(r"(\d+)\.(\d+)\.(\d+)", text).groups())
    return parse(cudot.library_version()) < parse(version)


# A string condition: evaluated when the test runs, so collecting the tests loads no library.
@pytest.mark.skipif("library_older_than('1.8.0')",
                    reason="the loaded library is older than 1.8.0, the first whose new contexts read zero")
@pytest.mark.parametrize("n", [1000, 5000, 30000])
def test_new_buffers_read_zero(n):
    """A context's x and y read zero from the start, also in memory that a freed context left full of 7s."""
    with cudot.Context(1000, memory="host") as ctx:
        ctx.x[:] = 7
        ctx.y[:] = 7
    del ctx  # no view left: close() freed the buffers
    gc.collect()
    with cudot.Context(n, memory="host") as ctx:
        nonzero = np.count_nonzero(ctx.x), np.count_nonzero(ctx.y)
        ctx.x[:10] = 1
        ctx.y[:10] = 1
        result = ctx.dot()
    del ctx  # before asserting: a failure's traceback would keep the context alive past the leak check
    assert nonzero == (0, 0), f"nonzero elements of {n}: {nonzero[0]} in x, {nonzero[1]} in y"
    assert result == 10.0


def test_wrong_element_type_is_refused():
    with cudot.Context(8, dtype="f32", memory="host") as ctx:
        with pytest.raises(TypeError, match="x holds float32, not float64"):
            ctx.inputs(np.float64)
        assert ctx.inputs("f32")[0].dtype == np.float32
    with cudot.Context(8, dtype="f64", memory="host") as ctx:
        with pytest.raises(TypeError, match="x holds float64, not float32"):
            ctx.inputs("f32")


# --- results -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_integer_valued_data_is_exact(dtype):
    n = 100_003  # several tiles, the last one short
    rng = np.random.default_rng(7)
    xi, yi = rng.integers(-1000, 1001, n), rng.integers(-1000, 1001, n)
    with filled(n, dtype, xi, yi, memory="host") as ctx:
        for k in (0, 1, 8191, 8192, 8193, n):
            exact = int(np.dot(xi[:k], yi[:k]))  # int64: exact
            assert ctx.dot(k) == exact
        assert ctx.dot() == int(np.dot(xi, yi))


def test_f32_random_matches_exact_products_summed_in_double():
    n = 250_000
    x, y = random_inputs(n, np.float32)
    products = x.astype(np.float64) * y.astype(np.float64)  # exact: 24+24 bits fit in 53
    exact = math.fsum(products)
    bound = 64 * EPS * float(np.abs(products).sum())  # a few dozen roundings deep at most
    ld = np.sum(x.astype(np.longdouble) * y.astype(np.longdouble))
    with filled(n, np.float32, x, y, memory="host") as ctx:
        r = ctx.dot()
    assert abs(r - exact) <= bound
    assert abs(r - float(ld)) <= bound + abs(float(ld) - exact)
    # Float32 accumulation would miss by ~1e-7 relative; make sure the bound could catch that.
    assert bound < 1e-6 * float(np.abs(products).sum())


def test_f64_is_compensated():
    x = np.array([1e16, 1.0, -1e16])
    y = np.ones(3)
    # Plain double arithmetic, left to right, loses the 1 (np.dot may sum in another order, which keeps it).
    assert (x[0] * y[0] + x[1] * y[1]) + x[2] * y[2] != 1.0
    with filled(3, "f64", x, y, memory="host") as ctx:
        assert ctx.dot() == 1.0

    # Ill-conditioned random data against the exact rational sum: twice-the-precision accuracy.
    rng = np.random.default_rng(3)
    a = rng.standard_normal(1000) * 2.0 ** rng.integers(0, 60, 1000)
    b = rng.standard_normal(1000)
    x = np.concatenate([a, b, -a])
    y = np.concatenate([rng.standard_normal(1000), rng.standard_normal(1000), np.zeros(1000)])
    y[2000:] = y[:1000]
    exact = sum(Fraction(float(p)) * Fraction(float(q)) for p, q in zip(x, y))
    with filled(x.size, "f64", x, y, memory="host") as ctx:
        r = ctx.dot()
    abs_sum = float(np.abs(x * y).sum())
    bound = EPS * abs(float(exact)) + (x.size * EPS) ** 2 * abs_sum
    assert abs(Fraction(r) - exact) <= bound
    assert abs(float(exact)) > 1 and bound < 1e-3 * abs(float(exact))  # the check means something


@pytest.mark.parametrize("dtype", DTYPES)
def test_special_values(dtype):
    inf, nan = np.inf, np.nan
    cases = [([1, nan, 2], [1, 1, 1], "nan"), ([1, inf, 2], [1, 1, 1], inf),
             ([1, -inf, 2], [1, 1, 1], -inf), ([1, inf, 2], [1, 0, 1], "nan")]
    nan_bits = set()
    for xs, ys, expected in cases:
        with filled(3, dtype, xs, ys, memory="host") as ctx:
            r = ctx.dot()
            assert bits(ctx.dot()) == bits(r)
        if expected == "nan":
            assert math.isnan(r)
            nan_bits.add(bits(r))
        else:
            assert r == expected
    assert len(nan_bits) == 1  # always the same quiet NaN


@pytest.mark.parametrize("dtype", DTYPES)
def test_repeated_calls_are_bitwise_identical(dtype):
    n = 70_001
    x, y = random_inputs(n, dtype, seed=11)
    with filled(n, dtype, x, y, memory="host") as ctx:
        first = bits(ctx.dot())
        for _ in range(5):
            assert bits(ctx.dot()) == first
        assert bits(ctx.dot(n)) == first and bits(ctx.dot_n(n)) == first


@pytest.mark.parametrize("dtype", DTYPES)
def test_dot_n_equals_a_context_of_that_capacity(dtype):
    n = 20_000
    x, y = random_inputs(n, dtype, seed=5)
    with filled(n, dtype, x, y, memory="host") as big:
        for k in (0, 1, 1023, 8192, 8193, 19_999):
            with filled(k, dtype, x[:k], y[:k], memory="host") as small:
                assert bits(big.dot_n(k)) == bits(small.dot())


@pytest.mark.parametrize("dtype", DTYPES)
def test_host_and_auto_agree_bitwise(dtype):
    n = 50_000
    x, y = random_inputs(n, dtype, seed=9)
    with filled(n, dtype, x, y, memory="host") as host, filled(n, dtype, x, y) as auto:
        assert host.memory == "host" and host.device is None and host.capacity == n
        assert auto.memory in cudot.MEMORY_NAMES[1:]
        if GPU_REQUIRED:
            assert auto.memory != "host" and auto.device == 0
        else:
            assert (auto.device is None) == (auto.memory == "host")
        assert bits(host.dot()) == bits(auto.dot())
        assert bits(host.dot(1234)) == bits(auto.dot(1234))


def test_empty_context():
    with cudot.Context(0, memory="host") as ctx:
        assert ctx.capacity == 0 and ctx.x.shape == (0,) and ctx.y.shape == (0,)
        ctx.x[:] = 1  # writes nothing
        r = ctx.dot()
        assert r == 0.0 and math.copysign(1.0, r) == 1.0  # +0.0
        assert bits(ctx.dot_n(0)) == bits(0.0)
        with pytest.raises(cudot.CudotError) as info:
            ctx.dot_n(1)
        assert info.value.status == cudot.Status.INVALID_ARGUMENT


def test_dot_n_beyond_capacity():
    with cudot.Context(10, memory="host") as ctx:
        with pytest.raises(cudot.CudotError) as info:
            ctx.dot_n(11)
        e = info.value
        assert e.status == cudot.Status.INVALID_ARGUMENT == 1
        assert e.message == _lib.last_error(ctx._handle.ptr) and "11" in e.message
        assert str(e).startswith("CUDOT_ERROR_INVALID_ARGUMENT: ")
        with pytest.raises(ValueError):
            ctx.dot_n(-1)
        with pytest.raises(TypeError):
            ctx.dot_n(2.0)
        ctx.x[:] = np.arange(10)  # unspecified until filled: unfilled buffers held NaN on a GPU machine
        ctx.y[:] = 2
        assert ctx.dot_n(np.int64(10)) == ctx.dot() == 90  # numpy integers are integers too


# --- lifetime ----------------------------------------------------------------------------------------
def test_close_twice_and_use_after_close():
    ctx = cudot.Context(16, memory="host")
    base = open_count()
    ctx.close()
    assert ctx.closed and open_count() == base - 1  # no view alive: freed at once
    ctx.close()
    for use in (ctx.dot, lambda: ctx.dot(3), lambda: ctx.dot_n(3), lambda: ctx.x, lambda: ctx.y,
                ctx.inputs, lambda: ctx.memory, lambda: ctx.device, lambda: ctx.capacity, ctx.__enter__):
        with pytest.raises(ValueError, match="closed"):
            use()
    assert repr(ctx) == "<cudot.Context closed>" and ctx.dtype == np.float32


def test_with_block_closes():
    base = open_count()
    with cudot.Context(16, memory="host") as ctx:
        assert open_count() == base + 1
    assert ctx.closed and open_count() == base


def test_views_keep_memory_alive_after_close():
    base = open_count()
    with cudot.Context(100, dtype="f64", memory="host") as ctx:
        x, y = ctx.inputs()
        x[:] = np.arange(100)
        y[:] = 2
        part = x[10:20]
    del x  # `part` still refers to the same buffer
    gc.collect()
    assert ctx.closed and open_count() == base + 1
    assert part.tolist() == list(range(10, 20))
    part[:] = -1  # still our memory: writing is safe
    assert part.sum() == -10 and y.sum() == 200
    del part
    gc.collect()
    assert open_count() == base + 1  # y still alive
    del y
    assert open_count() == base  # CPython frees at the last reference, no gc pass needed


@pytest.mark.parametrize("n", [1000, 1 << 22])
def test_views_used_after_close_harm_nothing(n):
    """A view kept past close() keeps its buffer (the library frees it with the last view), so writing and
    reading it is safe; a context made meanwhile starts at zero, and the old view never reaches its values."""
    base = open_count()
    ctx = cudot.Context(n, memory="host")
    x, y = ctx.inputs()
    ctx.close()
    x[:] = 3
    y[:] = 5
    assert x[-1] == 3 and int(y.sum()) == 5 * n
    with cudot.Context(n, memory="host") as fresh:
        untouched = np.count_nonzero(fresh.x), np.count_nonzero(fresh.y)
        fresh.x[:] = 1
        fresh.y[:] = 2
        x[:] = 4  # the closed context's view again, while the new context lives
        y[:] = 4
        result = fresh.dot()
    del fresh, x, y
    gc.collect()
    assert untouched == (0, 0) and result == 2.0 * n
    assert open_count() == base  # the last view gone, the closed context's buffers are freed


def test_finalizer_releases_unclosed_contexts(capfd):
    base = open_count()
    ctx = cudot.Context(1000, memory="host")
    x = ctx.x
    del ctx
    assert open_count() == base + 1  # the view keeps it
    x[:] = 1
    del x
    cycle = [cudot.Context(1000, memory="host")]
    cycle.append(cycle)  # only the cycle collector can free this one
    del cycle
    gc.collect()
    assert open_count() == base
    assert capfd.readouterr() == ("", "")


def test_release_never_raises(capfd):
    def failing_deinit(ptr):
        raise RuntimeError("boom")
    cell, pointers = [None], {1234}
    _context._release(failing_deinit, 1234, cell, pointers)
    assert cell[0] == cudot.Status.INTERNAL and not pointers
    assert capfd.readouterr() == ("", "")


def test_context_cannot_be_pickled():
    with cudot.Context(4, memory="host") as ctx:
        with pytest.raises(TypeError, match="pickled"):
            pickle.dumps(ctx)


# --- threads -----------------------------------------------------------------------------------------
def run_threads(count, target):
    errors = []

    def wrapped(i):
        try:
            target(i)
        except BaseException as e:  # reported below, in the test's own thread
            errors.append(e)
    threads = [threading.Thread(target=wrapped, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_threads_share_one_context_and_own_others():
    n = 100_000
    x, y = random_inputs(n, np.float32, seed=2)
    with filled(n, np.float32, x, y, memory="host") as shared:
        expected = bits(shared.dot())

        def work(i):
            with filled(n, np.float32, x, y, memory="host") as own:
                for _ in range(10):
                    assert bits(shared.dot()) == expected
                    assert bits(own.dot()) == expected
        run_threads(4, work)


def test_close_while_other_threads_compute():
    n = 200_000
    x, y = random_inputs(n, np.float64, seed=4)
    ctx = filled(n, np.float64, x, y, memory="host")
    expected = bits(ctx.dot())
    started = threading.Barrier(5)

    def work(i):
        started.wait()
        while True:
            try:
                r = ctx.dot()
            except ValueError:  # closed: the only error allowed
                return
            assert bits(r) == expected
    closer = threading.Thread(target=lambda: (started.wait(), ctx.close()))
    closer.start()
    run_threads(4, work)
    closer.join()
    assert ctx.closed


# --- GPU strategies ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("memory", GPU_MEMORIES)
def test_gpu_strategy_matches_host_bitwise(memory, dtype):
    n = 300_007
    x, y = random_inputs(n, dtype, seed=13)
    with gpu_context_or_skip(n, dtype, memory) as gpu, filled(n, dtype, x, y, memory="host") as host:
        assert gpu.memory == memory and gpu.device == 0 and gpu.capacity == n
        gpu.x[:] = x
        gpu.y[:] = y
        for k in (None, 0, 1, 8193, n - 1):
            assert bits(gpu.dot(k)) == bits(host.dot(k))
        assert bits(gpu.dot()) == bits(gpu.dot())
        # Fresh data between calls must be seen (pinned copies, managed pages migrate back).
        gpu.y[:] = x
        host.y[:] = x
        assert bits(gpu.dot()) == bits(host.dot())


@pytest.mark.parametrize("memory", GPU_MEMORIES)
def test_device_all_matches_host_bitwise(memory):
    """device=DEVICE_ALL: one context over every visible GPU, reported as DEVICE_ALL, with the bits of HOST.
    Without a usable GPU it must be NO_DEVICE (skipped; a failure with CUDOT_TEST_GPU=1), never UNSUPPORTED."""
    n = 3 * 8192 * 40 + 5  # many tiles, so several GPUs each get a run; the last tile short
    x, y = random_inputs(n, np.float32, seed=17)
    with gpu_context_or_skip(n, np.float32, memory, device=cudot.DEVICE_ALL) as gpu, \
            filled(n, np.float32, x, y, memory="host") as host:
        assert gpu.memory == memory and gpu.device == cudot.DEVICE_ALL and gpu.capacity == n
        gpu.x[:] = x
        gpu.y[:] = y
        for k in (None, 0, 1, 8193, n // 3, n - 1):
            assert bits(gpu.dot(k)) == bits(host.dot(k))
        gpu.y[:] = x  # fresh data after a dot
        host.y[:] = x
        assert bits(gpu.dot()) == bits(host.dot())


LOOKUP = r"""
import ctypes.util, sys
ctypes.util.find_library = lambda name: sys.argv[1]  # the unversioned name resolves to another major
import cudot
print("loaded", cudot.library_version())
"""


def test_versioned_name_is_tried_before_another_major(tmp_path):
    """A libcudot of major 2 found under the unversioned name must not hide libcudot.so.1."""
    real = os.environ.get("CUDOT_LIBRARY")
    if not real:
        pytest.skip("needs CUDOT_LIBRARY")
    (tmp_path / "other").mkdir()
    fake = build_fake_library(tmp_path / "other" / "libcudot.so.2", 20000)
    good = tmp_path / "good"
    good.mkdir()
    os.symlink(os.path.realpath(real), good / "libcudot.so.1")
    env = {k: v for k, v in os.environ.items() if k != "CUDOT_LIBRARY"}
    env["LD_LIBRARY_PATH"] = str(good)
    run = subprocess.run([sys.executable, "-c", LOOKUP, str(fake)], env=env, capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("loaded 1.")
    # With only the other major around, the error names what was tried and why.
    env["LD_LIBRARY_PATH"] = str(tmp_path / "other")
    run = subprocess.run([sys.executable, "-c", LOOKUP, str(fake)], env=env, capture_output=True, text=True,
                         timeout=60)
    assert run.returncode != 0
    assert "major version 1" in run.stderr and "libcudot.so.2" in run.stderr
