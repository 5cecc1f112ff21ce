"""The short way to cudot_dot_arrays for the arrays met most: numpy arrays, CuPy arrays and PyTorch tensors.

A call through the protocols (`__cuda_array_interface__` builds a dict, `__dlpack__` a capsule to take
over and release) costs tens of microseconds; a GPU dot of a small vector costs about seven. So these
three are read from their own attributes instead, without importing CuPy or PyTorch: a type is one of
theirs when its module is `cupy`/`torch` (or below), that module is loaded already (sys.modules) and the
type is a subclass of its `ndarray`/`Tensor`. What is read is what the protocols would have said:

- numpy: the address of element 0, the dtype, the shape and strides; no stream.
- CuPy: `a.data.ptr`, `a.dtype`, `a.shape`, `a.strides`, and CuPy's current stream, which is what its
  `__cuda_array_interface__` names (0, the null stream, named as 1, the legacy default stream).
- PyTorch: `t.data_ptr()`, `t.dtype`, `t.shape`, `t.stride()`, and PyTorch's current stream on the
  tensor's GPU, read as a raw handle (the one `torch.cuda.current_stream(device).cuda_stream` gives).
  Only CUDA tensors that `__dlpack__` would export: not requiring grad, strided, without the negative
  bit.

The same attributes give a 2-D array's layout (vecdot's table of rows: `matrix_reader`).

A reader answers None for anything it does not read with certainty (another type, a dtype cudot
does not take, more than one dimension, a stride that is not whole elements, a tensor that requires
grad, ...): the caller then takes the protocols' path, which gives the same bits or the error.
Recognised types are remembered (per type: a handful of them); others are looked at again on each call.
"""
from __future__ import annotations

import ctypes
import platform
import struct
import sys
from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np

from ._operands import CODES, POINTER_MAX, stream_handle

# (address of element 0, CUDOT_* type, n, stride in elements, ready, device): `ready` is None (nothing
# to wait for: host memory) or a function of `device` giving the producer's current stream (never 0).
Operand = Tuple[int, int, int, int, Optional[Callable[[int], int]], int]
Reader = Callable[[Any], Optional[Operand]]
# A 2-D array: (address of element 0, CUDOT_* type, rows, n, row stride and element stride in elements,
# ready, device).
Matrix = Tuple[int, int, int, int, int, int, Optional[Callable[[int], int]], int]
MatrixReader = Callable[[Any], Optional[Matrix]]

# numpy dtype -> (CUDOT_* type, bytes per element), for the native-order types cudot takes. Looked up by
# the dtype object: no name is built.
NUMPY_TYPES: Dict[np.dtype, Tuple[int, int]] = {
    np.dtype(name): (code, np.dtype(name).itemsize) for name, code in CODES.items() if name != "bfloat16"}

# cudot_arrays as bytes: size, reserved, n, x (data, dtype, reserved, stride), y (the same), stream,
# x_ready, y_ready, mode, reserved2; native order and alignment, 96 bytes on 64-bit platforms (checked
# against the ctypes structure, where it is used).
ARRAYS_LAYOUT = struct.Struct("@IIN" + "Piiq" * 2 + "PPPii")


# --- numpy ------------------------------------------------------------------------------------------
def _address_of_data() -> Optional[int]:
    """The offset of `data` in numpy's array object (PyArrayObject_fields: the object header, then the
    pointer to element 0), if reading it there gives what `a.ctypes.data` gives (CPython only: there
    id() is the object's address). None otherwise: then `a.ctypes.data` is read, which costs ~1 us."""
    if platform.python_implementation() != "CPython":
        return None
    offset = object.__basicsize__
    probes = (np.arange(8.0)[3:], np.zeros(5, np.int8)[::-2], np.ones(1, np.float16))
    try:
        if all(ctypes.c_void_p.from_address(id(a) + offset).value == a.ctypes.data for a in probes):
            return offset
    except (ValueError, OSError):
        pass
    return None


_DATA_OFFSET = _address_of_data()


def _strided_reader(ready: Optional[Callable[[int], int]]) -> Reader:
    """The reader of numpy arrays (ready None: host memory) or of CuPy arrays (ready: CuPy's current
    stream), which show their layout alike: dtype, shape and strides in bytes."""
    types, at = NUMPY_TYPES, ctypes.c_void_p.from_address
    offset = _DATA_OFFSET

    def read(a: Any) -> Optional[Operand]:
        t = types.get(a.dtype)
        try:
            (n,), (step,) = a.shape, a.strides
        except ValueError:  # not 1-D
            return None
        if t is None:
            return None
        if n <= 1:  # any stride reads the same (the protocols' path passes 1)
            step = 1
        elif step % t[1]:
            return None
        else:
            step //= t[1]
        if ready is not None:  # CuPy
            data = a.data.ptr
        else:
            data = a.ctypes.data if offset is None else at(id(a) + offset).value
        return data, t[0], n, step, ready, 0
    return read


def _strided_matrix_reader(ready: Optional[Callable[[int], int]]) -> MatrixReader:
    """The same for 2-D numpy or CuPy arrays of at least one row of at least one element."""
    types, at = NUMPY_TYPES, ctypes.c_void_p.from_address
    offset = _DATA_OFFSET

    def read(a: Any) -> Optional[Matrix]:
        t = types.get(a.dtype)
        try:
            (rows, n), (row_step, step) = a.shape, a.strides
        except ValueError:  # not 2-D
            return None
        if t is None or rows < 1 or n < 1 or row_step % t[1] or step % t[1]:
            return None
        if ready is not None:  # CuPy
            data = a.data.ptr
        else:
            data = a.ctypes.data if offset is None else at(id(a) + offset).value
        return data, t[0], rows, n, row_step // t[1], step // t[1], ready, 0
    return read


# --- CuPy -------------------------------------------------------------------------------------------
def _cupy_reader(cupy: Any) -> Optional[Tuple[Reader, MatrixReader]]:
    try:
        current_stream = cupy.cuda.get_current_stream
    except AttributeError:
        return None

    def ready(device: int) -> int:
        # What CuPy's __cuda_array_interface__ (v3) names: its current stream, the null stream as 1.
        return current_stream().ptr or 1
    return _strided_reader(ready), _strided_matrix_reader(ready)


# --- PyTorch ----------------------------------------------------------------------------------------
def _torch_reader(torch: Any) -> Optional[Tuple[Reader, MatrixReader]]:
    try:
        strided = torch.strided
        codes = {getattr(torch, name): code for name, code in CODES.items() if hasattr(torch, name)}
        raw = getattr(getattr(torch, "_C", None), "_cuda_getCurrentRawStream", None)
        if raw is None:  # the public spelling: builds a Stream object, a few microseconds more
            current_stream = torch.cuda.current_stream

            def raw(device: int) -> int:
                return current_stream(device).cuda_stream
    except AttributeError:
        return None

    def ready(device: int) -> int:
        return raw(device) or 1  # PyTorch's default stream is the legacy one (0): named 1 here

    def read(t: Any) -> Optional[Operand]:
        # What __dlpack__ would refuse (grad, other layouts, the negative bit) goes the long way, to
        # get its error; so do tensors off the GPU.
        if t.requires_grad or not t.is_cuda or t.layout is not strided or t.is_neg():
            return None
        code = codes.get(t.dtype)
        shape = t.shape
        if code is None or len(shape) != 1:
            return None
        return t.data_ptr(), code, shape[0], t.stride(0), ready, t.get_device()

    def read_matrix(t: Any) -> Optional[Matrix]:
        if t.requires_grad or not t.is_cuda or t.layout is not strided or t.is_neg():
            return None
        code = codes.get(t.dtype)
        shape = t.shape
        if code is None or len(shape) != 2 or shape[0] < 1 or shape[1] < 1:
            return None
        row_step, step = t.stride(0), t.stride(1)
        return t.data_ptr(), code, shape[0], shape[1], row_step, step, ready, t.get_device()
    return read, read_matrix


# --- streams ----------------------------------------------------------------------------------------
def streams(x_ready_of: Optional[Callable[[int], int]], x_device: int, y_ready_of: Optional[Callable[[int], int]],
            y_device: int, stream: Any) -> Tuple[int, int, int]:
    """(the stream to work on, x's ready stream, y's ready stream) as the request takes them: the work
    stream is `stream`, or else the producer's current stream of the first CUDA operand (0, the legacy
    default stream, for host operands); a ready stream that is the work stream, or absent, is 0."""
    x_ready = None if x_ready_of is None else x_ready_of(x_device)
    if y_ready_of is x_ready_of and y_device == x_device:
        y_ready = x_ready
    else:
        y_ready = None if y_ready_of is None else y_ready_of(y_device)
    if stream is None:
        work = x_ready if x_ready is not None else (y_ready or 0)
    elif type(stream) is int and 0 <= stream <= POINTER_MAX:
        work = stream
    else:
        work = stream_handle(stream)
    legacy = work or 1  # NULL and 1 both name the legacy default stream
    return (work, 0 if x_ready is None or x_ready == legacy else x_ready,
            0 if y_ready is None or y_ready == legacy else y_ready)


# --- recognising types ------------------------------------------------------------------------------
_FRAMEWORKS = {"cupy": ("ndarray", _cupy_reader), "torch": ("Tensor", _torch_reader)}
READERS: Dict[type, Reader] = {np.ndarray: _strided_reader(None)}
MATRIX_READERS: Dict[type, MatrixReader] = {np.ndarray: _strided_matrix_reader(None)}


def learn(tp: type) -> Optional[Reader]:
    """The reader for objects of type tp, remembered (its matrix reader too); None (not remembered) for
    types read the long way."""
    root = getattr(tp, "__module__", None)
    if not isinstance(root, str):
        return None
    framework = _FRAMEWORKS.get(root.partition(".")[0])
    module = sys.modules.get(root.partition(".")[0]) if framework else None
    if framework is None or module is None:
        return None
    base = getattr(module, framework[0], None)
    if not isinstance(base, type) or not issubclass(tp, base):
        return None
    readers = framework[1](module)
    if readers is None:
        return None
    READERS[tp], MATRIX_READERS[tp] = readers
    return readers[0]


def reader(tp: type) -> Optional[Reader]:
    """The reader for objects of type tp, or None: they go through the protocols."""
    found = READERS.get(tp)
    return found if found is not None else learn(tp)


def matrix_reader(tp: type) -> Optional[MatrixReader]:
    """The 2-D reader for objects of type tp, or None: they go through the protocols."""
    found = MATRIX_READERS.get(tp)
    if found is None and learn(tp) is not None:
        found = MATRIX_READERS.get(tp)
    return found
