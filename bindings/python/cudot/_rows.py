"""Many dots in one call (cudot_dot_rows, library 1.9): vecdot with NumPy 2's semantics for real types, and
dots of the segments of two long vectors. Each result has the bits of cudot.dot on its own two rows,
whatever the batch. Nothing is copied: rows are read where they are, broadcast operands (stride 0) once
per row they serve, never materialized. With exact=True (library 1.14, cudot_rows.mode) every result is
its row's exact dot, the bits of cudot.dot(..., exact=True) on that row alone.
"""
from __future__ import annotations

import ctypes
import operator
import struct
from typing import Any, List, Optional, Tuple

import numpy as np
import numpy.typing as npt

from . import _fast, _lib, _operands, _partials
from ._errors import check_without_context, invalid_argument, optional_function

# cudot_rows as bytes: size, layout, count, n, x and y (data, dtype, reserved, stride), the row strides,
# offsets, x_rows, y_rows, stream, x_ready, y_ready, mode, reserved; native order and alignment.
_ROWS_LAYOUT = struct.Struct("@IiNN" + "Piiq" * 2 + "qq" + "PPP" + "PPP" + "ii")
_ROWS_SIZE = ctypes.sizeof(_lib.Rows)
assert _ROWS_LAYOUT.size == _ROWS_SIZE, "cudot_rows: the struct layout and the ctypes structure differ"


def _table_of(a: Any) -> Optional[_fast.Matrix]:
    """a's layout as rows: a 2-D array's own, or a 1-D array as one row (its row stride 0 repeats it)."""
    tp = type(a)
    read = _fast.MATRIX_READERS.get(tp) or _fast.matrix_reader(tp)
    if read is None:
        return None
    table = read(a)
    if table is None:
        vector = _fast.READERS[tp](a)  # (known: a matrix reader comes with a vector reader)
        if vector is not None and vector[2] >= 1:
            data, code, n, step, ready, device = vector
            table = data, code, 1, n, 0, step, ready, device
    return table


def _vecdot_table(x: Any, y: Any, stream: Any, mode: int) -> Optional[npt.NDArray[np.float64]]:
    """vecdot's short way, for the cases met most: two 2-D numpy arrays, or two CuPy arrays or PyTorch
    tensors on one GPU, of one shape, or one of them 1-D against the other's rows (one query against a
    table), summed along the last axis, the results returned as a new numpy array. Their layout is read
    from their own attributes (see _fast) and the request packed in one call, without the protocols.
    None for anything else: the long way then gives the same bits or the error."""
    mx = _table_of(x)
    if mx is None:
        return None
    my = _table_of(y)
    if my is None or my[3] != mx[3] or (mx[6] is None) != (my[6] is None):
        return None
    if mx[2] != my[2]:  # only a 1-D operand (one row, row stride 0) is repeated, as numpy broadcasts it
        one_row_x = mx[2] == 1 and mx[4] == 0 and len(x.shape) == 1
        one_row_y = my[2] == 1 and my[4] == 0 and len(y.shape) == 1
        if not (one_row_x or one_row_y):
            return None
        count = max(mx[2], my[2])
        mx, my = mx[:2] + (count,) + mx[3:], my[:2] + (count,) + my[3:]
    elif len(x.shape) == 1 and len(y.shape) == 1:  # two vectors: vecdot's result is 0-d; the long way
        return None
    xa, xd, count, n, xr, xs, x_ready_of, x_device = mx
    ya, yd, _, _, yr, ys, y_ready_of, y_device = my
    if x_ready_of is not None and x_device != y_device:  # two GPUs: the long way says so
        return None
    work, x_ready, y_ready = _fast.streams(x_ready_of, x_device, y_ready_of, y_device, stream)
    request = _lib.Rows()
    try:
        _ROWS_LAYOUT.pack_into(request, 0, _ROWS_SIZE, _lib.ROWS_STRIDED, count, n, xa, xd, 0, xs, ya, yd, 0, ys,
                               xr, yr, 0, 0, 0, work, x_ready, y_ready, mode, 0)
    except struct.error:  # a value out of its field's range
        return None
    results = np.empty(count, dtype=np.float64)
    check_without_context(optional_function("cudot_dot_rows")(request, results.ctypes.data))
    return results


def _element_type(view: _operands.View, name: str) -> int:
    code = _operands.CODES.get(view.type_name)
    if code is None:
        hint = " (bfloat16 bit patterns: pass cudot.as_bf16(array))" if view.type_name == "uint16" else ""
        raise TypeError(f"cudot: {name} holds {view.type_name}; cudot takes {_operands.SUPPORTED}{hint}")
    return code


def _core_last(view: _operands.View, axis: int, name: str) -> Tuple[Tuple[int, ...], Tuple[int, ...], int, int]:
    """(loop shape, loop strides, n, element stride) of a view with `axis` as its core (summed) axis."""
    ndim = len(view.shape)
    if ndim == 0:
        raise invalid_argument(f"cudot: {name} is a scalar; vecdot needs at least one dimension")
    if not -ndim <= axis < ndim:
        raise invalid_argument(f"cudot: axis {axis} is out of range for {name} of {ndim} dimension(s)")
    axis %= ndim
    shape = view.shape[:axis] + view.shape[axis + 1:]
    strides = view.strides[:axis] + view.strides[axis + 1:]
    return shape, strides, view.shape[axis], view.strides[axis]


def _broadcast(shape: Tuple[int, ...], strides: Tuple[int, ...], to: Tuple[int, ...]) -> Tuple[int, ...]:
    """The strides of `shape` broadcast to `to` (numpy's rules; a stretched dimension reads stride 0)."""
    pad = len(to) - len(shape)
    out = [0] * pad
    for extent, step, want in zip(shape, strides, to[pad:]):
        out.append(0 if extent == 1 and want != 1 else step)
    return tuple(out)


def _merged(shape: Tuple[int, ...], xs: Tuple[int, ...], ys: Tuple[int, ...]) -> Optional[Tuple[int, int]]:
    """(x row stride, y row stride) when the loop dimensions walk both operands as one strided dimension
    (row-major order), else None."""
    dims = [(e, a, b) for e, a, b in zip(shape, xs, ys) if e != 1]
    if not dims:
        return 0, 0
    for (e0, a0, b0), (e1, a1, b1) in zip(dims, dims[1:]):
        if a0 != a1 * e1 or b0 != b1 * e1:
            return None
    return dims[-1][1], dims[-1][2]


def _row_addresses(base: int, itemsize: int, shape: Tuple[int, ...], strides: Tuple[int, ...]) -> npt.NDArray:
    """The address of every row's element 0, in row-major order of the loop shape."""
    offsets = np.zeros(shape, dtype=np.int64)
    for d, (extent, step) in enumerate(zip(shape, strides)):
        along = np.arange(extent, dtype=np.int64) * step
        offsets += along.reshape((extent,) + (1,) * (len(shape) - d - 1))
    return (np.uint64(base) + (offsets.reshape(-1) * itemsize).astype(np.uint64)).astype(np.uint64)


def _results(out: Any, shape: Tuple[int, ...]) -> Tuple[npt.NDArray[np.float64], Optional[npt.NDArray[np.float64]]]:
    """(where the library writes, the caller's out to copy into afterwards or None)."""
    if out is None:
        return np.empty(shape, dtype=np.float64), None
    if not isinstance(out, np.ndarray):
        raise TypeError(f"cudot: out must be a numpy float64 array here, not {type(out).__name__}")
    if out.dtype != np.float64 or out.shape != shape:
        raise invalid_argument(f"cudot: out must be float64 of shape {shape}, not {out.dtype} of shape {out.shape}")
    if not out.flags.writeable:
        raise invalid_argument("cudot: out is read-only")
    if out.flags.c_contiguous and out.ctypes.data % 8 == 0:
        return out, None
    return np.empty(shape, dtype=np.float64), out


def _device_results(borrowed: _operands.Views, out: Any, shape: Tuple[int, ...]) -> int:
    """The address of out, a C-contiguous float64 device array (CuPy, PyTorch) of the result's shape."""
    view = borrowed.add("out", out)
    contiguous = tuple(int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape)))
    if view.type_name != "float64" or tuple(view.shape) != shape:
        raise invalid_argument(f"cudot: out must be float64 of shape {shape}, not {view.type_name} of shape {view.shape}")
    if view.readonly or any(e > 1 and a != b for e, a, b in zip(shape, view.strides, contiguous)):
        raise invalid_argument("cudot: a device out must be writable and C-contiguous")
    return view.data


def vecdot(x: Any, y: Any, /, *, axis: int = -1, out: Any = None, stream: Any = None,
           exact: bool = False) -> Any:
    """The dot products of x and y along `axis`, broadcast over the other dimensions: NumPy 2's
    np.vecdot for real types (no conjugation), as float64 of the broadcast shape of the other
    dimensions. Each result has the bits of cudot.dot on its own pair of vectors. Operands are read
    where they are (any strides; a broadcast operand, stride 0, is never copied): numpy arrays, and the
    types cudot.dot takes (__cuda_array_interface__ and DLPack: CuPy, PyTorch), one GPU computing
    device operands in one launch. out: a float64 numpy array of the result's shape to write into
    (the call returns when it is written), or a C-contiguous float64 device array (CuPy, PyTorch) into
    which the results are written in stream order (the call returns once they are queued; keep x, y
    and out alive until the stream has run it). stream: as cudot.dot's. exact (library 1.14): every
    result is the correctly rounded dot of its pair, the bits of cudot.dot(..., exact=True) on it, for
    host and device operands alike; True or False only (TypeError otherwise, as Context's exact=). A
    library older than 1.14 refuses exact=True (UnsupportedError)."""
    mode = _partials.exact_mode(exact)  # before anything is borrowed or the library loaded
    axis = operator.index(axis)
    if out is None and (axis == -1 or axis == 1):
        table = _vecdot_table(x, y, stream, mode)
        if table is not None:
            return table
    device_out = out is not None and not isinstance(out, np.ndarray)
    with _operands.Views((("x", x), ("y", y)), _operands.stream_handle(stream)) as borrowed:
        vx, vy = borrowed.views
        xd, yd = _element_type(vx, "x"), _element_type(vy, "y")
        xshape, xstrides, n, xstep = _core_last(vx, axis, "x")
        yshape, ystrides, yn, ystep = _core_last(vy, axis, "y")
        if n != yn:
            raise invalid_argument(f"cudot: x has {n} elements along axis {axis} and y {yn}: they must be equal")
        try:
            shape = tuple(np.broadcast_shapes(xshape, yshape))
        except ValueError:
            raise invalid_argument(f"cudot: the other dimensions of x {xshape} and y {yshape} do not broadcast") from None
        xs, ys = _broadcast(xshape, xstrides, shape), _broadcast(yshape, ystrides, shape)
        count = int(np.prod(shape, dtype=np.int64))
        if device_out:
            address = _device_results(borrowed, out, shape)
            results, copy_to = None, None
            if count == 0:
                return out
        else:
            results, copy_to = _results(out, shape)
            if count == 0:
                return results if copy_to is None else copy_to
        rows = _lib.Rows()
        rows.size = ctypes.sizeof(_lib.Rows)
        rows.count, rows.n = count, n
        rows.mode = mode  # one request for host and device rows: whoever computes gets the mode
        rows.x = _lib.Array(None, xd, 0, xstep)
        rows.y = _lib.Array(None, yd, 0, ystep)
        rows.stream = borrowed.work or None
        rows.x_ready, rows.y_ready = [v.ready if v.ready is not None and not _operands.same_stream(v.ready, borrowed.work)
                                      else None for v in (vx, vy)]
        keep: List[Any] = []
        merged = _merged(shape, xs, ys)
        if merged is not None or n == 0:
            rows.layout = _lib.ROWS_STRIDED
            rows.x.data, rows.y.data = (vx.data, vy.data) if n else (None, None)
            rows.x_row_stride, rows.y_row_stride = merged if merged is not None else (0, 0)
        else:
            rows.layout = _lib.ROWS_POINTERS
            size_of = {1: 4, 2: 8, 3: 2, 4: 2, 5: 1, 6: 1}
            xa = _row_addresses(vx.data, size_of[xd], shape, xs)
            ya = _row_addresses(vy.data, size_of[yd], shape, ys)
            keep += [xa, ya]
            rows.x_rows = xa.ctypes.data_as(ctypes.POINTER(ctypes.c_void_p))
            rows.y_rows = ya.ctypes.data_as(ctypes.POINTER(ctypes.c_void_p))
        if device_out:
            check_without_context(optional_function("cudot_dot_rows_async")(ctypes.byref(rows), address))
            return out
        check_without_context(optional_function("cudot_dot_rows")(ctypes.byref(rows), results.ctypes.data))
    if copy_to is not None:
        copy_to[...] = results
        return copy_to
    return results


def dot_segments(x: Any, y: Any, offsets: Any, *, stream: Any = None,
                 exact: bool = False) -> npt.NDArray[np.float64]:
    """The dots of the segments of two 1-D arrays of equal length: result i is the dot of
    x[offsets[i]:offsets[i + 1]] and y[offsets[i]:offsets[i + 1]] (an empty segment gives 0.0), with the
    bits of cudot.dot on that segment alone. offsets: len(result) + 1 non-decreasing int64 values.
    exact: as vecdot's (library 1.14): each segment's exact dot, the bits of cudot.dot(..., exact=True)."""
    mode = _partials.exact_mode(exact)
    off = np.ascontiguousarray(offsets, dtype=np.int64)
    if off.ndim != 1 or off.size == 0:
        raise invalid_argument("cudot: offsets must be a 1-D array of at least one value")
    with _operands.Views((("x", x), ("y", y)), _operands.stream_handle(stream)) as borrowed:
        (xp, xd, xn, xstep), (yp, yd, yn, ystep) = (_operands.operand(borrowed.views[0], "x"),
                                                    _operands.operand(borrowed.views[1], "y"))
        if xn != yn:
            raise invalid_argument(f"cudot: x has {xn} elements and y {yn}: the lengths must be equal")
        if off[-1] > xn:
            raise invalid_argument(f"cudot: the last offset, {int(off[-1])}, passes the end of x and y ({xn})")
        results = np.empty(off.size - 1, dtype=np.float64)
        rows = _lib.Rows()
        rows.size = ctypes.sizeof(_lib.Rows)
        rows.layout = _lib.ROWS_SEGMENTED
        rows.count = off.size - 1
        rows.mode = mode
        rows.x = _lib.Array(xp or None, xd, 0, xstep)
        rows.y = _lib.Array(yp or None, yd, 0, ystep)
        rows.offsets = off.ctypes.data_as(ctypes.POINTER(ctypes.c_int64))
        rows.stream = borrowed.work or None
        if rows.count:
            check_without_context(optional_function("cudot_dot_rows")(ctypes.byref(rows), results.ctypes.data))
    return results
