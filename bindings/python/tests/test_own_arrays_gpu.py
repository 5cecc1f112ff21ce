"""Dots on CUDA arrays of CuPy and PyTorch (library 1.7). Skipped where the framework, a GPU, or a library
that can read device memory is missing (failed instead with CUDOT_TEST_GPU=1 once the framework is
there). Every device result must have the bits of a HOST context holding host copies of the same values."""
import numpy as np
import pytest

import cudot
from cudot import _arrays, _fast
from support import GPU_REQUIRED, NAMES, bits, element_values, host_dot, operand

T = cudot.TILE_ELEMENTS
N = 3 * T + 5  # three whole tiles and a short one
CUPY_NAMES = ("f32", "f64", "f16", "i8", "u8", "bool")  # CuPy has no bfloat16
LAYOUTS = ["contiguous", "reversed", "stride 3", "stride 0"]


def _skip_or_fail(reason):
    if GPU_REQUIRED:
        pytest.fail(f"CUDOT_TEST_GPU=1 but {reason}")
    pytest.skip(reason)


def _probe(one):
    """Skip (or fail) unless the library computes a dot of the device array `one` (1.0 twice)."""
    try:
        got = cudot.dot(one, one)
    except cudot.CudotError as e:
        _skip_or_fail(f"the library cannot read device memory here: {e}")
    assert got == 1.0


@pytest.fixture(scope="module")
def cp():
    cupy = pytest.importorskip("cupy")
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # no driver
        count, why = 0, e
    else:
        why = "no device"
    if count < 1:
        _skip_or_fail(f"CuPy finds no GPU ({why})")
    _probe(cupy.ones(1, dtype=cupy.float64))
    return cupy


@pytest.fixture(scope="module")
def torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        _skip_or_fail("PyTorch finds no GPU")
    _probe(torch.ones(1, dtype=torch.float64, device="cuda"))
    return torch


# --- CuPy -------------------------------------------------------------------------------------------
def cupy_layout(cp, values, layout):
    """A device array holding `values` in the given layout (the same values whatever the layout)."""
    n = len(values)
    if layout == "contiguous":
        return cp.asarray(values)
    if layout == "reversed":
        return cp.asarray(values[::-1].copy())[::-1]
    if layout == "stride 3":
        base = cp.zeros(3 * n, dtype=values.dtype)
        base[::3] = cp.asarray(values)
        return base[::3]
    return cp.broadcast_to(cp.asarray(values[:1]), (n,))  # stride 0: values[0] n times


def host_values(values, layout):
    return np.broadcast_to(values[:1], values.shape) if layout == "stride 0" else values


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("yt", CUPY_NAMES)
@pytest.mark.parametrize("xt", CUPY_NAMES)
def test_cupy_every_type_pair_and_layout(cp, xt, yt, layout):
    xv, yv = element_values(xt, N, 1), element_values(yt, N, 2)
    x, y = cupy_layout(cp, xv, layout), cupy_layout(cp, yv, "contiguous" if layout == "stride 0" else layout)
    assert x.strides[0] == {"contiguous": 1, "reversed": -1, "stride 3": 3, "stride 0": 0}[layout] * x.itemsize
    got = cudot.dot(x, y)
    assert bits(got) == bits(host_dot(host_values(xv, layout), xt, yv, yt))
    assert bits(got) == bits(cudot.dot(cp.asnumpy(x), cp.asnumpy(y)))  # the host copies through cudot.dot


@pytest.mark.parametrize("n", [0, 1, T - 1, T + 1, 100_000, 2 ** 20 + 3])
@pytest.mark.parametrize("xt, yt", [("f32", "f32"), ("f64", "f64"), ("f16", "f32")])
def test_cupy_lengths(cp, xt, yt, n):
    xv, yv = element_values(xt, n, 3), element_values(yt, n, 4)
    assert bits(cudot.dot(cp.asarray(xv), cp.asarray(yv))) == bits(host_dot(xv, xt, yv, yt))


def test_cupy_mixed_with_a_numpy_array_or_refused_with_the_library_message(cp):
    xv, yv = element_values("f32", N, 5), element_values("f32", N, 6)
    try:
        got = cudot.dot(cp.asarray(xv), yv)  # pageable host memory: only where the GPU can read it
    except cudot.UnsupportedError as e:
        assert e.message
    else:
        assert bits(got) == bits(host_dot(xv, "f32", yv, "f32"))


def test_cupy_registered_host_memory(cp):
    xv, yv = element_values("f32", 2 ** 20 + 5, 7), element_values("f64", 2 ** 20 + 5, 8)
    with cudot.register_host(xv):
        assert bits(cudot.dot(xv, cp.asarray(yv))) == bits(host_dot(xv, "f32", yv, "f64"))
        assert bits(cudot.dot(xv, yv)) == bits(host_dot(xv, "f32", yv, "f64"))


def spinner(cp):
    """A kernel that keeps its stream busy for `cycles` clock cycles."""
    return cp.RawKernel(r'''extern "C" __global__ void spin(long long cycles) {
        long long start = clock64();
        while (clock64() - start < cycles) {}
    }''', "spin")


def late_fill(cp, stream, target, source):
    """On `stream`: spin for a while, then copy source into target, so a reader that does not wait for
    this stream sees the old contents."""
    with stream:
        spinner(cp)((1,), (1,), (np.int64(300_000_000),))
        target[...] = source


def test_cupy_side_stream_of_the_producer(cp):
    n = 2 ** 22
    xv, yv = element_values("f32", n, 9), element_values("f32", n, 10)
    want = host_dot(xv, "f32", yv, "f32")
    source, y = cp.asarray(xv), cp.asarray(yv)
    x = cp.zeros(n, dtype=cp.float32)
    side, other = cp.cuda.Stream(non_blocking=True), cp.cuda.Stream(non_blocking=True)
    cp.cuda.Device().synchronize()
    for stream in (None, side, other, side.ptr, other.ptr):  # None: the producer's stream (side)
        x.fill(0)
        cp.cuda.Device().synchronize()
        late_fill(cp, side, x, source)
        with side:  # the arrays' __cuda_array_interface__ names `side`; `other` waits for it
            got = cudot.dot(x, y, stream=stream)
        assert bits(got) == bits(want), stream


def test_cupy_async_into_a_device_array(cp):
    xv, yv = element_values("f16", N, 11), element_values("f64", N, 12)
    x, y = cp.asarray(xv)[::-1], cp.asarray(yv)[::-1]
    want = host_dot(xv[::-1], "f16", yv[::-1], "f64")
    stream = cp.cuda.Stream(non_blocking=True)
    for out in (cp.full(1, 7.0), cp.full((), 7.0)):
        cp.cuda.Device().synchronize()  # the arrays were written on the legacy stream, which `stream` skips
        with stream:
            cudot.dot_async(x, y, out, stream=stream)
        stream.synchronize()
        assert bits(float(out.get().reshape(-1)[0])) == bits(want)


def test_cupy_graph_capture_of_the_async_form_replays(cp):
    xv, yv = element_values("f32", N, 13), element_values("f32", N, 14)
    x, y, out = cp.asarray(xv), cp.asarray(yv), cp.zeros(1)
    stream = cp.cuda.Stream(non_blocking=True)
    cp.cuda.Device().synchronize()
    with stream:
        stream.begin_capture()
        try:
            cudot.dot_async(x, y, out, stream=stream)
            with pytest.raises(cudot.UnsupportedError) as e:  # a blocking call cannot wait inside a capture
                cudot.dot(x, y, stream=stream)
            assert e.value.message
        finally:
            graph = stream.end_capture()
    assert float(out.get()[0]) == 0.0  # captured, not run
    for seed in (15, 16):
        xv = element_values("f32", N, seed)
        x.set(xv)
        cp.cuda.Device().synchronize()
        graph.launch(stream)
        stream.synchronize()
        assert bits(float(out.get()[0])) == bits(host_dot(xv, "f32", yv, "f32"))


@pytest.mark.parametrize("xt, yt", [("f32", "f32"), ("f64", "bool")])
def test_cupy_partials_join_to_the_dot(cp, xt, yt):
    xv, yv = element_values(xt, 5 * T + 7, 17), element_values(yt, 5 * T + 7, 18)
    x, y = cp.asarray(xv), cp.asarray(yv)
    parts = [cudot.tile_partials(x[a:b], y[a:b]) for a, b in ((0, 2 * T), (2 * T, 5 * T + 7))]
    assert bits(cudot.join_partials(np.concatenate(parts), xt, yt)) == bits(host_dot(xv, xt, yv, yt))


def test_cupy_arrays_take_the_short_way_with_the_bits_of_the_protocols(cp):
    xv, yv = element_values("f32", N, 25), element_values("f16", N, 26)
    x, y = cp.asarray(xv)[::-1], cp.asarray(yv)[::-1]
    assert _fast.reader(type(x)) is not None and _fast.reader(type(x))(x) is not None  # CuPy's ndarray is known
    got = cudot.dot(x, y)
    want = host_dot(xv[::-1], "f32", yv[::-1], "f16")
    assert bits(got) == bits(_arrays._dot_through_protocols(x, y, None)) == bits(want)


# --- PyTorch ----------------------------------------------------------------------------------------
def torch_dtype(torch, name):
    return {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16, "bf16": torch.bfloat16,
            "i8": torch.int8, "u8": torch.uint8, "bool": torch.bool}[name]


def torch_tensor(torch, values, name):
    """A CUDA tensor holding `values` (bf16: bit patterns, stored as they are)."""
    if name == "bf16":
        return torch.from_numpy(values.view(np.int16).copy()).view(torch.bfloat16).cuda()
    return torch.from_numpy(values.copy()).cuda()


def torch_layout(torch, values, name, layout):
    t = torch_tensor(torch, values, name)
    if layout == "stride 3":
        base = torch.zeros(3 * len(values), dtype=t.dtype, device="cuda")
        base[::3] = t
        return base[::3]
    if layout == "stride 0":
        return t[:1].expand(len(values))
    return t


def test_torch_dtypes_match_the_names(torch):
    for name in NAMES:
        assert torch_tensor(torch, element_values(name, 4, 0), name).dtype == torch_dtype(torch, name)


@pytest.mark.parametrize("layout", ["contiguous", "stride 3", "stride 0"])
@pytest.mark.parametrize("yt", NAMES)
@pytest.mark.parametrize("xt", NAMES)
def test_torch_every_type_pair_and_layout(torch, xt, yt, layout):
    xv, yv = element_values(xt, N, 19), element_values(yt, N, 20)
    x, y = torch_layout(torch, xv, xt, layout), torch_layout(torch, yv, yt, "contiguous")
    assert x.stride(0) == {"contiguous": 1, "stride 3": 3, "stride 0": 0}[layout]
    got = cudot.dot(x, y)  # PyTorch's bfloat16 is a type of its own: no as_bf16 needed
    assert bits(got) == bits(host_dot(host_values(xv, layout), xt, yv, yt))
    assert bits(cudot.dot(operand(x, xt), operand(y, yt))) == bits(got)  # as_bf16 of bfloat16 changes nothing


def test_torch_side_stream_of_the_producer(torch):
    n = 2 ** 22
    xv, yv = element_values("f32", n, 21), element_values("f32", n, 22)
    want = host_dot(xv, "f32", yv, "f32")
    source, y = torch_tensor(torch, xv, "f32"), torch_tensor(torch, yv, "f32")
    x = torch.zeros(n, dtype=torch.float32, device="cuda")
    side, other = torch.cuda.Stream(), torch.cuda.Stream()
    for stream in (None, side, other):
        x.zero_()
        torch.cuda.synchronize()
        with torch.cuda.stream(side):  # DLPack: PyTorch makes our stream wait for `side`
            torch.cuda._sleep(300_000_000)
            x.copy_(source)
            got = cudot.dot(x, y, stream=stream)
        assert bits(got) == bits(want), stream


def test_torch_async_into_a_tensor(torch):
    xv, yv = element_values("bf16", N, 23), element_values("f32", N, 24)
    x, y = torch_tensor(torch, xv, "bf16"), torch_tensor(torch, yv, "f32")
    out = torch.full((1,), 7.0, dtype=torch.float64, device="cuda")
    stream = torch.cuda.Stream()
    torch.cuda.synchronize()  # written on the default stream; PyTorch's own streams do not wait for it
    with torch.cuda.stream(stream):
        cudot.dot_async(x, y, out, stream=stream)
    stream.synchronize()
    assert bits(out.item()) == bits(host_dot(xv, "bf16", yv, "f32"))


def test_torch_requires_grad_is_a_type_error(torch):
    x = torch.ones(10, device="cuda", requires_grad=True)
    with pytest.raises(TypeError, match="require"):
        cudot.dot(x, x)
    assert cudot.dot(x.detach(), x.detach()) == 10.0


def test_torch_tensors_take_the_short_way_with_the_bits_of_dlpack(torch):
    xv, yv = element_values("bf16", N, 27), element_values("f32", N, 28)
    x, y = torch_tensor(torch, xv, "bf16"), torch_layout(torch, yv, "f32", "stride 3")
    assert _fast.reader(type(x)) is not None and _fast.reader(type(y))(y) is not None  # torch.Tensor is known
    got = cudot.dot(x, y)
    assert bits(got) == bits(_arrays._dot_through_protocols(x, y, None)) == bits(host_dot(xv, "bf16", yv, "f32"))
    assert _fast.reader(type(x))(x.cpu()) is None  # CPU tensors go through DLPack


# --- the exact mode on the GPU (library 1.12) --------------------------------------------------------
def _exact_case(dtype, seed):
    """Values over many binades with cancellation, and their correctly rounded dot (Fraction)."""
    from fractions import Fraction
    rng = np.random.default_rng(seed)
    n = 5001
    scale = 10.0 ** rng.integers(-30, 30, n) if dtype == np.float64 else 2.0 ** rng.integers(-20, 20, n)
    x = (rng.standard_normal(n) * scale).astype(dtype)
    y = rng.standard_normal(n).astype(dtype)
    x[1:-1:2] = -x[0:-2:2]  # pairs that almost cancel
    y[1:-1:2] = y[0:-2:2] * dtype(1.5)
    want = float(sum(Fraction(float(a)) * Fraction(float(b)) for a, b in zip(x, y)))
    return x, y, want


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_exact_on_cupy_arrays(cp, dtype):
    x, y, want = _exact_case(dtype, 41)
    assert bits(cudot.dot(cp.asarray(x), cp.asarray(y), exact=True)) == bits(want)
    assert bits(cudot.dot(cp.asarray(x)[::-1], cp.asarray(y)[::-1], exact=True)) == bits(want)
    assert bits(cudot.dot(x, y, exact=True)) == bits(want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_exact_on_torch_tensors(torch, dtype):
    x, y, want = _exact_case(dtype, 43)
    tx, ty = torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()
    assert bits(cudot.dot(tx, ty, exact=True)) == bits(want)
