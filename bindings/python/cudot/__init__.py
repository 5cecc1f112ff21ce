"""cudot: deterministic dot products (CPU or GPU) through the cudot C library, with numpy views.

    import cudot
    with cudot.Context(1000, dtype="f32") as ctx:
        ctx.x[:] = 1.0
        ctx.y[:] = 2.0
        print(ctx.dot(), ctx.memory)

The library is loaded on first use (not at import) from CUDOT_LIBRARY (a full path) if set, else the
copy bundled in this package (a wheel's), else the system's normal search. If none is usable the first
call raises LibraryLoadError, an ImportError.

Element types (dtype, y_dtype): f32, f64, f16, bf16 (viewed as uint16 bit patterns), i8, u8, bool.

Dots on your own arrays (library 1.7), read where they are, nothing copied:

    cudot.dot(np_x, np_y)                      # numpy arrays, any stride
    cudot.dot(cupy_x, cupy_y, stream=s)        # CUDA arrays (__cuda_array_interface__, __dlpack__)

Many dots in one call (library 1.9), each with the bits of its own dot:

    cudot.vecdot(table, query)                 # one query against every row of a table (NumPy 2's vecdot)
    cudot.dot_segments(x, y, offsets)          # the dots of x[o[i]:o[i+1]] and y[o[i]:o[i+1]]

The exact dot (library 1.11; contexts and exact partials 1.13; rows 1.14), the correctly rounded one:

    cudot.dot(x, y, exact=True)
    cudot.Context(n, exact=True)               # its dot() is exact; tile_partials() gives one exact partial
    cudot.join_exact_partials(partials)        # exact partials of pieces, any order: the whole's exact dot
    cudot.vecdot(table, query, exact=True)     # each row's exact dot (dot_segments and dot_each_row too)
"""
from . import _lib, _version
from ._arrays import Registration, dot, dot_async, register_host, tile_partials
from ._context import DEFAULT_WAIT_MS, DEVICE_ALL, MEMORY_NAMES, Context
from ._errors import (CudaError, CudotError, InternalError, InvalidArgumentError, NoDeviceError, OutOfMemoryError,
                      Status, UnsupportedError)
from ._lib import LibraryLoadError
from ._operands import as_bf16
from ._partials import EXACT_PARTIAL_BYTES, PARTIAL_BYTES, TILE_ELEMENTS, join_exact_partials, join_partials
from ._rows import dot_segments, vecdot
from ._types import NAMES as TYPE_NAMES
from ._types import bf16_from_float, bf16_to_float

__version__ = _version.read()
__all__ = ["Context", "CudotError", "InvalidArgumentError", "OutOfMemoryError", "NoDeviceError", "UnsupportedError",
           "CudaError", "InternalError", "LibraryLoadError", "Status", "DEVICE_ALL", "DEFAULT_WAIT_MS", "MEMORY_NAMES",
           "TYPE_NAMES", "TILE_ELEMENTS", "PARTIAL_BYTES", "join_partials", "bf16_from_float", "bf16_to_float",
           "library_version", "dot", "dot_async", "tile_partials", "as_bf16", "register_host", "Registration",
           "vecdot", "dot_segments", "EXACT_PARTIAL_BYTES", "join_exact_partials"]

# Tracebacks and reprs name the exceptions as users spell them (cudot.LibraryLoadError, not
# cudot._lib.LibraryLoadError); pickle finds them under the same names.
for _cls in (CudotError, InvalidArgumentError, OutOfMemoryError, NoDeviceError, UnsupportedError, CudaError,
             InternalError, LibraryLoadError, Status, Registration):
    _cls.__module__ = __name__
del _cls


def library_version() -> str:
    """Version of the loaded library as text, e.g. '1.5.0' (loads the library on the first call)."""
    return _lib.text(_lib.lib.cudot_version_string())
