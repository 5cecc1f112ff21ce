"""cudot: deterministic dot products (CPU or GPU) through the cudot C library, with numpy views.

    import cudot
    with cudot.Context(1000, dtype="f32") as ctx:
        ctx.x[:] = 1.0
        ctx.y[:] = 2.0
        print(ctx.dot(), ctx.memory)

The library is found through the CUDOT_LIBRARY environment variable (a full path), else the system's
normal search. Importing fails with ImportError if it is missing or of another major version.

Element types (dtype, y_dtype): f32, f64, f16, bf16 (viewed as uint16 bit patterns), i8, u8, bool.
"""
from . import _lib
from ._context import DEVICE_ALL, MEMORY_NAMES, Context, CudotError, Status
from ._types import NAMES as TYPE_NAMES
from ._types import bf16_from_float, bf16_to_float

__version__ = "1.1.0"
__all__ = ["Context", "CudotError", "Status", "DEVICE_ALL", "MEMORY_NAMES", "TYPE_NAMES", "bf16_from_float",
           "bf16_to_float", "library_version"]


def library_version():
    """Version of the loaded library as text, e.g. '1.0.0'."""
    return _lib.text(_lib.lib.cudot_version_string())
