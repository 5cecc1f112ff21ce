"""The consumer's side of the DLPack exchange (the Python array API's `__dlpack__` protocol), in ctypes.

`export(obj, stream)` asks a producer for a capsule, takes it over as the protocol says (the capsule
named "dltensor" is renamed "used_dltensor", after which the producer's capsule destructor leaves it
alone and the consumer owes one call of the DLManagedTensor's deleter), and hands out the DLTensor's
fields with a function that calls the deleter, for when the consumer is done with the data. Only the unversioned capsule (DLPack before 1.0) is
asked for: `__dlpack__` is called without `max_version`, which every producer answers that way.
"""
from __future__ import annotations

import ctypes
from typing import Any, Callable, NamedTuple, Optional, Tuple

import numpy as np

KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED = 1, 2, 3, 13
CUDA_DEVICES = (KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED)  # producers take a stream for these
_INT, _UINT, _FLOAT, _BFLOAT, _BOOL = 0, 1, 2, 4, 6  # DLDataTypeCode


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _Device), ("ndim", ctypes.c_int32), ("dtype", _DataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _ManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _Tensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


# The deleter is called holding the GIL (PYFUNCTYPE): producers whose deleters touch Python objects take
# the GIL themselves, which is allowed while holding it; the others do not care.
_Deleter = ctypes.PYFUNCTYPE(None, ctypes.c_void_p)

_NAME = b"dltensor"
# PyCapsule_SetName keeps the pointer, not a copy: the new name must outlive every capsule, so it lives
# in a buffer of this module for good.
_USED_NAME = ctypes.create_string_buffer(b"used_dltensor")

_api = ctypes.pythonapi
_api.PyCapsule_IsValid.restype, _api.PyCapsule_IsValid.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype, _api.PyCapsule_SetName.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_void_p]

# (DLDataTypeCode, bits) -> the numpy name of the type (bool is 0/1 bytes in every producer we know).
TYPE_NAMES = {(_FLOAT, 32): "float32", (_FLOAT, 64): "float64", (_FLOAT, 16): "float16", (_BFLOAT, 16): "bfloat16",
              (_INT, 8): "int8", (_UINT, 8): "uint8", (_UINT, 16): "uint16", (_BOOL, 8): "bool"}


class Tensor(NamedTuple):
    """What a DLTensor says: the address of element 0, the numpy name of its type (or a description of a
    type numpy has no name for), its shape, its strides in elements and its DLPack device type."""
    data: int
    type_name: str
    shape: Tuple[int, ...]
    strides: Tuple[int, ...]
    device_type: int


def device_of(obj: Any) -> int:
    """The DLPack device type `obj.__dlpack_device__()` reports."""
    device = obj.__dlpack_device__()
    return int(device[0])


def _read(managed: _ManagedTensor) -> Tensor:
    t = managed.dl_tensor
    dt = t.dtype
    name = TYPE_NAMES.get((dt.code, dt.bits)) if dt.lanes == 1 else None
    shape = tuple(t.shape[i] for i in range(t.ndim))
    if t.strides:
        strides = tuple(t.strides[i] for i in range(t.ndim))
    else:  # NULL: compact, row-major
        strides = tuple(int(np.prod(shape[i + 1:], dtype=np.int64)) for i in range(t.ndim))
    return Tensor((t.data or 0) + t.byte_offset,
                  name or f"DLPack type (code {dt.code}, {dt.bits} bits, {dt.lanes} lanes)",
                  shape, strides, t.device.device_type)


def _deleter_call(managed: _ManagedTensor, address: int) -> Callable[[], None]:
    def release() -> None:
        if managed.deleter:
            _Deleter(managed.deleter)(address)
    return release


def export(obj: Any, stream: Optional[int]) -> Tuple[Tensor, Callable[[], None]]:
    """The tensor `obj` exports through `__dlpack__`, and the function to call (once) when done with its
    data. `stream` is the consumer's stream as DLPack spells it (1 legacy default, 2 per-thread, a handle
    otherwise), passed to the producer for CUDA devices so that it makes the data safe to read there;
    None for the others."""
    try:
        capsule = obj.__dlpack__() if stream is None else obj.__dlpack__(stream=stream)
    except Exception as e:  # e.g. PyTorch's "Can't export tensors that require gradient"
        raise TypeError(f"cudot: __dlpack__ of {type(obj).__name__} failed: {e}") from e
    if not _api.PyCapsule_IsValid(capsule, _NAME):
        raise TypeError(f"cudot: __dlpack__ of {type(obj).__name__} returned {type(capsule).__name__}, not an "
                        f"unused 'dltensor' capsule")
    address = _api.PyCapsule_GetPointer(capsule, _NAME)
    if _api.PyCapsule_SetName(capsule, ctypes.addressof(_USED_NAME)) != 0:  # ours now: the deleter is our job
        raise TypeError("cudot: cannot take over the DLPack capsule")
    managed = _ManagedTensor.from_address(address)
    release = _deleter_call(managed, address)
    try:
        return _read(managed), release
    except BaseException:
        release()
        raise
