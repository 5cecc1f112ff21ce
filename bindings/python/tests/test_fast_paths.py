"""The short ways of cudot.dot and cudot.vecdot (cudot/_fast.py) for numpy arrays, CuPy arrays and PyTorch
tensors, run on stand-ins over host memory (tests/standins.py): taken when they should be, never for
look-alikes, and giving the bits (and cudot_arrays / cudot_rows fields) of the protocols' path and of a
HOST context."""
import ctypes
import threading
import types

import numpy as np
import pytest

import cudot
import standins
from cudot import _arrays, _fast, _lib, _rows
from support import NAMES, bits, element_values, host_dot, strided

T = cudot.TILE_ELEMENTS
CUPY_NAMES = ("f32", "f64", "f16", "i8", "u8", "bool")
TORCH_DTYPES = {"f32": "float32", "f64": "float64", "f16": "float16", "bf16": "bfloat16", "i8": "int8",
                "u8": "uint8", "bool": "bool"}


@pytest.fixture
def frameworks():
    """The stand-in cupy and torch modules in sys.modules, their streams reset."""
    standins.CUPY.current = types.SimpleNamespace(ptr=0)
    standins.TORCH.streams.update({0: 0, 1: 0})
    standins.CUPY.ndarray.protocol_uses = standins.TORCH.Tensor.protocol_uses = 0
    with standins.installed(standins.CUPY, standins.TORCH):
        yield standins.CUPY, standins.TORCH


def protocol_uses():
    return standins.CUPY.ndarray.protocol_uses + standins.TORCH.Tensor.protocol_uses


def tensor(values, name, **kw):
    return standins.TORCH.Tensor(values, dtype=TORCH_DTYPES[name], **kw)


def through_protocols(x, xt, y, yt, stream=None):
    """The same dot the long way: __cuda_array_interface__ or DLPack (bf16 bits marked as such)."""
    wrap = {"bf16": cudot.as_bf16}
    return _arrays._dot_through_protocols(wrap.get(xt, lambda a: a)(x), wrap.get(yt, lambda a: a)(y), stream)


# --- taken, with the same bits ----------------------------------------------------------------------
@pytest.mark.parametrize("stride", [1, -1, 0, 3])
@pytest.mark.parametrize("yt", CUPY_NAMES)
@pytest.mark.parametrize("xt", CUPY_NAMES)
def test_cupy_arrays_take_the_short_way_with_the_same_bits(frameworks, xt, yt, stride):
    cupy, _ = frameworks
    xv, yv = strided(element_values(xt, T + 3, 1), stride), strided(element_values(yt, T + 3, 2), -stride)
    x, y = cupy.ndarray(xv), cupy.ndarray(yv)
    assert _fast.reader(type(x)) is not None
    got = cudot.dot(x, y)
    assert protocol_uses() == 0  # read from the attributes alone
    assert bits(got) == bits(host_dot(xv, xt, yv, yt)) == bits(through_protocols(x, xt, y, yt))
    assert protocol_uses() == 2


@pytest.mark.parametrize("stride", [1, 0, 3])
@pytest.mark.parametrize("yt", NAMES)
@pytest.mark.parametrize("xt", NAMES)
def test_torch_tensors_take_the_short_way_with_the_same_bits(frameworks, xt, yt, stride):
    xv, yv = strided(element_values(xt, T + 3, 3), stride), strided(element_values(yt, T + 3, 4), 1)
    x, y = tensor(xv, xt), tensor(yv, yt)
    assert _fast.reader(type(x)) is not None
    got = cudot.dot(x, y)  # bfloat16 tensors need no as_bf16
    assert protocol_uses() == 0
    assert bits(got) == bits(host_dot(xv, xt, yv, yt)) == bits(through_protocols(x, xt, y, yt))
    assert protocol_uses() == 2


@pytest.mark.parametrize("n", [0, 1, 2, T - 1, 100_000])
def test_lengths_and_mixes_of_the_three(frameworks, n):
    cupy, _ = frameworks
    xv, yv = element_values("f64", n, 5), element_values("f16", n, 6)
    want = bits(host_dot(xv, "f64", yv, "f16"))
    for x in (xv, cupy.ndarray(xv), tensor(xv, "f64")):
        for y in (yv, cupy.ndarray(yv), tensor(yv, "f16")):
            assert bits(cudot.dot(x, y)) == want, (type(x), type(y))
    assert protocol_uses() == 0


@pytest.mark.parametrize("a", [
    np.arange(10.0)[3:], np.arange(10.0)[::-1], np.arange(10.0)[::3], np.zeros(0, np.float32), np.ones(1, np.int8),
    np.broadcast_to(np.float32(2), (7,)), np.frombuffer(bytearray(41), np.float64, 5, 1),
    np.frombuffer(bytes(8), np.uint8),
], ids=["offset", "reversed", "stride 3", "empty", "one", "stride 0", "unaligned", "read-only"])
def test_numpy_arrays_are_read_where_ctypes_says(a):
    if _fast._DATA_OFFSET is None:
        pytest.skip("not CPython: numpy arrays are read through a.ctypes.data")
    data, code, n, stride, ready, _ = _fast.reader(np.ndarray)(a)
    assert (data, n, ready) == (a.ctypes.data, a.size, None)
    assert stride == (a.strides[0] // a.itemsize if a.size > 1 else 1)


def test_the_quick_numpy_address_is_used_on_cpython():
    import platform
    assert (_fast._DATA_OFFSET is not None) == (platform.python_implementation() == "CPython")


def test_a_torch_without_the_raw_stream_call_uses_current_stream():
    module = standins.TORCH_PUBLIC_STREAM
    module.streams.update({0: 0, 1: 31})
    with standins.installed(module):
        xv = element_values("f32", 100, 7)
        x = module.Tensor(xv, device=1)
        assert _fast.reader(type(x)) is not None
        assert bits(cudot.dot(x, x)) == bits(host_dot(xv, "f32", xv, "f32"))
        assert module.Tensor.protocol_uses == 0
        assert fields(x, x)[0] == dict(n=100, stream=31, x_ready=None, y_ready=None)


# --- look-alikes and unusual cases go the long way --------------------------------------------------
def _cupy_like(module_name):
    class Array(standins.CUPY.ndarray):  # the attributes and the protocol, under another module name
        pass
    Array.__module__ = module_name
    return Array


@pytest.mark.parametrize("module_name", ["mylib", "cupyx.sparse", "numpy", "cupy_like"])
def test_look_alikes_from_other_modules_take_the_long_way(frameworks, module_name):
    xv = element_values("f32", 100, 8)
    x = _cupy_like(module_name)(xv)
    assert _fast.reader(type(x)) is None
    assert bits(cudot.dot(x, x)) == bits(host_dot(xv, "f32", xv, "f32"))
    assert protocol_uses() == 2  # read through __cuda_array_interface__


def test_a_cupy_named_type_that_is_not_cupys_ndarray_takes_the_long_way(frameworks):
    class Impostor:  # module cupy, every attribute, but not a subclass of cupy.ndarray
        __module__ = "cupy"

        def __init__(self, a):
            self.a, self.data, self.dtype, self.shape, self.strides = a, types.SimpleNamespace(ptr=0), a.dtype, \
                a.shape, a.strides
            self.__cuda_array_interface__ = dict(version=3, shape=a.shape, typestr=a.dtype.str,
                                                 data=(a.ctypes.data, False), strides=None, stream=1)
    xv = element_values("f32", 100, 9)
    assert _fast.reader(Impostor) is None
    assert bits(cudot.dot(Impostor(xv), xv)) == bits(host_dot(xv, "f32", xv, "f32"))  # data.ptr (0) unread


def test_without_the_module_loaded_cupy_and_torch_types_take_the_long_way():
    # The stand-in modules are not in sys.modules here (nor are CuPy and PyTorch, unless installed).
    class Array(standins.CUPY.ndarray):
        pass
    Array.__module__ = "cupy"
    xv = element_values("f32", 100, 10)
    if _fast.reader(Array) is not None:
        pytest.skip("a real cupy module is loaded")
    before = standins.CUPY.ndarray.protocol_uses
    assert bits(cudot.dot(Array(xv), xv)) == bits(host_dot(xv, "f32", xv, "f32"))
    assert standins.CUPY.ndarray.protocol_uses == before + 1


@pytest.mark.parametrize("kw, error, match", [
    (dict(requires_grad=True), TypeError, "require"),  # DLPack refuses it: so must we
    (dict(is_cuda=False), None, None),  # a CPU tensor: DLPack's CPU path
    (dict(layout="sparse"), None, None),
    (dict(neg=True), None, None),
])
def test_tensors_dlpack_would_treat_differently_take_the_long_way(frameworks, kw, error, match):
    _, torch = frameworks
    if kw.get("layout") == "sparse":
        kw["layout"] = torch.sparse_coo
    xv = element_values("f32", 100, 11)
    x = tensor(xv, "f32", **kw)
    assert _fast.reader(type(x))(x) is None
    if error:
        with pytest.raises(error, match=match):
            cudot.dot(x, x)
    else:
        cudot.dot(x, x)  # the stand-in exports the plain values: here only the way taken is checked
    assert protocol_uses() >= 1


@pytest.mark.parametrize("make, error, match", [
    (lambda c, t: (c.ndarray(np.zeros((2, 5), np.float32)), c.ndarray(np.zeros(10, np.float32))),
     cudot.InvalidArgumentError, r"x must be 1-D, not of shape \(2, 5\)"),
    (lambda c, t: (t.Tensor(np.zeros(10, np.float32)), t.Tensor(np.zeros(9, np.float32))),
     cudot.InvalidArgumentError, "x has 10 elements and y 9"),
    (lambda c, t: (c.ndarray(np.zeros(10, np.int32)), np.zeros(10, np.float32)), TypeError, "x holds int32"),
    (lambda c, t: (np.zeros(10, np.float32), t.Tensor(np.zeros(10, np.int32))), TypeError, "y holds DLPack type"),
    (lambda c, t: (np.zeros(10, np.float32), c.ndarray(np.zeros(10, [("a", "f4"), ("b", "u1")])["a"])),
     cudot.InvalidArgumentError, "not a multiple of the element size"),
    (lambda c, t: (np.zeros(10, np.float32).astype(">f4"), t.Tensor(np.zeros(10, np.float32))), TypeError,
     "not in native byte order"),
], ids=["2-D", "lengths", "cupy int32", "torch int32", "partial stride", "byte order"])
def test_what_the_short_way_declines_gets_the_long_ways_error(frameworks, make, error, match):
    x, y = make(*frameworks)
    with pytest.raises(error, match=match):
        cudot.dot(x, y)


# --- streams ----------------------------------------------------------------------------------------
class Spy:
    """A library whose cudot_dot_arrays records the cudot_arrays it is given, and returns 0.0."""

    def __init__(self):
        self.seen = []

    def cudot_dot_arrays(self, arrays, result):
        self.seen.append({name: getattr(arrays, name) for name in ("n", "stream", "x_ready", "y_ready")})
        return 0


def fields(x, y, stream=None):
    """The stream fields the short way fills, and those the protocols' path fills, for the same call."""
    spy = Spy()
    real = _lib.lib
    _lib.lib = spy
    try:
        cudot.dot(x, y, stream=stream)
    finally:
        _lib.lib = real
    borrowed, arrays, _ = _arrays._prepared(x, y, stream)
    borrowed.close()
    return spy.seen[0], {name: getattr(arrays, name) for name in ("n", "stream", "x_ready", "y_ready")}


def test_cupy_streams_are_those_its_cuda_array_interface_names(frameworks):
    cupy, _ = frameworks
    a = np.zeros(4, np.float32)
    x, y = cupy.ndarray(a), cupy.ndarray(a)
    short, long = fields(x, y)  # CuPy's null stream: named 1, the legacy default stream
    assert short == long == dict(n=4, stream=1, x_ready=None, y_ready=None)
    cupy.current = types.SimpleNamespace(ptr=77)
    for stream, want in ((None, dict(stream=77, x_ready=None, y_ready=None)),
                         (99, dict(stream=99, x_ready=77, y_ready=77)),
                         (types.SimpleNamespace(ptr=77), dict(stream=77, x_ready=None, y_ready=None)),
                         (0, dict(stream=None, x_ready=77, y_ready=77))):
        short, long = fields(x, y, stream)
        assert short == long == dict(n=4, **want), stream
    short, _ = fields(a, x)  # a numpy x: y's producer gives the stream
    assert short == dict(n=4, stream=77, x_ready=None, y_ready=None)


def test_torch_streams_are_its_current_streams_on_the_tensors_gpus(frameworks):
    cupy, torch = frameworks
    a = np.zeros(4, np.float32)
    x = tensor(a, "f32")
    assert fields(x, a)[0] == dict(n=4, stream=1, x_ready=None, y_ready=None)  # the default: legacy
    torch.streams.update({0: 55, 1: 66})
    assert fields(x, x)[0] == dict(n=4, stream=55, x_ready=None, y_ready=None)
    assert fields(a, x)[0] == dict(n=4, stream=55, x_ready=None, y_ready=None)
    assert fields(x, x, stream=9)[0] == dict(n=4, stream=9, x_ready=55, y_ready=55)
    assert fields(x, tensor(a, "f32", device=1))[0] == dict(n=4, stream=55, x_ready=None, y_ready=66)
    cupy.current = types.SimpleNamespace(ptr=77)
    assert fields(cupy.ndarray(a), x)[0] == dict(n=4, stream=77, x_ready=None, y_ready=55)
    torch.streams[0] = 0  # the legacy stream, waited for as 1
    assert fields(x, x, stream=9)[0] == dict(n=4, stream=9, x_ready=1, y_ready=1)


@pytest.mark.parametrize("stream, error", [(-1, ValueError), ("s", TypeError), (True, TypeError),
                                           (2 ** 64, ValueError), (types.SimpleNamespace(ptr=-5), ValueError)])
def test_bad_streams_on_the_short_way(frameworks, stream, error):
    x = tensor(np.zeros(3, np.float32), "f32")
    with pytest.raises(error, match="stream"):
        cudot.dot(x, x, stream=stream)


# --- the call itself --------------------------------------------------------------------------------
def test_threads_get_their_own_results():
    values = [element_values("f64", 3000 + i, 20 + i) for i in range(8)]
    wants = [bits(host_dot(v, "f64", v[::-1], "f64")) for v in values]
    failures = []

    def run(i):
        for _ in range(300):
            if bits(cudot.dot(values[i], values[i][::-1])) != wants[i]:
                failures.append(i)
    threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == [] and len(_arrays._idle) <= 8


def test_an_error_of_the_library_on_the_short_way_has_its_message(frameworks):
    cupy, _ = frameworks
    fake = cupy.ndarray(np.zeros(10, np.float32))
    fake.data = types.SimpleNamespace(ptr=16)  # an address nobody maps: a device pointer without a GPU
    with pytest.raises(cudot.CudotError) as e:
        cudot.dot(fake, np.zeros(10, np.float32))
    assert e.value.status in (cudot.Status.INVALID_ARGUMENT, cudot.Status.NO_DEVICE) and e.value.message
    assert bits(cudot.dot(np.ones(3), np.ones(3))) == bits(3.0)  # and the next call is fine


def test_a_library_without_dot_arrays_is_unsupported(monkeypatch):
    class Old:
        def __init__(self, lib):
            self.lib = lib

        def __getattr__(self, name):
            if name == "cudot_dot_arrays":
                raise AttributeError(name)
            return getattr(self.lib, name)
    monkeypatch.setattr(_lib, "lib", Old(_lib.lib))
    with pytest.raises(cudot.UnsupportedError, match="lacks cudot_dot_arrays"):
        cudot.dot(np.ones(3), np.ones(3))


def test_the_struct_layout_matches_the_ctypes_structure():
    a = _lib.Arrays()
    _fast.ARRAYS_LAYOUT.pack_into(a, 0, ctypes.sizeof(a), 0, 5, 0x1000, 2, 0, -3, 0x2000, 6, 0, 7, 11, 12, 13, 1, 0)
    assert (a.size, a.n, a.x.data, a.x.dtype, a.x.stride, a.y.data, a.y.dtype, a.y.stride, a.stream, a.x_ready,
            a.y_ready, a.mode, a.reserved2) == (ctypes.sizeof(a), 5, 0x1000, 2, -3, 0x2000, 6, 7, 11, 12, 13, 1, 0)
    assert _fast.ARRAYS_LAYOUT.size == ctypes.sizeof(_lib.Arrays)


# --- vecdot's short way: tables of rows -------------------------------------------------------------
def table_of(kind, values, name, frameworks):
    cupy, _ = frameworks
    if kind == "numpy":
        return values
    return cupy.ndarray(values) if kind == "cupy" else tensor(values, name)


def long_way(monkeypatch, x, y, **kw):
    """vecdot with its short way declined: the protocols' path."""
    with monkeypatch.context() as m:
        m.setattr(_rows, "_vecdot_table", lambda *args: None)
        return cudot.vecdot(x, y, **kw)


LAYOUTS = {  # a table of 5 rows of 37 elements, as views of a larger array
    "rows": lambda a: a[:5, :37],
    "reversed rows": lambda a: a[4::-1, :37],
    "columns": lambda a: a[:37, :5].T,
    "every other element": lambda a: a[:5, :74:2],
    "one row repeated": lambda a: np.broadcast_to(a[0, :37], (5, 37)),
}


@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("pair", [("f32", "f32"), ("f64", "f32"), ("f16", "i8"), ("u8", "bool")])
@pytest.mark.parametrize("kind", ["numpy", "cupy", "torch"])
def test_vecdot_tables_take_the_short_way_with_each_rows_bits(frameworks, monkeypatch, kind, pair, layout, exact):
    xt, yt = pair
    xv = LAYOUTS[layout](element_values(xt, 80 * 80, 7).reshape(80, 80))
    yv = element_values(yt, 5 * 37, 8).reshape(5, 37)
    x, y = table_of(kind, xv, xt, frameworks), table_of(kind, yv, yt, frameworks)
    got = cudot.vecdot(x, y, exact=exact)
    assert protocol_uses() == 0  # read from the attributes alone
    assert got.dtype == np.float64 and got.shape == (5,)
    assert bits(got) == bits(long_way(monkeypatch, x, y, exact=exact))
    for i in range(5):
        want = cudot.dot(np.ascontiguousarray(xv[i]), yv[i], exact=exact)
        assert bits(got[i]) == bits(want)
    if not exact:
        assert bits(got[2]) == bits(host_dot(np.ascontiguousarray(xv[2]), xt, yv[2], yt))


@pytest.mark.parametrize("kind", ["numpy", "cupy", "torch"])
def test_vecdot_one_query_against_a_table_on_the_short_way(frameworks, monkeypatch, kind):
    q, table = element_values("f32", 300, 9), element_values("f32", 40 * 300, 10).reshape(40, 300)
    x, y = table_of(kind, q, "f32", frameworks), table_of(kind, table, "f32", frameworks)
    for a, b in ((x, y), (y, x)):
        before = protocol_uses()
        got = cudot.vecdot(a, b)
        assert protocol_uses() == before
        assert got.shape == (40,)
        assert bits(got) == bits(long_way(monkeypatch, a, b))
        assert all(bits(got[i]) == bits(cudot.dot(q, table[i])) for i in range(40))


@pytest.mark.parametrize("case", ["two vectors", "three dimensions", "other axis", "out given", "shapes differ",
                                  "empty table"])
def test_vecdot_calls_the_short_way_does_not_serve_take_the_long_way(frameworks, monkeypatch, case):
    cupy, _ = frameworks
    v = element_values("f64", 24, 11)
    x = {"two vectors": v, "three dimensions": v.reshape(2, 3, 4), "other axis": v.reshape(4, 6),
         "out given": v.reshape(4, 6), "shapes differ": v.reshape(4, 6), "empty table": v[:0].reshape(0, 6)}[case]
    y = x if case != "shapes differ" else v[:18].reshape(3, 6)
    kw = {"axis": 0} if case == "other axis" else {}
    if case == "out given":
        kw["out"] = np.empty(4)
    a, b = cupy.ndarray(x), cupy.ndarray(y)
    if case == "shapes differ":
        with pytest.raises(cudot.InvalidArgumentError):
            cudot.vecdot(a, b)
    else:
        got = cudot.vecdot(a, b, **kw)
        assert bits(got) == bits(np.asarray(long_way(monkeypatch, x, y, **kw)))
    assert protocol_uses() >= 1  # the long way read them


def test_the_rows_struct_layout_matches_the_ctypes_structure():
    r = _lib.Rows()
    _rows._ROWS_LAYOUT.pack_into(r, 0, ctypes.sizeof(r), 0, 5, 7, 0x1000, 2, 0, -3, 0x2000, 6, 0, 4, 11, -12, 0, 0, 0,
                                 13, 14, 15, 1, 0)
    assert (r.size, r.layout, r.count, r.n, r.x.data, r.x.dtype, r.x.stride, r.y.data, r.y.dtype, r.y.stride,
            r.x_row_stride, r.y_row_stride, r.stream, r.x_ready, r.y_ready, r.mode, r.reserved) == (
        ctypes.sizeof(r), 0, 5, 7, 0x1000, 2, -3, 0x2000, 6, 4, 11, -12, 13, 14, 15, 1, 0)
    assert not r.offsets and not r.x_rows and not r.y_rows
