"""Helpers shared by the test files (pytest puts this folder on sys.path)."""
import math
import os
from fractions import Fraction

import numpy as np
import pytest

import cudot
from cudot import _context

GPU_REQUIRED = os.environ.get("CUDOT_TEST_GPU") == "1"
GPU_MEMORIES = ["pinned", "mapped", "managed"]
EPS = np.finfo(np.float64).eps
# Integers each type holds exactly, small enough that every partial sum in these tests stays exact.
RANGES = {"f32": (-2 ** 16, 2 ** 16), "f64": (-2 ** 16, 2 ** 16), "f16": (-2048, 2048), "bf16": (-256, 256),
          "i8": (-128, 127), "u8": (0, 255), "bool": (0, 1)}


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


def any_gpu_context_or_skip(n, dtype, memory, **kw):
    """A context on a GPU strategy, or on AUTO where it finds a GPU: skipped where AUTO resolves to HOST (no
    usable GPU), failed there instead if CUDOT_TEST_GPU=1; otherwise as gpu_context_or_skip."""
    if memory != "auto":
        return gpu_context_or_skip(n, dtype, memory, **kw)
    ctx = cudot.Context(n, dtype, memory="auto", **kw)
    if ctx.memory == "host":
        ctx.close()
        if GPU_REQUIRED:
            pytest.fail("CUDOT_TEST_GPU=1 but memory='auto' resolved to 'host'")
        pytest.skip("memory='auto' resolved to 'host': no usable GPU")
    return ctx


def put(view, name, values):
    """Write values that the type holds exactly into a buffer view (bf16 as bit patterns)."""
    view[:] = cudot.bf16_from_float(values) if name == "bf16" else values


def random_values(name, n, rng):
    if name in ("i8", "u8", "bool"):
        lo, hi = RANGES[name]
        return rng.integers(lo, hi + 1, n)
    return rng.standard_normal(n) * 4


def mapped_cudot_files():
    """The real paths of every libcudot* file mapped into this process (Linux), after loading the library."""
    cudot.library_version()
    with open("/proc/self/maps") as maps:
        paths = {line.split(None, 5)[-1].strip() for line in maps if "/libcudot" in line}
    return {p for p in paths if os.path.basename(p).startswith("libcudot")}


def build_fake_library(path, version, soname=None):
    """A shared library whose only function is cudot_version() returning `version` (skips without cc);
    with `soname`, the file carries that SONAME."""
    import shutil
    import subprocess
    import sys
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc or not sys.platform.startswith("linux"):
        pytest.skip("needs a C compiler and Linux")
    source = path.parent / (path.name + ".c")
    source.write_text(f"unsigned cudot_version(void) {{ return {version}; }}\n")
    link = [f"-Wl,-soname,{soname}"] if soname else []
    subprocess.run([cc, "-shared", "-fPIC", *link, "-o", str(path), str(source)], check=True)
    return path


def build_config_spy(directory):
    """bindings/testing/config_spy.c built against include/cudot.h: a library whose cudot_init refuses every
    request with a message spelling out the config it received. Skips without cc, or outside the source tree
    (test_wheel.sh runs a copy of these tests, without the header)."""
    import shutil
    import subprocess
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    source = os.path.join(here, "..", "..", "testing", "config_spy.c")
    include = os.path.join(here, "..", "..", "..", "include")
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc or not sys.platform.startswith("linux"):
        pytest.skip("needs a C compiler and Linux")
    if not (os.path.isfile(source) and os.path.isfile(os.path.join(include, "cudot.h"))):
        pytest.skip("needs the source tree (bindings/testing/config_spy.c and include/cudot.h)")
    path = os.path.join(str(directory), "libcudot_spy.so")
    subprocess.run([cc, "-shared", "-fPIC", "-I", include, "-o", path, source], check=True)
    return path


# --- own arrays (library 1.7) ---
NAMES = ("f32", "f64", "f16", "bf16", "i8", "u8", "bool")
NUMPY = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": np.uint16, "i8": np.int8,
         "u8": np.uint8, "bool": np.bool_}


def element_values(name, n, seed):
    """n values of type `name` as numpy holds them (bf16 as bit patterns); floats mix large and small
    magnitudes, so that another summation order would show in the bits."""
    rng = np.random.default_rng(seed)
    v = random_values(name, n, rng)
    if name in ("f32", "f64", "f16", "bf16"):
        v[::97] = (v[::97] * 1e4).clip(-6e4, 6e4)
    return cudot.bf16_from_float(v) if name == "bf16" else np.asarray(v).astype(NUMPY[name])


def strided(values, stride):
    """A view with the given stride (in elements) whose elements are `values` (stride 0: values[0] n times)."""
    n = len(values)
    if stride == 0:
        return np.broadcast_to(values[:1], (n,))
    base = np.zeros(max(n, 1) * abs(stride), dtype=values.dtype)
    view = base[::stride][:n]
    view[:] = values
    return view


def operand(view, name):
    return cudot.as_bf16(view) if name == "bf16" else view


def host_dot(x, xt, y, yt):
    """The reference: a HOST context holding the same values."""
    with cudot.Context(len(x), xt, memory="host", y_dtype=yt) as ctx:
        ctx.x[:], ctx.y[:] = x, y
        return ctx.dot()


# --- the exact mode (library 1.11) ---
def exact_value(x, y):
    """The exact dot of two float arrays, rounded once: +inf / -inf past the largest float64, as IEEE.
    Python's own exact arithmetic: the products summed as fractions.Fraction, and float(Fraction) rounds
    to nearest, ties to even."""
    total = sum((Fraction(float(a)) * Fraction(float(b)) for a, b in zip(x, y)), Fraction(0))
    try:
        return float(total)
    except OverflowError:
        return math.inf if total > 0 else -math.inf


def wide(rng, n, lo, hi):
    """n float64 values of random sign, with binary exponents drawn from [lo, hi] (a random.Random rng)."""
    return np.array([math.ldexp(rng.uniform(1, 2), rng.randint(lo, hi)) * rng.choice((-1.0, 1.0))
                     for _ in range(n)])
