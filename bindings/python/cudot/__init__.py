"""cudot: deterministic dot products (CPU or GPU) through the cudot C library, with numpy views.

    import cudot
    with cudot.Context(1000, dtype="f32") as ctx:
        ctx.x[:] = 1.0
        ctx.y[:] = 2.0
        print(ctx.dot(), ctx.memory)

The library is found through the CUDOT_LIBRARY environment variable (a full path), else the system's
normal search. Importing fails with ImportError if it is missing or of another major version.
"""
from . import _lib
from ._context import MEMORY_NAMES, Context, CudotError, Status

__version__ = "1.0.0"
__all__ = ["Context", "CudotError", "Status", "MEMORY_NAMES", "library_version"]


def library_version():
    """Version of the loaded library as text, e.g. '1.0.0'."""
    return _lib.text(_lib.lib.cudot_version_string())
