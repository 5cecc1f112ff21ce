"""The exception hierarchy: every status has its own CudotError subclass that is also the built-in
exception a Python programmer would expect, so both `except cudot.CudotError` and `except ValueError`
(MemoryError, NotImplementedError, ...) work. Load failures stay ImportError."""
import os
import pickle
import subprocess
import sys

import pytest

import cudot

# status: (the name of the class raised, the built-in it also is)
MAPPING = {
    cudot.Status.INVALID_ARGUMENT: ("InvalidArgumentError", ValueError),
    cudot.Status.OUT_OF_MEMORY: ("OutOfMemoryError", MemoryError),
    cudot.Status.NO_DEVICE: ("NoDeviceError", RuntimeError),
    cudot.Status.UNSUPPORTED: ("UnsupportedError", NotImplementedError),
    cudot.Status.CUDA: ("CudaError", RuntimeError),
    cudot.Status.INTERNAL: ("InternalError", RuntimeError),
}


@pytest.mark.parametrize("status", list(MAPPING))
def test_each_status_has_its_class(status):
    name, builtin = MAPPING[status]
    cls = getattr(cudot, name)
    e = cudot.CudotError.for_status(status, "why")
    assert type(e) is cls and isinstance(e, cudot.CudotError) and isinstance(e, builtin)
    assert e.status is status and e.message == "why" and str(e) == f"CUDOT_ERROR_{status.name}: why"
    copy = pickle.loads(pickle.dumps(e))  # e.g. across multiprocessing
    assert type(copy) is cls and (copy.status, copy.message) == (status, "why")
    assert cls.__name__ in cudot.__all__


def test_unknown_status_stays_a_plain_cudot_error():
    e = cudot.CudotError.for_status(99, "from a newer library")
    assert type(e) is cudot.CudotError and e.status == 99
    assert type(cudot.CudotError(1, "built directly")) is cudot.CudotError  # as before 1.5


def test_invalid_argument_from_the_library_is_a_value_error():
    with cudot.Context(8, memory="host") as ctx:
        ctx.x[:], ctx.y[:] = 1, 1
        with pytest.raises(ValueError, match="CUDOT_ERROR_INVALID_ARGUMENT") as info:
            ctx.dot(9)
        assert isinstance(info.value, cudot.InvalidArgumentError) and info.value.message


def test_out_of_memory_from_the_library_is_a_memory_error():
    with pytest.raises(MemoryError) as info:
        cudot.Context(2 ** 44, "f64", memory="host")  # 256 TiB of buffers: refused before allocating
    assert isinstance(info.value, cudot.OutOfMemoryError) and info.value.status == cudot.Status.OUT_OF_MEMORY


def test_no_device_from_the_library_is_a_runtime_error():
    try:
        ctx = cudot.Context(8, memory="pinned")
    except RuntimeError as e:
        assert isinstance(e, cudot.NoDeviceError) and e.message
    else:
        ctx.close()
        pytest.skip("a usable GPU: pinned memory does not fail here")


def test_existing_except_clauses_still_catch_everything():
    with pytest.raises(cudot.CudotError) as info:
        cudot.Context(2 ** 62, memory="host")  # the byte count overflows
    assert info.value.status == cudot.Status.INVALID_ARGUMENT


def test_load_failure_is_an_import_error_at_first_use(tmp_path):
    missing = str(tmp_path / "no-such-libcudot.so")
    code = ("import cudot\n"
            "try:\n    cudot.Context(4)\n"
            "except cudot.LibraryLoadError as e:\n"
            "    assert isinstance(e, ImportError) and not isinstance(e, cudot.CudotError)\n"
            "    print(e)\n")
    env = dict(os.environ, CUDOT_LIBRARY=missing, PYTHONPATH=os.pathsep.join(sys.path))
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert "CUDOT_LIBRARY" in run.stdout and missing in run.stdout
