"""The caller's own arrays as cudot sees them: where element 0 is, its element type, shape and strides (in
elements), whether it may be written, and on which stream its producer wrote it. Nothing is copied.

Three kinds of objects are read: numpy arrays (and objects numpy views without copying: anything with
`__array_interface__` or the buffer protocol), objects with `__cuda_array_interface__` (v3; CuPy, PyTorch,
Numba, ...), and objects with `__dlpack__`/`__dlpack_device__`. An object with both of the last two is
read through `__cuda_array_interface__`, unless reading that fails (PyTorch refuses it for bfloat16
tensors) or it is older than v3 and so names no stream (PyTorch's is v2): then through DLPack.
"""
from __future__ import annotations

import ctypes
import operator
from typing import Any, Callable, List, NamedTuple, Optional, Tuple

import numpy as np

from . import _dlpack
from ._errors import invalid_argument

# numpy's name of a type (DLPack's types are named the same way) -> CUDOT_* element type.
CODES = {"float32": 1, "float64": 2, "float16": 3, "bfloat16": 4, "int8": 5, "uint8": 6, "bool": 6}
SUPPORTED = "float32, float64, float16, bfloat16, int8, uint8, bool"
POINTER_MAX = 2 ** (8 * ctypes.sizeof(ctypes.c_void_p)) - 1


class View(NamedTuple):
    """One array: the address of element 0, numpy's name of its element type, its shape and strides (in
    elements), whether it is read-only, and `ready`: the stream its producer named (None: no wait)."""
    data: int
    type_name: str
    shape: Tuple[int, ...]
    strides: Tuple[int, ...]
    readonly: bool
    ready: Optional[int]

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))


class BF16Bits:
    """A uint16 array (numpy, CUDA or DLPack) whose elements are bfloat16 bit patterns; see as_bf16."""
    __slots__ = ("bits",)

    def __init__(self, bits: Any) -> None:
        self.bits = bits


def as_bf16(bits: Any) -> BF16Bits:
    """Mark a uint16 array of bfloat16 bit patterns (as bf16_from_float returns them, or a CUDA array of
    uint16) as bfloat16 for cudot.dot and the other calls on own arrays. Nothing is copied. An array
    typed bfloat16 (PyTorch's, ml_dtypes') passes unchanged."""
    return BF16Bits(bits)


def stream_handle(stream: Any, what: str = "stream") -> Optional[int]:
    """A cudaStream_t as an int: an int, an object with .ptr (CuPy) or .cuda_stream (PyTorch), or None."""
    if stream is None:
        return None
    for attribute in ("ptr", "cuda_stream"):
        if hasattr(stream, attribute):
            stream = getattr(stream, attribute)
            break
    if isinstance(stream, bool):
        raise TypeError(f"cudot: {what} must be an int handle or a stream object, not a bool")
    try:
        handle = operator.index(stream)
    except TypeError:
        raise TypeError(f"cudot: {what} must be an int (a cudaStream_t), an object with .ptr (CuPy) or "
                        f".cuda_stream (PyTorch), or None; got {type(stream).__name__}") from None
    if handle < 0:
        raise invalid_argument(f"cudot: {what} must not be negative, got {handle}")
    if handle > POINTER_MAX:  # ctypes would cut it to its low bits: another stream
        raise invalid_argument(f"cudot: {what} {handle:#x} does not fit a pointer")
    return handle


def same_stream(a: int, b: int) -> bool:
    """Whether two stream handles name the same stream: NULL (0) and cudaStreamLegacy (1) both name the
    legacy default stream."""
    return (a or 1) == (b or 1)


# numpy's names of the native types cudot takes, looked up by dtype: dtype.name costs microseconds.
_NAMES = {np.dtype(name): name for name in CODES if name != "bfloat16"}


def _type_name(dt: np.dtype) -> str:
    name = _NAMES.get(dt)
    if name is None:
        name = dt.name if dt.isnative else f"{dt.str} (not in native byte order)"
    return name


def _element_strides(byte_strides: Tuple[int, ...], shape: Tuple[int, ...], itemsize: int) -> Tuple[int, ...]:
    """Byte strides in elements; a dimension of one element or none gets 1, whatever its stride."""
    strides = []
    for step, extent in zip(byte_strides, shape):
        if extent <= 1:
            strides.append(1)
        elif step % itemsize:
            raise invalid_argument(f"cudot: a stride of {step} bytes is not a multiple of the element size, "
                                   f"{itemsize} bytes: cudot takes strides in whole elements")
        else:
            strides.append(step // itemsize)
    return tuple(strides)


def _numpy_view(a: np.ndarray) -> View:
    return View(a.ctypes.data, _type_name(a.dtype), a.shape, _element_strides(a.strides, a.shape, a.itemsize),
                not a.flags.writeable, None)


def _cai_view(cai: Any) -> View:
    """A view of what __cuda_array_interface__ says (v2 or v3)."""
    if not isinstance(cai, dict):
        raise TypeError(f"cudot: __cuda_array_interface__ must be a dict, not {type(cai).__name__}")
    if cai.get("mask") is not None:
        raise TypeError("cudot: masked CUDA arrays are not supported")
    try:
        dt = np.dtype(cai["typestr"])
        address, readonly = cai["data"]
        shape = tuple(operator.index(e) for e in cai["shape"])
    except (KeyError, TypeError, ValueError) as e:
        raise TypeError(f"cudot: a malformed __cuda_array_interface__ ({e})") from None
    byte_strides = cai.get("strides")
    if byte_strides is None:  # C-contiguous
        byte_strides = tuple(int(np.prod(shape[i + 1:], dtype=np.int64)) * dt.itemsize for i in range(len(shape)))
    ready = cai.get("stream") if cai.get("version", 0) >= 3 else None
    if ready is not None:
        ready = operator.index(ready)
        if ready == 0:  # the protocol forbids 0: it could mean the legacy or the per-thread stream
            raise invalid_argument("cudot: __cuda_array_interface__ names stream 0, which the protocol disallows")
    return View(address or 0, _type_name(dt), shape, _element_strides(tuple(byte_strides), shape, dt.itemsize),
                bool(readonly), ready)


def _dlpack_stream(work: int) -> int:
    """Our work stream as DLPack spells it: NULL, the legacy default stream, is 1 there (0 is disallowed)."""
    return work or 1


def _dlpack_view(obj: Any, work: int) -> Tuple[View, Callable[[], None]]:
    """The view of a DLPack exporter's data, and the function that releases it."""
    device = _dlpack.device_of(obj)
    stream = _dlpack_stream(work) if device in _dlpack.CUDA_DEVICES else None
    t, release = _dlpack.export(obj, stream)
    # DLPack (before 1.0) has no read-only flag; its producers make the data safe on our stream.
    return View(t.data, t.type_name, t.shape, t.strides, False, None), release


def _direct_view(obj: Any) -> Optional[View]:
    """The view of a numpy array or a __cuda_array_interface__ object; None for a DLPack exporter (read
    once the work stream is known); TypeError for anything else."""
    if isinstance(obj, np.ndarray):
        return _numpy_view(obj)
    dlpack = hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__")
    try:
        cai = getattr(obj, "__cuda_array_interface__", None)
    except Exception as e:  # e.g. PyTorch's bfloat16 tensors: try DLPack instead
        if dlpack:
            return None
        raise TypeError(f"cudot: reading __cuda_array_interface__ of {type(obj).__name__} failed: {e}") from e
    # A CAI before v3 (PyTorch's is v2) names no stream, so nothing could order the dot after the
    # producer's work; DLPack can (the producer makes the data safe on our stream): it is taken instead.
    if cai is not None and not (dlpack and isinstance(cai, dict) and cai.get("version", 0) < 3):
        return _cai_view(cai)
    if dlpack:
        return None
    if hasattr(obj, "__array_interface__") or _has_buffer(obj):
        return _numpy_view(np.asarray(obj))  # a view of the same memory, not a copy
    raise TypeError(f"cudot: expected a numpy array or an object with __cuda_array_interface__ (CuPy) or "
                    f"__dlpack__ (PyTorch), not {type(obj).__name__}")


def _has_buffer(obj: Any) -> bool:
    try:
        memoryview(obj).release()
    except TypeError:
        return False
    return True


def _relabel_bf16(view: View, what: str) -> View:
    if view.type_name not in ("uint16", "bfloat16"):  # an array typed bfloat16 already is one
        raise TypeError(f"cudot: as_bf16 takes an array of uint16 bit patterns; {what} holds {view.type_name}")
    return view._replace(type_name="bfloat16")


class Views:
    """Views of the caller's arrays for one call, and the work stream: `given`, else the stream the first
    __cuda_array_interface__ object names, else 0 (NULL: the legacy default stream). DLPack exporters are
    asked for their data on that stream; their capsules are released by close() (or the end of a `with`
    block). `objects` are (name, object) pairs; add() borrows one more on the same work stream."""
    __slots__ = ("work", "views", "_releases")

    def __init__(self, objects: Tuple[Tuple[str, Any], ...], given: Optional[int]) -> None:
        self._releases: List[Callable[[], None]] = []
        unwrapped = [(name, obj.bits if isinstance(obj, BF16Bits) else obj, isinstance(obj, BF16Bits))
                     for name, obj in objects]
        direct = [_direct_view(obj) for _, obj, _ in unwrapped]
        if given is None:
            given = next((v.ready for v in direct if v is not None and v.ready is not None), 0)
        self.work: int = given
        try:
            self.views = tuple(self._finish(name, obj, bf16, view) for (name, obj, bf16), view in zip(unwrapped, direct))
        except BaseException:
            self.close()
            raise

    def _finish(self, name: str, obj: Any, bf16: bool, view: Optional[View]) -> View:
        if view is None:
            view, release = _dlpack_view(obj, self.work)
            self._releases.append(release)
        return _relabel_bf16(view, name) if bf16 else view

    def add(self, name: str, obj: Any) -> View:
        """The view of one more object, read on the work stream and released with the others."""
        return self._finish(name, obj, False, _direct_view(obj))

    def close(self) -> None:
        releases, self._releases = self._releases, []
        for release in reversed(releases):
            release()

    def __enter__(self) -> Views:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def operand(view: View, name: str) -> Tuple[int, int, int, int]:
    """(data, CUDOT_* type, n, stride) of a 1-D view; TypeError or ValueError saying what is wrong."""
    code = CODES.get(view.type_name)
    if code is None:
        hint = " (bfloat16 bit patterns: pass cudot.as_bf16(array))" if view.type_name == "uint16" else ""
        raise TypeError(f"cudot: {name} holds {view.type_name}; cudot takes {SUPPORTED}{hint}")
    if len(view.shape) != 1:
        raise invalid_argument(f"cudot: {name} must be 1-D, not of shape {view.shape}")
    return view.data, code, view.shape[0], view.strides[0]
