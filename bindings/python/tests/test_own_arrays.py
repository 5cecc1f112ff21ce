"""Dots on the caller's own arrays (library 1.7), on host memory: numpy arrays of every type pair, stride,
length and layout, and stand-ins for the CUDA protocols (__cuda_array_interface__, __dlpack__) over host
memory. Every result is compared bit for bit with a HOST context holding the same values."""
import ctypes
import gc
import sys

import numpy as np
import pytest

import cudot
from cudot import _arrays, _lib
from support import NAMES, bits, element_values, host_dot, operand, strided

STRIDES = [(1, 1), (-1, -1), (0, 0), (3, 3), (-1, 3), (0, -2)]
T = cudot.TILE_ELEMENTS


def check(x, xt, y, yt, **kw):
    got = cudot.dot(operand(x, xt), operand(y, yt), **kw)
    want = host_dot(x, xt, y, yt)
    assert isinstance(got, float) and bits(got) == bits(want), (got, want)
    return got


# --- numpy arrays -----------------------------------------------------------------------------------
@pytest.mark.parametrize("xs, ys", STRIDES)
@pytest.mark.parametrize("yt", NAMES)
@pytest.mark.parametrize("xt", NAMES)
def test_every_pair_and_stride_gives_the_bits_of_a_host_context(xt, yt, xs, ys):
    n = T + 1
    x = strided(element_values(xt, n, 1), xs)
    y = strided(element_values(yt, n, 2), ys)
    assert x.strides[0] == xs * x.itemsize and y.strides[0] == ys * y.itemsize
    check(x, xt, y, yt)


@pytest.mark.parametrize("stride", [1, -1, 0, 3])
@pytest.mark.parametrize("n", [0, 1, T - 1, T + 1, 100_000])
@pytest.mark.parametrize("xt, yt", [("f32", "f32"), ("f64", "f64"), ("f64", "f16"), ("bf16", "i8"), ("bool", "u8")])
def test_lengths(xt, yt, n, stride):
    got = check(strided(element_values(xt, n, n), stride), xt, strided(element_values(yt, n, n + 1), stride), yt)
    if n == 0:
        assert bits(got) == bits(0.0)


def test_a_repeated_value_is_the_dot_of_its_copies():
    x = np.broadcast_to(np.float32(0.1), (100_000,))
    y = element_values("f32", 100_000, 3)
    assert bits(cudot.dot(x, y)) == bits(cudot.dot(np.full(100_000, np.float32(0.1)), y))


@pytest.mark.parametrize("xt, yt", [("f32", "f32"), ("f64", "f64"), ("f16", "bool"), ("bf16", "f32")])
def test_nan_and_inf(xt, yt):
    def dot_with(special, where, other=1.0):
        x = element_values(xt, 3 * T, 4)
        y = element_values(yt, 3 * T, 5)
        x[where] = cudot.bf16_from_float(special) if xt == "bf16" else special
        y[where] = other
        return check(x[::-1], xt, y[::-1], yt)
    assert np.isnan(dot_with(np.nan, 7))
    assert dot_with(np.inf, T + 3) == np.inf
    assert dot_with(-np.inf, 2 * T) == -np.inf
    assert np.isnan(dot_with(np.inf, 5, other=0))  # Inf * 0


def test_read_only_arrays():
    x, y = element_values("f64", 5000, 6), element_values("f32", 5000, 7)
    x.setflags(write=False)
    ro = np.frombuffer(y.tobytes(), dtype=np.float32)  # over immutable bytes
    assert not x.flags.writeable and not ro.flags.writeable
    check(x, "f64", ro, "f32")
    check(x[::-2], "f64", ro[::-2], "f32")


@pytest.mark.parametrize("name", ["f32", "f64", "f16", "bf16"])
def test_unaligned_arrays(name):
    n = T + 17
    values = element_values(name, n, 8)
    raw = bytearray(values.nbytes + 1)
    x = np.frombuffer(raw, dtype=values.dtype, count=n, offset=1)  # one byte off its type's alignment
    x[:] = values
    assert x.ctypes.data % x.itemsize != 0 and not x.flags.aligned
    y = element_values("f64", n, 9)
    check(x, name, y, "f64")
    check(x[::-1], name, y, "f64")


def test_the_same_array_twice_and_slices_of_one_array():
    x = element_values("f32", 4 * T + 3, 10)
    check(x, "f32", x, "f32")
    check(x[1::2], "f32", x[::2][:len(x[1::2])], "f32")


def test_buffer_protocol_objects_are_read_in_place():
    values = element_values("u8", 1000, 11)
    raw = bytearray(values.tobytes())
    got = cudot.dot(raw, memoryview(raw))
    assert bits(got) == bits(host_dot(values, "u8", values, "u8"))


def test_bfloat16_typed_arrays_when_ml_dtypes_is_installed():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bits16 = element_values("bf16", 1000, 12)
    y = element_values("f32", 1000, 13)
    assert bits(cudot.dot(bits16.view(ml_dtypes.bfloat16), y)) == bits(host_dot(bits16, "bf16", y, "f32"))


# --- stand-ins for the CUDA protocols, over host memory ---------------------------------------------
class CudaArrayInterface:
    """What CuPy shows through __cuda_array_interface__, over a numpy array's memory."""

    def __init__(self, a, stream=None, version=3, **extra):
        self.a = a  # keeps the memory alive
        self.__cuda_array_interface__ = dict(version=version, shape=a.shape, typestr=a.dtype.str,
                                             data=(a.ctypes.data, not a.flags.writeable),
                                             strides=None if a.flags.c_contiguous else a.strides, **extra)
        if version >= 3:
            self.__cuda_array_interface__["stream"] = stream


class DLPackExporter:
    """A DLPack producer over a numpy array that records the streams it was asked for."""

    def __init__(self, a, device=(1, 0)):
        self.a, self.device, self.streams = a, device, []

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.device


@pytest.mark.parametrize("stride", [1, -1, 0, 3])
@pytest.mark.parametrize("xt, yt", [("f32", "f64"), ("f16", "bool"), ("i8", "u8")])
def test_cuda_array_interface_over_host_memory(xt, yt, stride):
    x, y = strided(element_values(xt, T + 5, 14), stride), strided(element_values(yt, T + 5, 15), stride)
    want = host_dot(x, xt, y, yt)
    for version, stream in ((3, None), (3, 1), (3, 2), (2, None)):
        got = cudot.dot(CudaArrayInterface(x, stream, version), CudaArrayInterface(y, stream, version))
        assert bits(got) == bits(want)
    assert bits(cudot.dot(CudaArrayInterface(x), y)) == bits(want)  # mixed with a numpy array


@pytest.mark.parametrize("device", [(1, 0), (2, 0)])
@pytest.mark.parametrize("stride", [1, -1, 3])
def test_dlpack_over_host_memory_releases_the_capsule(device, stride):
    x, y = strided(element_values("f32", T + 5, 16), stride), element_values("f64", T + 5, 17)
    want = host_dot(x, "f32", y, "f64")
    exporter = DLPackExporter(x, device)
    before = sys.getrefcount(x)
    assert bits(cudot.dot(exporter, y)) == bits(want)
    assert bits(cudot.dot(y, exporter)) == bits(host_dot(y, "f64", x, "f32"))
    assert sys.getrefcount(x) == before  # numpy's deleter ran: its reference to x is gone
    # A CUDA producer is asked for the data on our stream (DLPack's 1: the legacy default stream); a host
    # one without a stream, as the protocol demands.
    assert exporter.streams == ([1, 1] if device[0] == 2 else [None, None])


class Failing(DLPackExporter):
    def __dlpack__(self, stream=None):
        raise RuntimeError("no export today")


@pytest.mark.parametrize("make_y", [
    lambda x: DLPackExporter(np.zeros(9, np.float32), (2, 0)),  # lengths differ
    lambda x: DLPackExporter(np.zeros((3, 3), np.float32), (2, 0)),  # 2-D
    lambda x: Failing(x, (2, 0)),  # its export fails, after x's
], ids=["lengths differ", "2-D", "export fails"])
def test_a_failed_call_releases_the_capsules_it_took(make_y):
    x = element_values("f32", 10, 27)
    exporter, y = DLPackExporter(x, (2, 0)), make_y(x)
    before = sys.getrefcount(x)
    with pytest.raises((TypeError, ValueError)):
        cudot.dot(exporter, y)
    assert exporter.streams == [1] and sys.getrefcount(x) == before


def test_dlpack_capsule_is_renamed_and_left_alone_by_its_destructor():
    x = element_values("f32", 100, 18)
    capsules = []

    class Keeper(DLPackExporter):
        def __dlpack__(self, stream=None):
            capsules.append(super().__dlpack__(stream))
            return capsules[-1]
    cudot.dot(Keeper(x), x)
    assert "used_dltensor" in repr(capsules[0])
    before = sys.getrefcount(x)
    del capsules[:]  # the destructor of a used capsule must not call the deleter a second time
    gc.collect()
    assert sys.getrefcount(x) == before


def test_a_bf16_dlpack_or_cuda_array_of_uint16_bits():
    x, y = element_values("bf16", 3000, 19), element_values("f16", 3000, 20)
    want = host_dot(x, "bf16", y, "f16")
    assert bits(cudot.dot(cudot.as_bf16(DLPackExporter(x)), y)) == bits(want)
    assert bits(cudot.dot(cudot.as_bf16(CudaArrayInterface(x)), CudaArrayInterface(y))) == bits(want)


class Both(DLPackExporter):
    """A producer with both protocols, as CuPy (CAI v3) and PyTorch (CAI v2) are."""

    def __init__(self, a, version):
        super().__init__(a, device=(2, 0))
        self.__cuda_array_interface__ = CudaArrayInterface(a, 1 if version >= 3 else None,
                                                           version).__cuda_array_interface__


def test_a_cuda_array_interface_with_a_stream_is_preferred_to_dlpack_and_one_without_is_not():
    x = element_values("f32", 1000, 25)
    want = host_dot(x, "f32", x, "f32")
    v3, v2 = Both(x, 3), Both(x, 2)
    assert bits(cudot.dot(v3, v3)) == bits(want) and v3.streams == []
    assert bits(cudot.dot(v2, v2)) == bits(want) and v2.streams == [1, 1]


class Refusing(DLPackExporter):
    """PyTorch's bfloat16 tensors: __cuda_array_interface__ raises, __dlpack__ works."""

    @property
    def __cuda_array_interface__(self):
        raise TypeError("unsupported type")


def test_a_failing_cuda_array_interface_falls_back_to_dlpack():
    x = element_values("bf16", 1000, 26)
    exporter = Refusing(x, device=(2, 0))
    assert bits(cudot.dot(cudot.as_bf16(exporter), x.astype(np.float32))) == bits(
        host_dot(x, "bf16", x.astype(np.float32), "f32"))
    assert exporter.streams == [1]


def prepared(x, y, stream=None):
    """The cudot_arrays the binding builds (its fields as a dict), without calling the library."""
    borrowed, a, _ = _arrays._prepared(x, y, stream)
    borrowed.close()
    return {name: getattr(a, name) for name in ("n", "stream", "x_ready", "y_ready")}, a


def test_streams_from_the_cuda_array_interface():
    a = np.zeros(4, np.float32)
    # No stream given: the producer's stream is the work stream; nothing to wait for.
    assert prepared(CudaArrayInterface(a, 77), a)[0] == dict(n=4, stream=77, x_ready=None, y_ready=None)
    # x's producer's stream is the work stream; y's other stream is waited for.
    assert prepared(CudaArrayInterface(a, 77), CudaArrayInterface(a, 88))[0] == dict(n=4, stream=77, x_ready=None,
                                                                                    y_ready=88)
    # A given stream that differs: both producers' streams are waited for.
    fields = prepared(CudaArrayInterface(a, 77), CudaArrayInterface(a, 2), stream=99)[0]
    assert fields == dict(n=4, stream=99, x_ready=77, y_ready=2)
    # NULL and 1 both name the legacy default stream: no wait between them.
    assert prepared(CudaArrayInterface(a, 1), a, stream=0)[0] == dict(n=4, stream=None, x_ready=None, y_ready=None)
    # "No sync needed" (None), and v2 without a stream, wait for nothing.
    assert prepared(CudaArrayInterface(a, None), CudaArrayInterface(a, version=2), stream=5)[0]["x_ready"] is None


class Stream:
    def __init__(self, **kw):
        self.__dict__.update(kw)


@pytest.mark.parametrize("stream, handle", [(None, None), (0, None), (5, 5), (Stream(ptr=6), 6),
                                            (Stream(cuda_stream=7), 7), (np.int64(8), 8)])
def test_stream_spellings(stream, handle):
    a = np.zeros(3, np.float32)
    exporter = DLPackExporter(a, device=(2, 0))
    fields, arrays = prepared(exporter, a, stream)
    assert fields["stream"] == handle and exporter.streams == [handle or 1]
    x = arrays.x
    assert (x.data, x.dtype, x.reserved, x.stride, arrays.size, arrays.reserved, arrays.mode) == (a.ctypes.data, 1, 0, 1, 96, 0, 0)


@pytest.mark.skipif(ctypes.sizeof(ctypes.c_void_p) != 8, reason="the header gives the sizes of 64-bit platforms")
def test_the_structs_have_the_sizes_of_the_header():
    assert (ctypes.sizeof(_lib.Array), ctypes.sizeof(_lib.Arrays)) == (24, 96)


# --- errors -----------------------------------------------------------------------------------------
F = np.zeros(10, np.float32)


@pytest.mark.parametrize("x, y, error, match", [
    (F, F[:9], cudot.InvalidArgumentError, "x has 10 elements and y 9"),
    (np.zeros((2, 5), np.float32), F, cudot.InvalidArgumentError, r"x must be 1-D, not of shape \(2, 5\)"),
    (F, np.float32(1), cudot.InvalidArgumentError, r"y must be 1-D, not of shape \(\)"),
    (np.zeros(10, np.complex64), F, TypeError, "x holds complex64; cudot takes float32"),
    (F, np.zeros(10, np.int32), TypeError, "y holds int32"),
    (np.zeros(10, np.uint16), F, TypeError, r"uint16.*cudot.as_bf16"),
    (cudot.as_bf16(F), F, TypeError, "as_bf16 takes an array of uint16 bit patterns; x holds float32"),
    (F.astype(F.dtype.newbyteorder()), F, TypeError, "not in native byte order"),
    (np.zeros(10, [("a", "f4"), ("b", "u1")])["a"], F, cudot.InvalidArgumentError,
     "stride of 5 bytes is not a multiple of the element size, 4 bytes"),
    ([1.0] * 10, F, TypeError, "expected a numpy array.*not list"),
    (F, 3.0, TypeError, "not float"),
    (CudaArrayInterface(F, stream=0), F, cudot.InvalidArgumentError, "stream 0, which the protocol disallows"),
    (CudaArrayInterface(F, mask=F), F, TypeError, "masked"),
    (DLPackExporter(np.zeros((2, 5), np.float32)), F, cudot.InvalidArgumentError, "x must be 1-D"),
])
def test_bad_operands(x, y, error, match):
    with pytest.raises(error, match=match):
        cudot.dot(x, y)


@pytest.mark.parametrize("stream, error", [(-1, ValueError), ("s", TypeError), (1.5, TypeError), (True, TypeError),
                                           (Stream(ptr="x"), TypeError)])
def test_bad_streams(stream, error):
    with pytest.raises(error, match="stream"):
        cudot.dot(F, F, stream=stream)


def test_errors_are_value_and_type_errors_of_the_package():
    with pytest.raises(ValueError) as e:
        cudot.dot(F, F[:3])
    assert isinstance(e.value, cudot.CudotError) and e.value.status == cudot.Status.INVALID_ARGUMENT


def test_memory_nobody_can_read_gives_the_library_status_not_a_crash():
    # An address no process maps (the first page): what a device pointer looks like without a GPU.
    fake = CudaArrayInterface(F)
    fake.__cuda_array_interface__["data"] = (16, False)
    with pytest.raises(cudot.CudotError) as e:
        cudot.dot(fake, F)
    assert e.value.status in (cudot.Status.INVALID_ARGUMENT, cudot.Status.NO_DEVICE) and e.value.message


def test_dot_async_of_host_arrays_is_refused_by_the_library():
    out = np.zeros(1)
    with pytest.raises(cudot.CudotError) as e:
        cudot.dot_async(F, F, out)
    assert e.value.message and out[0] == 0


def test_async_result_of_a_dlpack_producer_is_asked_for_on_the_work_stream():
    out = DLPackExporter(np.zeros(1), device=(2, 0))
    with pytest.raises(cudot.CudotError):  # host operands: refused by the library, after the export
        cudot.dot_async(CudaArrayInterface(F, stream=5), F, out)
    assert out.streams == [5]


@pytest.mark.parametrize("out, error, match", [
    (np.zeros(1, np.float32), TypeError, "out must be one float64 element"),
    (np.zeros(2), TypeError, r"shape \(2,\)"),
    (np.zeros(1)[:0], TypeError, "out must be one float64 element"),
    (np.frombuffer(bytes(8)), cudot.InvalidArgumentError, "out is read-only"),
    (CudaArrayInterface(np.frombuffer(bytes(8))), cudot.InvalidArgumentError, "out is read-only"),
])
def test_bad_async_results(out, error, match):
    with pytest.raises(error, match=match):
        cudot.dot_async(F, F, out)


# --- tile partials ----------------------------------------------------------------------------------
@pytest.mark.parametrize("xt, yt", [("f32", "f32"), ("f64", "f16"), ("bf16", "bool"), ("i8", "u8")])
def test_partials_of_pieces_join_to_the_dot_of_the_whole(xt, yt):
    n = 5 * T + 123
    x, y = strided(element_values(xt, n, 21), -1), strided(element_values(yt, n, 22), 2)
    want = host_dot(x, xt, y, yt)
    whole = cudot.tile_partials(operand(x, xt), operand(y, yt))
    assert whole.dtype == np.uint8 and whole.shape == (6 * cudot.PARTIAL_BYTES,)
    assert bits(cudot.join_partials(whole, xt, yt)) == bits(want)
    cuts = [0, 2 * T, 3 * T, n]
    pieces = [cudot.tile_partials(operand(x[a:b], xt), operand(y[a:b], yt)) for a, b in zip(cuts, cuts[1:])]
    assert bits(cudot.join_partials(np.concatenate(pieces), xt, yt)) == bits(want)


def test_partials_of_nothing():
    assert cudot.tile_partials(F[:0], F[:0]).shape == (0,)


# --- registered host memory -------------------------------------------------------------------------
def test_registered_memory_gives_the_same_bits():
    x, y = element_values("f32", 3 * T, 23), element_values("f64", 3 * T, 24)
    want = host_dot(x, "f32", y, "f64")
    with cudot.register_host(x) as reg, cudot.register_host(y[::-1]):
        assert reg.nbytes == x.nbytes and reg.address == x.ctypes.data and not reg.closed
        assert bits(cudot.dot(x, y)) == bits(want)
        assert bits(cudot.dot(x[::2], y[::2])) == bits(host_dot(x[::2], "f32", y[::2], "f64"))
    assert reg.closed
    reg.close()  # idempotent
    with cudot.register_host(x):  # released: the range can be registered again
        pass


def test_registration_spans_a_strided_array():
    a = np.zeros(100, np.float64)
    with cudot.register_host(a[::-3]) as reg:
        assert (reg.address, reg.nbytes) == (a[99 % 3:].ctypes.data, (99 - 99 % 3) * 8 + 8)


def test_overlapping_registration_is_refused_with_the_library_message():
    a = np.zeros(4096, np.float32)
    with cudot.register_host(a):
        with pytest.raises(cudot.InvalidArgumentError) as e:
            cudot.register_host(a[100:200])
        assert e.value.message


def test_a_dropped_registration_is_released_by_the_garbage_collector():
    a = np.zeros(4096, np.float32)
    cudot.register_host(a)  # dropped at once
    gc.collect()
    cudot.register_host(a).close()


@pytest.mark.parametrize("obj, error", [([1.0], TypeError), (np.zeros(0), cudot.InvalidArgumentError)])
def test_bad_registrations(obj, error):
    with pytest.raises(error):
        cudot.register_host(obj)
