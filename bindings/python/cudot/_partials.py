"""Tile partials (library 1.2): the building blocks of one dot over a vector whose parts are held by
several contexts or processes. Each holder computes the partials of its tiles (Context.tile_partials);
one place joins all of them in tile order (join_partials) and gets the same bits as a single context
holding the whole vector. The partials are opaque bytes: only a library of the same major version on a
machine of the same byte order may join them.

Exact partials (library 1.13): the exact mode has no tiles, since its sum is the same in any order. A
holder's whole share is one exact partial of EXACT_PARTIAL_BYTES (the unrounded exact sum), from
Context.tile_partials on a context made with exact=True or from tile_partials(x, y, exact=True);
join_exact_partials joins any number of them, in any order, to the bits of dot(..., exact=True) on the
whole vector.
"""
from __future__ import annotations

import ctypes
from typing import Union

import numpy as np
import numpy.typing as npt

from . import _lib, _types
from ._errors import check_without_context, invalid_argument, optional_function

TILE_ELEMENTS = 8192  # CUDOT_TILE_ELEMENTS: element i belongs to tile i // TILE_ELEMENTS
PARTIAL_BYTES = 16  # CUDOT_PARTIAL_BYTES: the size of one tile's partial
EXACT_PARTIAL_BYTES = 1120  # CUDOT_EXACT_PARTIAL_BYTES: the size of one exact partial

BytesLike = Union[bytes, bytearray, memoryview, np.ndarray]


def partials_buffer(n: int) -> npt.NDArray[np.uint8]:
    """A fresh uint8 array for the partials of n elements: one per tile, the last tile maybe short."""
    return np.empty(-(-n // TILE_ELEMENTS) * PARTIAL_BYTES, dtype=np.uint8)


def exact_partial_buffer() -> npt.NDArray[np.uint8]:
    """A fresh uint8 array for one exact partial (whatever the number of elements it sums)."""
    return np.empty(EXACT_PARTIAL_BYTES, dtype=np.uint8)


def exact_mode(exact: bool) -> int:
    """The cudot_mode for an `exact=` argument of Context and tile_partials. Only True and False (numpy's
    too) are taken: any other value, truthy or not (1, "no", None), raises TypeError rather than pick a
    summation for the caller."""
    if not isinstance(exact, (bool, np.bool_)):
        raise TypeError(f"cudot: exact must be True or False, not {exact!r}")
    return _lib.MODE_EXACT if exact else _lib.MODE_CANONICAL


def _as_bytes(partials: BytesLike) -> np.ndarray:
    """The partials as a contiguous 1-D uint8 array, without copying where possible."""
    if isinstance(partials, np.ndarray):
        # Only uint8: the bytes of an array of another type are surely not partials.
        if partials.dtype != np.uint8:
            raise TypeError(f"cudot: partials must be uint8 bytes (as tile_partials returns them), "
                            f"not {partials.dtype}")
        return np.ascontiguousarray(partials).reshape(-1)
    return np.frombuffer(memoryview(partials).cast("B"), dtype=np.uint8)  # TypeError if not bytes-like


def join_partials(partials: BytesLike, dtype: npt.DTypeLike, y_dtype: npt.DTypeLike = None) -> float:
    """The dot product of a vector from the partials of all its tiles, concatenated in tile order: the
    same bits as Context.dot() on one context holding the whole vector. dtype and y_dtype are the
    element types the partials were computed for (y_dtype defaults to dtype, as in Context)."""
    tx = _types.lookup(dtype)
    ty = tx if y_dtype is None else _types.lookup(y_dtype)
    data = _as_bytes(partials)
    if data.size % PARTIAL_BYTES:
        raise invalid_argument(f"cudot: partials must be a multiple of {PARTIAL_BYTES} bytes long (one per tile), "
                               f"got {data.size}")
    join = optional_function("cudot_join_partials")
    result = ctypes.c_double()
    check_without_context(join(tx.code, ty.code, data.ctypes.data, data.size // PARTIAL_BYTES, ctypes.byref(result)))
    return result.value


def join_exact_partials(partials: BytesLike) -> float:
    """The exact dot of a vector from exact partials of its pieces (library 1.13), placed back to back in
    any order (EXACT_PARTIAL_BYTES each; bytes-like, or a uint8 array of any shape): their exact sum rounded
    once, the bits of dot(x, y, exact=True) on the whole vector, whatever the element types of each piece.
    No partials give +0.0. Bytes that no cudot wrote as an exact partial raise InvalidArgumentError with
    the library's message, which gives the partial's index."""
    data = _as_bytes(partials)
    if data.size % EXACT_PARTIAL_BYTES:
        raise invalid_argument(f"cudot: exact partials must be a multiple of {EXACT_PARTIAL_BYTES} bytes long "
                               f"(one per partial), got {data.size}")
    join = optional_function("cudot_join_exact_partials")
    result = ctypes.c_double()
    check_without_context(join(data.ctypes.data, data.size // EXACT_PARTIAL_BYTES, ctypes.byref(result)))
    return result.value
