"""vecdot and dot_segments on CUDA arrays of CuPy and PyTorch (library 1.9): one GPU computes the whole batch,
and every result must have the bits of cudot.dot on its own pair of rows (host copies, the CPU); with
exact=True (library 1.14) the bits of cudot.dot(..., exact=True) on those host copies. Skipped
where the framework, a GPU, or a library that can read device memory is missing (failed instead with
CUDOT_TEST_GPU=1 once the framework is there)."""
import numpy as np
import pytest

import cudot
from support import GPU_REQUIRED, bits


def _skip_or_fail(reason):
    if GPU_REQUIRED:
        pytest.fail(f"CUDOT_TEST_GPU=1 but {reason}")
    pytest.skip(reason)


def _probe(one):
    try:
        got = cudot.vecdot(one, one)
    except cudot.CudotError as e:
        _skip_or_fail(f"the library cannot dot rows in device memory here: {e}")
    assert got.tolist() == [1.0]


@pytest.fixture(scope="module")
def cp():
    cupy = pytest.importorskip("cupy")
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception:
        count = 0
    if count < 1:
        _skip_or_fail("CuPy finds no GPU")
    _probe(cupy.ones((1, 1), dtype=cupy.float64))
    return cupy


@pytest.fixture(scope="module")
def torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        _skip_or_fail("PyTorch finds no GPU")
    _probe(torch.ones((1, 1), dtype=torch.float64, device="cuda"))
    return torch


def _alone(x, y, axis=-1, exact=False):
    """Each pair of vectors of two numpy arrays dotted alone by cudot.dot (the CPU), in np.vecdot's shape."""
    x, y = np.moveaxis(x, axis, -1), np.moveaxis(y, axis, -1)
    shape = np.broadcast_shapes(x.shape[:-1], y.shape[:-1])
    xb, yb = np.broadcast_to(x, shape + x.shape[-1:]), np.broadcast_to(y, shape + y.shape[-1:])
    out = np.empty(shape, dtype=np.float64)
    for index in np.ndindex(shape):
        out[index] = cudot.dot(np.ascontiguousarray(xb[index]), np.ascontiguousarray(yb[index]), exact=exact)
    return out


def _same(got, want):
    assert got.shape == want.shape
    assert [bits(v) for v in got.reshape(-1)] == [bits(v) for v in want.reshape(-1)]


def _values(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(shape) * np.exp2(rng.integers(-20, 20, shape))
    return v.astype(dtype)


@pytest.mark.parametrize("n", [1, 32, 200, 1024, 3000, 8192, 20000])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_cupy_rows_of_every_length_class(cp, n, dtype):
    x, y = _values((37, n), dtype, n), _values((37, n), dtype, n + 1)
    _same(cudot.vecdot(cp.asarray(x), cp.asarray(y)), _alone(x, y))


def test_cupy_broadcast_query_against_a_table_and_an_axis(cp):
    q, table = _values((1000,), "float32", 1), _values((64, 1000), "float32", 2)
    _same(cudot.vecdot(cp.asarray(q), cp.asarray(table)), _alone(q[None, :], table))
    a, b = _values((5, 300, 7), "float64", 3), _values((300, 1), "float64", 4)
    _same(cudot.vecdot(cp.asarray(a), cp.asarray(b), axis=-2), _alone(a, b, axis=-2))


def test_cupy_strided_and_transposed_views(cp):
    a = _values((40, 2000), "float32", 5)
    d = cp.asarray(a)
    _same(cudot.vecdot(d[::2, ::3], d[1::2, ::3]), _alone(a[::2, ::3], a[1::2, ::3]))
    _same(cudot.vecdot(d.T[:, :30], d.T[:, 5:35], axis=0), _alone(a.T[:, :30], a.T[:, 5:35], axis=0))


def test_cupy_results_into_a_device_array_in_stream_order(cp):
    x, y = _values((3, 4, 513), "float32", 6), _values((4, 513), "float32", 7)
    out = cp.full((3, 4), -7.0, dtype=cp.float64)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        dx, dy = cp.asarray(x), cp.asarray(y)
        assert cudot.vecdot(dx, dy, out=out, stream=stream.ptr) is out
    stream.synchronize()
    _same(cp.asnumpy(out), _alone(x, y))
    with pytest.raises(cudot.InvalidArgumentError):
        cudot.vecdot(dx, dy, out=cp.empty((4, 3), dtype=cp.float64))
    with pytest.raises(cudot.InvalidArgumentError):
        cudot.vecdot(dx, dy, out=cp.empty((3, 4), dtype=cp.float32))


def test_cupy_segments(cp):
    rng = np.random.default_rng(8)
    lengths = rng.integers(0, 20000, 50)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    x, y = _values((int(offsets[-1]),), "float32", 9), _values((int(offsets[-1]),), "float32", 10)
    got = cudot.dot_segments(cp.asarray(x), cp.asarray(y), offsets)
    want = np.array([cudot.dot(x[a:b], y[a:b]) for a, b in zip(offsets[:-1], offsets[1:])])
    _same(got, want)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_torch_rows_host_and_device_results(torch, dtype):
    tdtype = getattr(torch, dtype)
    x = torch.randn(100, 1024, dtype=torch.float32).to(tdtype).cuda()
    y = torch.randn(100, 1024, dtype=torch.float32).to(tdtype).cuda()
    got = cudot.vecdot(x, y)
    as_np = (lambda t: t.float().cpu().numpy()) if dtype == "bfloat16" else (lambda t: t.cpu().numpy())
    if dtype != "bfloat16":  # bf16 has no numpy type: checked against the device rows one at a time
        _same(got, _alone(as_np(x), as_np(y)))
    want = np.array([cudot.dot(x[i], y[i]) for i in range(100)])
    _same(got, want)
    out = torch.empty(100, dtype=torch.float64, device="cuda")
    cudot.vecdot(x, y, out=out)
    torch.cuda.synchronize()
    _same(out.cpu().numpy(), want)


# --- exact=True (library 1.14): the CPU's exact bits ------------------------------------------------------
def _cancelling(shape, dtype, seed):
    """(x, y) of wide range whose products nearly cancel in pairs along the last axis, so that a row's sum
    rounded anywhere on the way shows in the bits."""
    span = {"float32": 40, "float64": 400}[dtype]
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 2.0 ** rng.integers(-span, span, shape)
    y = rng.standard_normal(shape) * 2.0 ** rng.integers(-span, span, shape)
    h = shape[-1] // 2
    x[..., 1:2 * h:2] = -x[..., 0:2 * h:2]
    y[..., 1:2 * h:2] = y[..., 0:2 * h:2] * (1 + 2.0 ** -20)
    return x.astype(dtype), y.astype(dtype)


KNOWN_F32 = np.array([1e16, 1, -1e16] * 100 + [3], dtype=np.float32)  # exact 103.0


@pytest.mark.parametrize("n", [1, 33, 3000, 20000])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cupy_exact_rows(cp, n, dtype):
    x, y = _cancelling((9, n), dtype, n)
    _same(cudot.vecdot(cp.asarray(x), cp.asarray(y), exact=True), _alone(x, y, exact=True))


def test_cupy_exact_query_against_a_table_and_known_answers(cp):
    q, table = _cancelling((2, 1000), "float32", 11)
    _same(cudot.vecdot(cp.asarray(q[0]), cp.asarray(table), exact=True), _alone(q[:1], table, exact=True))
    a, b = _cancelling((5, 300, 7), "float64", 12)
    _same(cudot.vecdot(cp.asarray(a), cp.asarray(b[0, :, :1]), axis=-2, exact=True),
          _alone(a, b[0, :, :1], axis=-2, exact=True))
    rows = np.stack([KNOWN_F32, KNOWN_F32[::-1], np.zeros_like(KNOWN_F32)])
    got = cudot.vecdot(cp.asarray(rows), cp.ones(len(KNOWN_F32), dtype=cp.float32), exact=True)
    assert got.tolist() == [103.0, 103.0, 0.0] and bits(got[2]) == bits(0.0)
    got = cudot.vecdot(cp.asarray([[1e308, 1e308], [1e300, 1e300]]), cp.asarray([10.0, -10.0]), exact=True)
    assert bits(got[0]) == bits(0.0) and got[1] == 0.0  # products that overflow, cancelling exactly


def test_cupy_exact_results_into_a_device_array(cp):
    x, y = _cancelling((3, 4, 513), "float32", 13)
    out = cp.full((3, 4), -7.0, dtype=cp.float64)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        assert cudot.vecdot(cp.asarray(x), cp.asarray(y), out=out, stream=stream.ptr, exact=True) is out
    stream.synchronize()
    _same(cp.asnumpy(out), _alone(x, y, exact=True))


def test_cupy_exact_segments(cp):
    offsets = np.array([0, 0, 1, 8193, 8193, 20_000, 50_000], dtype=np.int64)
    x, y = _cancelling((50_000,), "float64", 14)
    got = cudot.dot_segments(cp.asarray(x), cp.asarray(y), offsets, exact=True)
    want = np.array([cudot.dot(x[a:b], y[a:b], exact=True) for a, b in zip(offsets[:-1], offsets[1:])])
    _same(got, want)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_torch_exact_rows_host_and_device_results(torch, dtype):
    x, y = _cancelling((50, 1024), "float32" if dtype == "bfloat16" else dtype, 15)
    tdtype = getattr(torch, dtype)
    dx, dy = torch.from_numpy(x).to(tdtype).cuda(), torch.from_numpy(y).to(tdtype).cuda()
    # bfloat16 values are float32 values: the exact dot of the float32 copies is theirs.
    as_np = (lambda t: t.float().cpu().numpy()) if dtype == "bfloat16" else (lambda t: t.cpu().numpy())
    want = _alone(as_np(dx), as_np(dy), exact=True)
    _same(cudot.vecdot(dx, dy, exact=True), want)
    out = torch.empty(50, dtype=torch.float64, device="cuda")
    cudot.vecdot(dx, dy, out=out, exact=True)
    torch.cuda.synchronize()
    _same(out.cpu().numpy(), want)
