"""Dots on the caller's own arrays (library 1.7): numpy arrays, CuPy arrays, PyTorch tensors, anything with
`__cuda_array_interface__` or `__dlpack__`. The library reads them where they are (host or device memory,
any stride); nothing is copied. The result has the same bits as a HOST context holding the same values.
"""
from __future__ import annotations

import ctypes
import struct
import weakref
from typing import Any, List, Optional, Tuple

import numpy as np
import numpy.typing as npt

from . import _fast, _lib, _operands, _partials
from ._errors import CudotError, Status, check_without_context, invalid_argument, optional_function


def _prepared(x: Any, y: Any, stream: Any, out: Any = None,
              mode: int = _lib.MODE_CANONICAL) -> Tuple[_operands.Views, _lib.Arrays, Optional[int]]:
    """(the borrowed arrays, to close when the call is done; cudot_arrays for x and y; the address of out
    or None).

    The work stream is `stream`, else the stream x's (or y's) __cuda_array_interface__ names, else the
    legacy default stream. An operand whose producer names another stream is waited for through x_ready /
    y_ready; DLPack exporters (of out too) are asked for their data on the work stream."""
    borrowed = _operands.Views((("x", x), ("y", y)), _operands.stream_handle(stream))
    try:
        work, views = borrowed.work, borrowed.views
        (xd, xc, xn, xs), (yd, yc, yn, ys) = _operands.operand(views[0], "x"), _operands.operand(views[1], "y")
        if xn != yn:
            raise invalid_argument(f"cudot: x has {xn} elements and y {yn}: the lengths must be equal")
        ready = [v.ready if v.ready is not None and not _operands.same_stream(v.ready, work) else None
                 for v in views]
        arrays = _lib.Arrays(ctypes.sizeof(_lib.Arrays), 0, xn, _lib.Array(xd, xc, 0, xs), _lib.Array(yd, yc, 0, ys),
                             work or None, ready[0], ready[1], mode)
        address = None if out is None else _result_address(borrowed.add("out", out))
    except BaseException:
        borrowed.close()
        raise
    return borrowed, arrays, address


def _result_address(view: _operands.View) -> int:
    if view.type_name != "float64" or view.size != 1 or len(view.shape) > 1:
        raise TypeError(f"cudot: out must be one float64 element (shape (1,) or ()), not {view.type_name} of "
                        f"shape {view.shape}")
    if view.readonly:
        raise invalid_argument("cudot: out is read-only")
    return view.data


# The calls of dot that take the short way (see _fast) each borrow one (cudot_arrays, result) pair: taken
# from this list, filled by one pack_into, given back after the call. list.pop and list.append are atomic,
# so threads (and a signal handler that calls dot between the filling and the call) never share a pair.
_idle: List[Tuple[_lib.Arrays, ctypes.c_double]] = []
_pack_arrays = _fast.ARRAYS_LAYOUT.pack_into
_ARRAYS_SIZE = ctypes.sizeof(_lib.Arrays)
assert _fast.ARRAYS_LAYOUT.size == _ARRAYS_SIZE, "cudot_arrays: the struct layout and the ctypes structure differ"
_READERS = _fast.READERS


def dot(x: Any, y: Any, *, stream: Any = None, exact: bool = False) -> float:
    """The dot product of two 1-D arrays of equal length, read where they are, without copying: numpy
    arrays (any stride, negative and 0 included; read-only and unaligned ones too), objects with
    __cuda_array_interface__ (CuPy, PyTorch) or __dlpack__. Element types: float32, float64, float16,
    int8, uint8, bool, and bfloat16 (as_bf16 of uint16 bit patterns, or an array typed bfloat16). The
    same bits as a HOST context holding the same values, whoever computes.

    stream: the CUDA stream that GPU work is queued on (an int handle, a CuPy or PyTorch stream, or None:
    the current stream of the producer of the first CUDA operand (CuPy's, PyTorch's on the tensor's
    GPU, or the one a __cuda_array_interface__ names), else the legacy default stream). The call waits
    for the result; it is refused (UnsupportedError) on a stream that is being captured into a graph.

    exact: the correctly rounded dot (library 1.11, CUDOT_MODE_EXACT): the exact sum of the exact
    products, rounded once to the nearest float64, whatever the order of the elements. The CPU computes
    host arrays; the GPU computes CUDA arrays (library 1.12; 1.11 raises UnsupportedError for them)."""
    mode = _lib.MODE_EXACT if exact else _lib.MODE_CANONICAL
    # The short way (numpy, CuPy, PyTorch: see _fast); anything else, or anything unusual, is read
    # through the protocols by _dot_through_protocols, which gives the same bits or the error.
    rx = _READERS.get(type(x)) or _fast.learn(type(x))
    ox = None if rx is None else rx(x)
    if ox is not None:
        ry = _READERS.get(type(y)) or _fast.learn(type(y))
        oy = None if ry is None else ry(y)
        if oy is not None and oy[2] == ox[2]:
            xd, xc, n, xs, x_ready_of, x_device = ox
            yd, yc, _, ys, y_ready_of, y_device = oy
            work, x_ready, y_ready = _fast.streams(x_ready_of, x_device, y_ready_of, y_device, stream)
            try:
                arrays, result = _idle.pop()
            except IndexError:
                arrays, result = _lib.Arrays(), ctypes.c_double()
            try:
                _pack_arrays(arrays, 0, _ARRAYS_SIZE, 0, n, xd, xc, 0, xs, yd, yc, 0, ys, work, x_ready, y_ready,
                             mode, 0)
            except struct.error:  # a value out of its field's range: the long way says what is wrong
                return _dot_through_protocols(x, y, stream, mode)
            try:
                fn = _lib.lib.cudot_dot_arrays
            except AttributeError:
                fn = optional_function("cudot_dot_arrays")  # raises UnsupportedError for an old library
            status = fn(arrays, result)
            value = result.value
            _idle.append((arrays, result))
            if status:
                check_without_context(status)
            return value
    return _dot_through_protocols(x, y, stream, mode)


def _dot_through_protocols(x: Any, y: Any, stream: Any, mode: int = _lib.MODE_CANONICAL) -> float:
    """dot, with x and y read through __array_interface__, __cuda_array_interface__ or DLPack."""
    fn = optional_function("cudot_dot_arrays")
    result = ctypes.c_double()
    borrowed, arrays, _ = _prepared(x, y, stream, mode=mode)
    with borrowed:
        check_without_context(fn(ctypes.byref(arrays), ctypes.byref(result)))
    return result.value


def dot_async(x: Any, y: Any, out: Any, *, stream: Any = None) -> None:
    """Queue the dot of x and y (as in dot) on the stream and return at once: the result is written, in
    stream order, to out, one float64 element of device, managed or mapped memory of the operands' GPU
    (a CuPy array or a PyTorch tensor of shape (1,) or ()). Keep x, y and out alive until the stream
    has run it. May be captured into a CUDA graph. Operands only the CPU can read raise
    UnsupportedError."""
    fn = optional_function("cudot_dot_arrays_async")
    borrowed, arrays, address = _prepared(x, y, stream, out)
    with borrowed:
        check_without_context(fn(ctypes.byref(arrays), address))


def tile_partials(x: Any, y: Any, *, stream: Any = None, exact: bool = False) -> npt.NDArray[np.uint8]:
    """The partial sums of the tiles of x and y (arrays as in dot; element 0 starts a tile), as
    Context.tile_partials gives them: ceil(n / TILE_ELEMENTS) * PARTIAL_BYTES bytes for join_partials.

    exact=True (library 1.13): one exact partial of x and y instead, EXACT_PARTIAL_BYTES bytes whatever
    their length, for join_exact_partials; computed where dot(x, y, exact=True) would compute. True or
    False only (TypeError otherwise)."""
    mode = _partials.exact_mode(exact)
    fn = optional_function("cudot_tile_partials_arrays")
    borrowed, arrays, _ = _prepared(x, y, stream, mode=mode)
    with borrowed:
        out = _partials.exact_partial_buffer() if exact else _partials.partials_buffer(arrays.n)
        check_without_context(fn(ctypes.byref(arrays), out.ctypes.data))
    return out


def _byte_range(a: np.ndarray) -> Tuple[int, int]:
    """(first address, bytes) of the memory the elements of `a` span, whatever its strides."""
    low = high = a.ctypes.data
    for step, extent in zip(a.strides, a.shape):
        reach = step * (extent - 1)
        low, high = (low + reach, high) if reach < 0 else (low, high + reach)
    return low, (high - low + a.itemsize) if a.size else 0


def _unregister(unregister, address, array) -> Tuple[int, str]:
    # Called once, by close() or by the garbage collector: never raises. `array` is held until here, so
    # its memory stays allocated while registered.
    try:
        status = unregister(address)
        return status, (_lib.last_error(None) if status != Status.OK else "")
    except Exception as e:
        return Status.INTERNAL, str(e)


class Registration:
    """Host memory of a numpy array page-locked and mapped for every GPU (cudot_register_host), so that
    dots on arrays in it run at the bus's speed. Registering costs about as much as reading the memory
    several times: register once, dot many times. The registration holds the array, so its memory stays
    allocated until close() (or the end of the `with` block, or garbage collection) unregisters it."""

    def __init__(self, array: Any) -> None:
        if not isinstance(array, np.ndarray):
            raise TypeError(f"cudot: register_host takes a numpy array, not {type(array).__name__}")
        self.address, self.nbytes = _byte_range(array)
        self.array = array
        check_without_context(optional_function("cudot_register_host")(self.address, self.nbytes))
        self._finalizer = weakref.finalize(self, _unregister, _lib.lib.cudot_unregister_host, self.address, array)
        self._finalizer.atexit = False  # at exit the process's memory goes anyway

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

    def close(self) -> None:
        """Unregister the memory (wait for dots reading it first). Idempotent."""
        if self._finalizer.alive:
            status, message = self._finalizer()
            if status != Status.OK:
                raise CudotError.for_status(status, message)

    def __enter__(self) -> Registration:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{self.nbytes} bytes at {self.address:#x}"
        return f"<cudot.Registration {state}>"


def register_host(array: Any) -> Registration:
    """Page-lock and map the memory of a numpy array for every GPU (once; see Registration). Use as
    `with cudot.register_host(a): ...` or call .close() on the result."""
    return Registration(array)
