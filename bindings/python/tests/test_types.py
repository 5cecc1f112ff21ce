"""Element types and mixed pairs (library 1.1): every pair, bool masks, f16/bf16 values, GPU == HOST."""
import ctypes
import itertools
import math
import struct
import sys
from fractions import Fraction

import numpy as np
import pytest

import cudot
from cudot import _lib
from support import EPS, GPU_MEMORIES, RANGES, bits, gpu_context_or_skip, put, random_values

# The binding's names -> (CUDOT_* code, numpy dtype of the view). u8 and bool are both CUDOT_U8, so the
# 7 x 7 names below cover all 36 pairs of the library's six types.
VIEWS = {"f32": (1, np.float32), "f64": (2, np.float64), "f16": (3, np.float16), "bf16": (4, np.uint16),
         "i8": (5, np.int8), "u8": (6, np.uint8), "bool": (6, np.bool_)}
NAMES = list(VIEWS)
ALL_PATTERNS = np.arange(2 ** 16, dtype=np.uint32).astype(np.uint16)


def library_pointers(ctx):
    px, py = ctypes.c_void_p(), ctypes.c_void_p()
    assert _lib.lib.cudot_get_inputs(ctx._handle.ptr, ctypes.byref(px), ctypes.byref(py)) == 0
    return px.value, py.value


# --- every pair ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("xt, yt", list(itertools.product(NAMES, NAMES)))
def test_every_pair_with_integer_data_is_exact(xt, yt):
    n = 20_011  # three tiles, the last one short
    rng = np.random.default_rng(NAMES.index(xt) * 7 + NAMES.index(yt))
    xi, yi = (rng.integers(RANGES[t][0], RANGES[t][1] + 1, n) for t in (xt, yt))
    xi[-1], yi[-1] = RANGES[xt][0], RANGES[yt][0]  # the extremes are held too
    xi[0], yi[0] = RANGES[xt][1], RANGES[yt][1]
    with cudot.Context(n, dtype=xt, y_dtype=yt, memory="host") as ctx:
        assert ctx.dtypes == (xt, yt)
        assert ctx.type_codes == (VIEWS[xt][0], VIEWS[yt][0])
        assert (ctx.dtype, ctx.y_dtype) == (ctx.x.dtype, ctx.y.dtype) == (VIEWS[xt][1], VIEWS[yt][1])
        assert ctx.x.shape == ctx.y.shape == (n,)
        assert (ctx.x.ctypes.data, ctx.y.ctypes.data) == library_pointers(ctx)  # zero-copy
        put(ctx.x, xt, xi)
        put(ctx.y, yt, yi)
        for k in (0, 1, 8192, 8193, n - 1, n):
            assert ctx.dot(k) == int(np.dot(xi[:k], yi[:k]))  # int64 reference: exact
        assert ctx.dot() == int(np.dot(xi, yi))


@pytest.mark.parametrize("xt, yt", [("i8", "i8"), ("i8", "u8"), ("u8", "i8"), ("u8", "u8"), ("bool", "i8")])
def test_integer_pairs_are_exact_at_the_extremes(xt, yt):
    n = (1 << 20) + 3
    with cudot.Context(n, dtype=xt, y_dtype=yt, memory="host") as ctx:
        lo_x, hi_x = RANGES[xt]
        lo_y, hi_y = RANGES[yt]
        for a, b in ((lo_x, lo_y), (hi_x, hi_y), (lo_x, hi_y)):
            ctx.x[:] = a
            ctx.y[:] = b
            assert ctx.dot() == a * b * n
        ctx.x[:] = hi_x
        ctx.y[::2] = lo_y
        ctx.y[1::2] = hi_y
        assert ctx.dot() == hi_x * (lo_y * ((n + 1) // 2) + hi_y * (n // 2))


# --- bool masks ---------------------------------------------------------------------------------------
def test_float32_times_bool_mask():
    n = 100_003
    rng = np.random.default_rng(21)
    x = rng.standard_normal(n).astype(np.float32)
    mask = rng.random(n) < 0.3
    with cudot.Context(n, "f32", y_dtype=bool, memory="host") as masked, \
            cudot.Context(n, "f32", memory="host") as plain:
        assert masked.y.dtype == np.bool_ and masked.type_codes == (1, 6)
        masked.x[:] = x
        masked.y[:] = mask
        plain.x[:] = x
        plain.y[:] = mask.astype(np.float32)
        assert set(np.unique(masked.y.view(np.uint8))) == {0, 1}  # 0/1 bytes in the U8 buffer
        r = masked.dot()
        selected = x[mask].astype(np.float64)
        assert abs(r - math.fsum(selected)) <= 64 * EPS * float(np.abs(selected).sum())
        for k in (None, 1, 8193, n - 1):  # x * True is x, x * False is 0: the same exact products
            assert bits(masked.dot(k)) == bits(plain.dot(k))
        masked.y[:3] = [0, 2, -1]  # numpy stores any truthy value as 1
        assert masked.y[:3].view(np.uint8).tolist() == [0, 1, 1]
        masked.x[0] = np.nan  # a mask does not hide NaN: NaN * 0 is NaN
        assert math.isnan(masked.dot())


def test_other_bytes_in_a_bool_buffer_count_as_their_value():
    with cudot.Context(3, "i8", y_dtype="bool", memory="host") as ctx:
        ctx.x[:] = [1, 2, -3]
        ctx.y.view(np.uint8)[:] = [7, 1, 0]  # not through numpy's bool conversion: bytes as they are
        assert ctx.dot() == 9


# --- f16 and bf16 -------------------------------------------------------------------------------------
def one_by_one(dtype, patterns):
    """cudot's value of every 16-bit pattern of `dtype`, as pattern * 1.0 (F64) in a 1-element context."""
    out = np.empty(patterns.size)
    with cudot.Context(1, dtype=dtype, y_dtype="f64", memory="host") as ctx:
        ctx.y[0] = 1.0
        x = ctx.x.view(np.uint16)
        for i, p in enumerate(patterns):
            x[0] = p
            out[i] = ctx.dot()
    return out


def test_every_f16_pattern_reads_as_numpy_float16():
    expected = ALL_PATTERNS.view(np.float16).astype(np.float64)
    got = one_by_one("f16", ALL_PATTERNS)
    assert np.array_equal(got, expected, equal_nan=True)  # (-0.0 reads as 0.0: the sum starts at +0.0)


def test_every_bf16_pattern_reads_as_the_upper_half_of_a_float32():
    expected = np.array([struct.unpack("<f", struct.pack("<I", int(p) << 16))[0] for p in ALL_PATTERNS])
    got = one_by_one("bf16", ALL_PATTERNS)
    assert np.array_equal(got, expected, equal_nan=True)


def test_products_are_exact_in_double():
    f16_tiny, f16_max = np.uint16(0x0001).view(np.float16), np.float16(65504)
    bf16_tiny, bf16_max = np.uint16(0x0001), np.uint16(0x7F7F)  # 2^-133 and about 3.39e38
    cases = [(f16_tiny, bf16_tiny, 2.0 ** -24 * 2.0 ** -133),  # underflows in float32, not in double
             (f16_max, bf16_max, 65504.0 * float(cudot.bf16_to_float(bf16_max)))]  # overflows float32
    for a, b, expected in cases:
        with cudot.Context(1, "f16", y_dtype="bf16", memory="host") as ctx:
            ctx.x[0], ctx.y[0] = a, b
            assert expected != 0 and math.isfinite(expected)
            assert ctx.dot() == expected


@pytest.mark.parametrize("yt", ["f16", "f32", "i8"])
def test_f16_random_against_float64_reference(yt):
    n = 50_000
    rng = np.random.default_rng(31)
    x = (rng.standard_normal(n) * 8).astype(np.float16)
    y = random_values(yt, n, rng).astype(VIEWS[yt][1])
    products = x.astype(np.float64) * y.astype(np.float64)  # exact: 11 + 24 bits at most
    with cudot.Context(n, "f16", y_dtype=yt, memory="host") as ctx:
        ctx.x[:] = x
        ctx.y[:] = y
        r = ctx.dot()
    bound = 64 * EPS * float(np.abs(products).sum())
    assert abs(r - math.fsum(products)) <= bound
    assert abs(r - float(np.dot(x.astype(np.float64), y.astype(np.float64)))) <= 2 * bound
    assert bound < 1e-9 * float(np.abs(products).sum())  # far tighter than float16 or float32 sums


@pytest.mark.parametrize("yt", ["bf16", "f32", "f64"])
def test_bf16_random_against_float64_reference(yt):
    n = 50_000
    rng = np.random.default_rng(41)
    source = rng.standard_normal(n).astype(np.float32)
    x = cudot.bf16_from_float(source)
    xv = cudot.bf16_to_float(x).astype(np.float64)
    assert np.all(np.abs(xv - source) <= np.abs(source) * 2.0 ** -8)  # rounded to 8 significant bits
    y = random_values(yt, n, rng)
    y = cudot.bf16_from_float(y) if yt == "bf16" else y.astype(VIEWS[yt][1])
    yv = cudot.bf16_to_float(y).astype(np.float64) if yt == "bf16" else y.astype(np.float64)
    with cudot.Context(n, "bf16", y_dtype=yt, memory="host") as ctx:
        ctx.x[:] = x
        ctx.y[:] = y
        r = ctx.dot()
    exact = sum(Fraction(float(a)) * Fraction(float(b)) for a, b in zip(xv, yv)) if yt == "f64" else None
    products = xv * yv
    bound = 64 * EPS * float(np.abs(products).sum())
    reference = float(exact) if exact is not None else math.fsum(products)
    assert abs(r - reference) <= bound
    assert bound < 1e-9 * float(np.abs(products).sum())


# --- the bf16 helpers ---------------------------------------------------------------------------------
def f32_bits(b):
    return np.uint32(b).view(np.float32)


@pytest.mark.parametrize("value, expected", [
    (1.0, 0x3F80), (-2.0, 0xC000), (0.0, 0x0000), (-0.0, 0x8000), (np.inf, 0x7F80), (-np.inf, 0xFF80),
    (f32_bits(0x3F808000), 0x3F80),  # a tie rounds to the even neighbour: down
    (f32_bits(0x3F818000), 0x3F82),  # a tie rounds to the even neighbour: up
    (f32_bits(0x3F808001), 0x3F81), (f32_bits(0x3F807FFF), 0x3F80),
    (f32_bits(0x7F7FFFFF), 0x7F80),  # the largest float32 rounds to infinity
    (f32_bits(0x00008000), 0x0000), (f32_bits(0x00018000), 0x0002), (f32_bits(0x80000001), 0x8000),
])
def test_bf16_from_float_known_patterns(value, expected):
    got = cudot.bf16_from_float(value)
    assert got.dtype == np.uint16 and int(got) == expected


def test_bf16_nan_stays_nan_and_shapes_are_kept():
    nans = np.array([f32_bits(0x7FC00000), f32_bits(0x7F800001), f32_bits(0xFFFFFFFF)])
    b = cudot.bf16_from_float(nans)
    assert np.all(np.isnan(cudot.bf16_to_float(b))) and b[2] >> 15 == 1
    grid = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert cudot.bf16_from_float(grid).shape == (3, 4)
    assert np.array_equal(cudot.bf16_to_float(cudot.bf16_from_float(grid)), grid)
    with pytest.raises(TypeError, match="uint16"):
        cudot.bf16_to_float(grid)


def test_bf16_round_trip_of_every_pattern():
    values = cudot.bf16_to_float(ALL_PATTERNS)
    keep = ~np.isnan(values)
    assert keep.sum() == 2 ** 16 - 2 * 127
    assert np.array_equal(cudot.bf16_from_float(values[keep]), ALL_PATTERNS[keep])


def test_bf16_from_float_is_nearest_ties_to_even():
    rng = np.random.default_rng(51)
    raw = rng.integers(0, 2 ** 32, 200_000, dtype=np.uint64).astype(np.uint32)
    raw[:4] = [0x3F808000, 0x3F818000, 0x40008000, 0x00008000]  # ties among them
    f = raw.view(np.float32)
    f = f[np.isfinite(f) & (np.abs(f) < f32_bits(0x7F7F8000))]  # finite, and not rounding to infinity
    got = cudot.bf16_from_float(f)
    down = (f.view(np.uint32) >> 16).astype(np.uint16)  # truncation toward zero, and the next one out
    up = down + np.uint16(1)
    dist = [np.abs(cudot.bf16_to_float(c).astype(np.float64) - f.astype(np.float64)) for c in (down, up)]
    expected = np.where(dist[0] < dist[1], down, up)
    expected = np.where(dist[0] == dist[1], np.where(down % 2 == 0, down, up), expected)
    assert np.array_equal(got, expected)


# --- construction ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("spelling, name", [
    ("f16", "f16"), (np.float16, "f16"), ("float16", "f16"), ("bf16", "bf16"), ("BF16", "bf16"),
    ("bfloat16", "bf16"), ("i8", "i8"), (np.int8, "i8"), ("int8", "i8"), ("u8", "u8"), (np.uint8, "u8"),
    ("uint8", "u8"), ("bool", "bool"), (bool, "bool"), (np.bool_, "bool"), ("?", "bool"), (float, "f64"),
])
def test_type_spellings(spelling, name):
    with cudot.Context(4, dtype="f32", y_dtype=spelling, memory="host") as ctx:
        assert ctx.dtypes == ("f32", name) and ctx.y.dtype == VIEWS[name][1]
    with cudot.Context(4, dtype=spelling, memory="host") as ctx:  # y_dtype None: the same as dtype
        assert ctx.dtypes == (name, name) and ctx.type_codes == (VIEWS[name][0],) * 2


@pytest.mark.parametrize("spelling", [np.uint16, "uint16", np.int16, "int32", np.complex64, np.longdouble,
                                      ">f2" if sys.byteorder == "little" else "<f2", "f8x", 3])
def test_bad_types(spelling):
    for kw in (dict(dtype=spelling), dict(y_dtype=spelling)):
        with pytest.raises(TypeError, match="bf16 only by name"):
            cudot.Context(4, memory="host", **kw)


def test_config_grows_as_cudot_h_says():
    # cudot.h: 16 bytes in 1.0, 20 in 1.1 (ending at y_dtype), 24 from 1.5 (ending at wait_ms), 32 from 1.10
    # (ending at rows), 40 since 1.13 (ending at reserved, after mode). A caller that says 20 in `size` still
    # gets y_dtype read and wait_ms left at its default; one that says 24 gets one row, whatever follows; one
    # that says 32 the canonical mode.
    assert (_lib.Config.y_dtype.offset, _lib.Config.wait_ms.offset, _lib.Config.rows.offset, _lib.Config.mode.offset,
            _lib.Config.reserved.offset, ctypes.sizeof(_lib.Config)) == (16, 20, 24, 32, 36, 40)
    ptr, rows, n = ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_size_t()
    assert _lib.lib.cudot_init(ctypes.byref(ptr), 8, ctypes.byref(_lib.Config(24, 1, 4, 0, 0, 0, 5))) == 0
    assert _lib.lib.cudot_get_rows(ptr, ctypes.byref(rows), ctypes.byref(n)) == 0
    assert _lib.lib.cudot_deinit(ptr) == 0
    assert (rows.value, n.value) == (1, 8)
    mode = ctypes.c_int32(-1)
    assert _lib.lib.cudot_init(ctypes.byref(ptr), 8, ctypes.byref(_lib.Config(32, 1, 4, 0, 0, 0, 0, 1))) == 0
    assert _lib.lib.cudot_get_mode(ptr, ctypes.byref(mode)) == 0
    assert _lib.lib.cudot_deinit(ptr) == 0
    assert mode.value == _lib.MODE_CANONICAL
    for y_dtype, expected in ((0, (1, 1)), (6, (1, 6)), (4, (1, 4))):
        ptr = ctypes.c_void_p()
        config = _lib.Config(20, 1, 4, 0, y_dtype)
        assert _lib.lib.cudot_init(ctypes.byref(ptr), 8, ctypes.byref(config)) == 0
        codes = ctypes.c_int32(), ctypes.c_int32()
        assert _lib.lib.cudot_get_dtypes(ptr, *map(ctypes.byref, codes)) == 0
        assert _lib.lib.cudot_deinit(ptr) == 0
        assert (codes[0].value, codes[1].value) == expected


def test_arguments_stay_backward_compatible():
    with cudot.Context(4, "f64", "host", 0) as ctx:  # positional as in 1.0
        assert ctx.dtypes == ("f64", "f64") and ctx.memory == "host"
    with pytest.raises(TypeError):
        cudot.Context(4, "f32", "host", 0, "bool")  # y_dtype is keyword-only


def test_inputs_checks_each_side():
    with cudot.Context(8, "f32", y_dtype="bool", memory="host") as ctx:
        assert ctx.inputs("f32", "bool")[1].dtype == np.bool_
        assert ctx.inputs(y_dtype=bool) == ctx.inputs()
        with pytest.raises(TypeError, match="y holds bool, not float32"):
            ctx.inputs("f32")  # y_dtype defaults to dtype, as in the constructor
        with pytest.raises(TypeError, match="y holds bool, not uint8"):
            ctx.inputs(y_dtype="u8")
        with pytest.raises(TypeError, match="x holds float32, not int8"):
            ctx.inputs("i8", "bool")
        assert "dtypes=('f32', 'bool')" in repr(ctx)
    with cudot.Context(8, "bf16", memory="host") as ctx:
        assert ctx.inputs("bf16")[0].dtype == np.uint16
        with pytest.raises(TypeError, match="x holds bf16, not float16"):
            ctx.inputs(np.float16)
        with pytest.raises(TypeError, match="bf16 only by name"):
            ctx.inputs(np.uint16)
    assert ctx.dtypes == ("bf16", "bf16") and ctx.dtype == np.uint16  # readable after close
    with pytest.raises(ValueError, match="closed"):
        ctx.type_codes


def test_a_library_without_get_dtypes(monkeypatch):
    class Without:  # the loaded library, minus the function a 1.0 library lacks
        def __init__(self, lib, missing):
            self._lib, self._missing = lib, missing

        def __getattr__(self, name):
            if name in self._missing:
                raise AttributeError(name)
            return getattr(self._lib, name)

    class Fake:  # stands in for a CDLL: any function, holding the declared signature
        def __getattr__(self, name):
            fn = type("Fn", (), {})()
            setattr(self, name, fn)
            return fn

    _lib._declare(Without(Fake(), {"cudot_get_dtypes"}))  # an optional function may be missing
    with pytest.raises(ImportError, match="cudot_dot_n"):
        _lib._declare(Without(Fake(), {"cudot_dot_n"}))  # a 1.0 function may not
    with cudot.Context(4, "f32", memory="host") as ctx:
        monkeypatch.setattr(_lib, "lib", Without(_lib.lib, {"cudot_get_dtypes"}))
        with pytest.raises(cudot.CudotError, match="lacks cudot_get_dtypes") as info:
            ctx.type_codes
        assert info.value.status == cudot.Status.UNSUPPORTED
        ctx.x[:], ctx.y[:] = 2, 3
        assert ctx.dtypes == ("f32", "f32") and ctx.dot() == 24  # the rest works


def test_single_type_contexts_leave_y_dtype_zero(monkeypatch):
    seen = []
    real = _lib.lib

    class Spy:
        def __getattr__(self, name):
            return getattr(real, name)

        def cudot_init(self, ptr, n, config):
            seen.append(config._obj.y_dtype)
            return real.cudot_init(ptr, n, config)

    monkeypatch.setattr(_lib, "lib", Spy())
    for dtype, y_dtype in (("f32", None), ("u8", "bool"), ("f32", "f64")):
        with cudot.Context(4, dtype, memory="host", y_dtype=y_dtype) as ctx:
            assert ctx.type_codes == (VIEWS[dtype][0], VIEWS[y_dtype or dtype][0])
    assert seen == [0, 0, 2]  # so that a 1.0 library, which knows no y_dtype, still accepts the first two


# --- GPU strategies -----------------------------------------------------------------------------------
@pytest.mark.parametrize("xt, yt", [("f32", "bool"), ("f16", "bf16"), ("i8", "u8"), ("f64", "i8"),
                                    ("bf16", "f32"), ("u8", "f16")])
@pytest.mark.parametrize("memory", GPU_MEMORIES)
def test_gpu_mixed_pair_matches_host_bitwise(memory, xt, yt):
    n = 300_007
    rng = np.random.default_rng(61)
    x, y, y2 = random_values(xt, n, rng), random_values(yt, n, rng), random_values(yt, n, rng)
    with gpu_context_or_skip(n, xt, memory, y_dtype=yt) as gpu, \
            cudot.Context(n, xt, y_dtype=yt, memory="host") as host:
        assert gpu.memory == memory and gpu.device == 0 and gpu.dtypes == (xt, yt)
        for ctx in (gpu, host):
            put(ctx.x, xt, x)
            put(ctx.y, yt, y)
        for k in (None, 0, 1, 8193, n - 1):
            assert bits(gpu.dot(k)) == bits(host.dot(k))
        put(gpu.y, yt, y2)  # fresh data must be seen (pinned copies, managed pages migrate back)
        put(host.y, yt, y2)
        assert bits(gpu.dot()) == bits(host.dot())
