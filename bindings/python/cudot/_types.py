"""The element types: their cudot codes, the numpy dtype each buffer is viewed as, and bf16 helpers."""
from __future__ import annotations

import collections

import numpy as np
import numpy.typing as npt

# name: the binding's name; code: CUDOT_* in cudot.h; view: numpy dtype of the buffer's view;
# label: what error messages call it.
ElementType = collections.namedtuple("ElementType", "name code view label")

TYPES = (
    ElementType("f32", 1, np.dtype(np.float32), "float32"),
    ElementType("f64", 2, np.dtype(np.float64), "float64"),
    ElementType("f16", 3, np.dtype(np.float16), "float16"),
    ElementType("bf16", 4, np.dtype(np.uint16), "bf16"),  # numpy has no bfloat16: raw bit patterns
    ElementType("i8", 5, np.dtype(np.int8), "int8"),
    ElementType("u8", 6, np.dtype(np.uint8), "uint8"),
    ElementType("bool", 6, np.dtype(np.bool_), "bool"),  # a U8 buffer holding 0/1, viewed as bool_
)
BY_NAME = {t.name: t for t in TYPES}
BY_NAME["bfloat16"] = BY_NAME["bf16"]
NAMES = tuple(t.name for t in TYPES)


def lookup(spelling: npt.DTypeLike) -> ElementType:
    """The ElementType for a name ('f32', 'bf16', 'bool', ...) or anything numpy.dtype() turns into one
    of the native views float32, float64, float16, int8, uint8, bool. TypeError for anything else."""
    if isinstance(spelling, str) and spelling.lower() in BY_NAME:
        return BY_NAME[spelling.lower()]
    try:  # numpy reads None as float64, which is not our default: refuse it
        dt = np.dtype(spelling) if spelling is not None else None
    except (TypeError, ValueError):
        dt = None
    # Never compare None with a dtype: numpy would call them equal (both float64). uint16 is refused:
    # it would be ambiguous, bf16 is asked for by name.
    if dt is not None and dt != np.uint16:
        for t in TYPES:
            if dt == t.view:
                return t
    raise TypeError(f"cudot: element type must be one of {', '.join(NAMES)} (or numpy float32, float64, "
                    f"float16, int8, uint8, bool_; bf16 only by name), not {spelling!r}")


def bf16_from_float(values: npt.ArrayLike) -> np.ndarray:
    """bfloat16 bit patterns (uint16) of `values` (converted to float32 first), rounded to nearest, ties
    to even, as CUDA's __float2bfloat16 does; NaN stays a (quiet) NaN. Same shape as the input."""
    f = np.asarray(values, dtype=np.float32)
    nan = np.isnan(f)
    b = np.where(nan, np.uint32(0), f.view(np.uint32))  # no NaN below: the addition cannot wrap
    rounded = (b + np.uint32(0x7FFF) + ((b >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    quiet_nan = (f.view(np.uint32) >> np.uint32(16)) | np.uint32(0x0040)
    return np.where(nan, quiet_nan, rounded).astype(np.uint16)


def bf16_to_float(bits: npt.ArrayLike) -> np.ndarray:
    """float32 values of bfloat16 bit patterns (a uint16 array, e.g. a bf16 context's x); exact."""
    b = np.asarray(bits)
    if b.dtype != np.uint16:
        raise TypeError(f"cudot: bf16 bit patterns must be uint16, not {b.dtype}")
    return (b.astype(np.uint32) << np.uint32(16)).view(np.float32)
