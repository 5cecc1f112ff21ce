"""Context: one cudot_ctx, its two input buffers as numpy views, and the rules for freeing it."""
from __future__ import annotations

import ctypes
import operator
import weakref
from typing import Any, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

from . import _lib, _partials, _types
from ._errors import CudotError, InvalidArgumentError, Status, optional_function
from ._rows import _results

MEMORY_NAMES = ("auto", "pinned", "mapped", "managed", "host")  # index == CUDOT_MEMORY_* value
DEVICE_ALL = -1  # CUDOT_DEVICE_ALL: Context(..., device=DEVICE_ALL) uses every visible GPU (library 1.3)
_DEVICE_NONE = -2
# CUDOT_DEFAULT_WAIT_MS: the fixed part of the default bound on waits for the GPU (Context's wait_ms=0).
DEFAULT_WAIT_MS = 60000
_WAIT_MS_MAX = 2 ** 32 - 1  # cudot_config.wait_ms is a uint32_t
_ROWS_MAX = 2 ** 64 - 1  # cudot_config.rows is a uint64_t


# Pointers of the contexts not yet given to cudot_deinit; lets the tests see when memory is freed.
_open_pointers = set()


def _release(deinit, ptr, status_cell, open_pointers):
    # Called once, by close() or by the garbage collector in any thread: must never raise or print.
    # status_cell gets cudot_deinit's status and, on failure, its message (read here: same thread).
    try:
        open_pointers.discard(ptr)  # before deinit, so a new context at the same address stays listed
        status_cell[0] = deinit(ptr)
        if status_cell[0] != Status.OK:
            status_cell[1] = _lib.deinit_message()
    except Exception:
        status_cell[0] = Status.INTERNAL


class _Handle:
    """Owns one cudot_ctx. The Context and every numpy view reference it; cudot_deinit runs when the last
    reference goes. A call in flight holds a reference too, so deinit can never race with it."""
    __slots__ = ("ptr", "deinit_status", "__weakref__")

    def __init__(self, ptr):
        self.ptr = ptr
        self.deinit_status = [None, ""]
        _open_pointers.add(ptr)
        fin = weakref.finalize(self, _release, _lib.lib.cudot_deinit, ptr, self.deinit_status, _open_pointers)
        # Not at interpreter exit: a daemon thread may still be inside a call, and the OS frees it all.
        fin.atexit = False

    def __reduce__(self):
        raise TypeError("a cudot context cannot be pickled or copied")


class _Buffer:
    """The base numpy sees under a view: the address of a library buffer, plus the handle keeping it alive."""
    __slots__ = ("_handle", "_interface")

    def __init__(self, handle, address, shape, dtype):
        self._handle = handle
        self._interface = {"version": 3, "shape": shape, "typestr": dtype.str, "data": (address, False)}

    @property
    def __array_interface__(self):
        return self._interface


def _memory_code(memory):
    if not isinstance(memory, str):
        raise TypeError(f"cudot: memory must be a string, one of {', '.join(MEMORY_NAMES)}; got {memory!r}")
    try:
        return MEMORY_NAMES.index(memory.lower())
    except ValueError:
        raise ValueError(f"cudot: unknown memory {memory!r}; use one of {', '.join(MEMORY_NAMES)}") from None


def _count(n, what, limit):
    n = operator.index(n)  # TypeError for floats and other non-integers
    if not 0 <= n <= limit:
        raise ValueError(f"cudot: {what} must be between 0 and {limit}, got {n}")
    return n


class Context:
    """Input buffers for up to n elements and what computes their dot product.

    ctx.x and ctx.y are numpy arrays over the library's own memory: fill them in place (ctx.x[:] = ...),
    then call ctx.dot(). close() (or leaving a with-block) ends the context; the memory itself is freed
    once no numpy view of it is referenced any more.

    wait_ms (GPU strategies, library 1.5): the longest one call waits for the GPU, in milliseconds; 0 means
    the library's default (DEFAULT_WAIT_MS plus 2 s per GiB the call reads). A call that waits longer raises
    CudaError, and the context can then only be closed.

    rows (library 1.10): the buffers hold rows rows of n elements each, row-major (capacity rows * n), and
    ctx.x and ctx.y are 2-D views of shape (rows, n); ctx.dot_each_row() gives the dot of each row.
    ctx.dot() and ctx.dot(k) still see each buffer as one vector of rows * n elements. rows=None (the
    default) keeps the 1-D views of n elements. A library older than 1.10 refuses rows above 1
    (UnsupportedError).

    exact (library 1.13): every ctx.dot() and ctx.dot(k) gives the correctly rounded dot (the exact sum of
    the exact products, rounded once: the bits of cudot.dot(x, y, exact=True)), computed where the strategy
    computes; ctx.tile_partials() gives one exact partial for join_exact_partials; dot_each_row gives each
    row's exact dot (library 1.14; 1.13 raises UnsupportedError). True or False only (TypeError otherwise).
    A library older than 1.13 refuses it (UnsupportedError).
    """
    _handle: Optional[_Handle]
    _views: Optional[Tuple[np.ndarray, np.ndarray]]
    _types: Tuple[_types.ElementType, _types.ElementType]
    _shape: Optional[Tuple[int, int]]

    def __init__(self, n: int, dtype: npt.DTypeLike = np.float32, memory: str = "auto", device: int = 0, *,
                 y_dtype: npt.DTypeLike = None, wait_ms: int = 0, rows: Optional[int] = None,
                 exact: bool = False) -> None:
        # What close() and repr() expect, even if init fails (_types gets its real value at the end).
        self._handle = self._views = self._types = self._shape = None  # type: ignore[assignment]
        n = _count(n, "n", _lib.SIZE_MAX)
        if rows is not None:
            rows = _count(rows, "rows", _ROWS_MAX)
            if rows == 0:
                raise ValueError("cudot: rows must be at least 1 (None: one row, viewed as a vector), got 0")
        device = operator.index(device)
        if not -2 ** 31 <= device < 2 ** 31:
            raise ValueError(f"cudot: device {device} does not fit a 32-bit int")
        wait_ms = _count(wait_ms, "wait_ms", _WAIT_MS_MAX)
        mode = _partials.exact_mode(exact)
        tx = _types.lookup(dtype)
        ty = tx if y_dtype is None else _types.lookup(y_dtype)
        # y_dtype 0 ("same as dtype") where the codes agree, so that a 1.0 library still accepts the config;
        # wait_ms 0 (the default) likewise for a library older than 1.5, rows 0 (one row) for one older
        # than 1.10, and mode 0 (canonical) for one older than 1.13.
        config = _lib.Config(ctypes.sizeof(_lib.Config), tx.code, _memory_code(memory), device,
                             0 if ty.code == tx.code else ty.code, wait_ms, 0 if rows in (None, 1) else rows,
                             mode, 0)
        ptr = ctypes.c_void_p()
        status = _lib.lib.cudot_init(ctypes.byref(ptr), n, ctypes.byref(config))
        if status != Status.OK:
            # Same Python call, so same OS thread: the thread-local message is this failure's.
            raise CudotError.for_status(status, _lib.last_error(None))
        self._handle = _Handle(ptr.value)
        self._types = (tx, ty)
        self._shape = None if rows is None else (rows, n)

    # -- state --------------------------------------------------------------------------------------
    def _live(self):
        handle = self._handle
        if handle is None:
            raise ValueError("cudot: the context is closed")
        return handle

    @staticmethod
    def _check(status, handle):
        if status != Status.OK:
            raise CudotError.for_status(status, _lib.last_error(handle.ptr))

    @property
    def closed(self) -> bool:
        return self._handle is None

    @property
    def dtype(self) -> np.dtype:
        """The numpy dtype of ctx.x (uint16 for bf16, bool for a U8 buffer opened as bool); readable
        after close()."""
        return self._types[0].view

    @property
    def y_dtype(self) -> np.dtype:
        """The numpy dtype of ctx.y; readable after close()."""
        return self._types[1].view

    @property
    def dtypes(self) -> Tuple[str, str]:
        """The element types of x and y by name, e.g. ('f32', 'bool') or ('bf16', 'f64'); readable after
        close()."""
        return self._types[0].name, self._types[1].name

    @property
    def type_codes(self) -> Tuple[int, int]:
        """(x, y): the CUDOT_* element types the library reports (cudot_get_dtypes); bool is CUDOT_U8."""
        handle = self._live()
        fn = optional_function("cudot_get_dtypes")
        x, y = ctypes.c_int32(), ctypes.c_int32()
        self._check(fn(handle.ptr, ctypes.byref(x), ctypes.byref(y)), handle)
        return x.value, y.value

    def _memory_device(self):
        handle = self._live()
        memory, device = ctypes.c_int32(), ctypes.c_int32()
        self._check(_lib.lib.cudot_get_memory(handle.ptr, ctypes.byref(memory), ctypes.byref(device)), handle)
        return memory.value, device.value

    @property
    def memory(self) -> Union[str, int]:
        """The strategy in use, never 'auto': 'pinned', 'mapped', 'managed' or 'host'."""
        code = self._memory_device()[0]
        return MEMORY_NAMES[code] if 0 <= code < len(MEMORY_NAMES) else code

    @property
    def device(self) -> Optional[int]:
        """The CUDA device ordinal, DEVICE_ALL (-1) for a context on every visible GPU, or None when the
        context runs on the CPU."""
        device = self._memory_device()[1]
        return None if device == _DEVICE_NONE else device

    @property
    def capacity(self) -> int:
        """The elements of each buffer (cudot_get_capacity): rows * n."""
        handle = self._live()
        n = ctypes.c_size_t()
        self._check(_lib.lib.cudot_get_capacity(handle.ptr, ctypes.byref(n)), handle)
        return n.value

    def _rows_and_length(self):
        handle = self._live()
        fn = getattr(_lib.lib, "cudot_get_rows", None)
        if fn is None:  # a library older than 1.10 makes one row of the whole capacity, and no other
            return 1, self.capacity
        rows, n = ctypes.c_size_t(), ctypes.c_size_t()
        self._check(fn(handle.ptr, ctypes.byref(rows), ctypes.byref(n)), handle)
        return rows.value, n.value

    @property
    def exact(self) -> bool:
        """Whether the context sums in the exact mode (cudot_get_mode): made with exact=True. False with a
        library older than 1.13, which has no cudot_get_mode and makes only canonical contexts."""
        handle = self._live()
        fn = getattr(_lib.lib, "cudot_get_mode", None)
        if fn is None:
            return False
        mode = ctypes.c_int32()
        self._check(fn(handle.ptr, ctypes.byref(mode)), handle)
        return mode.value == _lib.MODE_EXACT

    @property
    def rows(self) -> int:
        """The rows of the buffers (cudot_get_rows): the rows given to Context, or 1."""
        return self._rows_and_length()[0]

    @property
    def row_length(self) -> int:
        """The elements of each row (cudot_get_rows): the n given to Context."""
        return self._rows_and_length()[1]

    # -- buffers -------------------------------------------------------------------------------------
    def inputs(self, dtype: npt.DTypeLike = None,
               y_dtype: npt.DTypeLike = None) -> Tuple[np.ndarray, np.ndarray]:
        """(x, y): writable numpy views of the two input buffers (no copy): 1-D of capacity elements, or of
        shape (rows, n) for a context made with rows. Pass dtype (and y_dtype, which defaults to dtype) to
        assert the element types your code expects; a mismatch raises TypeError instead of reinterpreting
        bytes."""
        handle = self._live()
        if dtype is not None or y_dtype is not None:
            expected = (dtype, dtype if y_dtype is None else y_dtype)
            for side, held, asked in zip("xy", self._types, expected):
                want = held if asked is None else _types.lookup(asked)
                if want != held:  # 'u8' and 'bool' differ, though both are CUDOT_U8
                    raise TypeError(f"cudot: this context's {side} holds {held.label}, not {want.label}")
        views = self._views
        if views is None:
            x, y = ctypes.c_void_p(), ctypes.c_void_p()
            self._check(_lib.lib.cudot_get_inputs(handle.ptr, ctypes.byref(x), ctypes.byref(y)), handle)
            shape = self._shape or (self.capacity,)
            views = (np.asarray(_Buffer(handle, x.value, shape, self._types[0].view)),
                     np.asarray(_Buffer(handle, y.value, shape, self._types[1].view)))
            if self._handle is handle:  # not closed meanwhile by another thread: keep them
                self._views = views
        return views

    @property
    def x(self) -> np.ndarray:
        return self.inputs()[0]

    @property
    def y(self) -> np.ndarray:
        return self.inputs()[1]

    # -- compute -------------------------------------------------------------------------------------
    def dot(self, n: Optional[int] = None) -> float:
        """Dot product of x and y over all capacity elements, or over the first n."""
        handle = self._live()  # this local keeps the context alive for the call, even if closed meanwhile
        result = ctypes.c_double()
        if n is None:
            status = _lib.lib.cudot_dot(handle.ptr, ctypes.byref(result))
        else:  # n beyond capacity goes to the library, which says why it refuses
            n = _count(n, "n", _lib.SIZE_MAX)
            status = _lib.lib.cudot_dot_n(handle.ptr, n, ctypes.byref(result))
        self._check(status, handle)
        return result.value

    def dot_n(self, n: int) -> float:
        """Dot product of the first n elements (n <= capacity)."""
        if n is None:
            raise TypeError("cudot: dot_n needs an integer n")
        return self.dot(n)

    def dot_each_row(self, rows: Optional[int] = None, n: Optional[int] = None,
                     out: Optional[npt.NDArray[np.float64]] = None) -> npt.NDArray[np.float64]:
        """The dot of the first n elements of each of the first `rows` rows (cudot_dot_each_row, library
        1.10), as a float64 array of `rows` results: result i has the bits of cudot.dot on row i's first n
        elements alone, on every memory strategy. rows defaults to all rows, n to whole rows. out: a
        float64 array of shape (rows,) to write into and return. rows beyond the context's, or n beyond
        its row length, raise InvalidArgumentError, and nothing is written then. On an exact context
        (library 1.14) result i is row i's exact dot, the bits of cudot.dot(..., exact=True) on its first n
        elements; a 1.13 library raises UnsupportedError there (it has no exact rows)."""
        handle = self._live()
        fn = optional_function("cudot_dot_each_row")
        all_rows, length = self._rows_and_length()
        rows = _count(all_rows if rows is None else rows, "rows", _lib.SIZE_MAX)
        n = _count(length if n is None else n, "n", _lib.SIZE_MAX)
        if out is None and rows > all_rows:
            # The library refuses more rows than the context has, with its message, before it writes
            # anything: no need to allocate room for them all first (a huge count would fail in numpy).
            self._check(fn(handle.ptr, rows, n, np.empty(1).ctypes.data), handle)
            raise CudotError.for_status(Status.INTERNAL, f"cudot_dot_each_row accepted {rows} rows of a context "
                                                         f"of {all_rows}")
        results, copy_to = _results(out, (rows,))  # out not contiguous or aligned: through a copy
        self._check(fn(handle.ptr, rows, n, results.ctypes.data if rows else None), handle)
        if copy_to is not None:
            copy_to[...] = results
            return copy_to
        return results

    def tile_partials(self, first: int = 0, n: Optional[int] = None) -> npt.NDArray[np.uint8]:
        """The partial sums of the tiles of elements [first, first + n) (n defaults to the rest of the
        buffers), element `first` taken as the first element of a tile: a uint8 array of
        ceil(n / TILE_ELEMENTS) * PARTIAL_BYTES opaque bytes, for cudot.join_partials. Library 1.2.
        On an exact context: one exact partial, EXACT_PARTIAL_BYTES opaque bytes whatever n (0 included)
        and first, for cudot.join_exact_partials. Library 1.13."""
        handle = self._live()
        first = operator.index(first)
        capacity = self.capacity
        n = capacity - first if n is None else operator.index(n)
        # Checked here, before allocating the output: a huge n would otherwise fail in numpy instead.
        if first < 0 or n < 0 or first + n > capacity:
            raise InvalidArgumentError(Status.INVALID_ARGUMENT, f"cudot: tile_partials of elements [{first}, "
                                       f"{first + n}) are not within the capacity {capacity}")
        fn = optional_function("cudot_tile_partials")
        out = _partials.exact_partial_buffer() if self.exact else _partials.partials_buffer(n)
        self._check(fn(handle.ptr, first, n, out.ctypes.data), handle)
        return out

    # -- lifetime ------------------------------------------------------------------------------------
    def close(self) -> None:
        """End the context. Idempotent. Frees the buffers now if no view of them is referenced, else
        when the last view goes. Raises CudotError if freeing them now reported an error."""
        handle, self._handle, self._views = self._handle, None, None
        if handle is None:
            return
        cell = handle.deinit_status
        del handle  # in CPython the finalizer runs right here when that was the last reference
        if cell[0] not in (None, Status.OK):
            raise CudotError.for_status(cell[0], (cell[1] or "cudot_deinit reported an error while freeing the "
                                                  "context") + " (the context is destroyed anyway)")

    def __enter__(self) -> Context:
        self._live()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __reduce__(self):
        raise TypeError("a cudot context cannot be pickled or copied")

    def __repr__(self):
        if self._handle is None:
            return "<cudot.Context closed>"
        shape = "" if self._shape is None else f"rows={self._shape[0]}, n={self._shape[1]}, "
        exact = ", exact=True" if self.exact else ""
        return (f"<cudot.Context {shape}capacity={self.capacity}, dtypes={self.dtypes}, memory={self.memory!r}, "
                f"device={self.device}{exact}>")
