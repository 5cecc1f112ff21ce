"""Finds libcudot, refuses an incompatible major version and declares every C signature used.

The library is loaded lazily, on first use: `import cudot` works without it (so a program can import the
package, read __version__ or build a wheel), and the first call that needs it raises LibraryLoadError
(an ImportError, as the import itself did before 1.5) with every candidate tried and why it was refused.
Other modules reach the library as `_lib.lib` (loaded by the module __getattr__ below on first access),
so tests can still replace it with monkeypatch.setattr(_lib, "lib", ...).

This module imports nothing else from the package: setup.py loads it on its own to learn BUNDLED.
"""
import ctypes
import ctypes.util
import os
import sys
import threading

MAJOR = 1  # the cudot.h major version this binding was written for

# The library's file name for our major on this platform. A wheel carries its copy under this name in the
# package folder (setup.py puts it there). Only Linux was tried.
if sys.platform == "win32":
    BUNDLED = "cudot.dll"
elif sys.platform == "darwin":
    BUNDLED = f"libcudot.{MAJOR}.dylib"
else:
    BUNDLED = f"libcudot.so.{MAJOR}"


class LibraryLoadError(ImportError):
    """No usable libcudot: not found, not a cudot library, another major version, or missing a function.
    An ImportError, so `except ImportError` written for versions that loaded at import still catches it."""


class Config(ctypes.Structure):
    """cudot_config as of 1.13 (40 bytes, reserved last; scripts/check_bindings_abi.py compares it with
    cudot.h). An older library reads the fields it knows and accepts the rest while they are 0: a 1.0
    library needs y_dtype 0, one older than 1.5 wait_ms 0, one older than 1.10 rows 0 (one row), one
    older than 1.13 mode 0 (CUDOT_MODE_CANONICAL). reserved is always 0."""
    _fields_ = [("size", ctypes.c_uint32), ("dtype", ctypes.c_int32),
                ("memory", ctypes.c_int32), ("device", ctypes.c_int32), ("y_dtype", ctypes.c_int32),
                ("wait_ms", ctypes.c_uint32), ("rows", ctypes.c_uint64), ("mode", ctypes.c_int32),
                ("reserved", ctypes.c_int32)]


class Array(ctypes.Structure):
    """cudot_array (1.7): one caller-owned operand, element i at data + i * stride elements."""
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32), ("reserved", ctypes.c_int32),
                ("stride", ctypes.c_int64)]


class Arrays(ctypes.Structure):
    """cudot_arrays (1.7, 88 bytes on 64-bit platforms; 96 since 1.11, with mode): a dot of two
    caller-owned operands. Streams are cudaStream_t values as ints (None: NULL, the legacy default
    stream)."""
    _fields_ = [("size", ctypes.c_uint32), ("reserved", ctypes.c_uint32), ("n", ctypes.c_size_t),
                ("x", Array), ("y", Array), ("stream", ctypes.c_void_p), ("x_ready", ctypes.c_void_p),
                ("y_ready", ctypes.c_void_p), ("mode", ctypes.c_int32), ("reserved2", ctypes.c_int32)]


# cudot_mode (1.11: cudot_arrays.mode; 1.13: cudot_config.mode too; 1.14: cudot_rows.mode)
MODE_CANONICAL = 0
MODE_EXACT = 1


class Rows(ctypes.Structure):
    """cudot_rows (1.9; 136 bytes on 64-bit platforms, 144 since 1.14, with mode): a batch of dots of
    caller-owned rows; layout is a ROWS_* value, mode a MODE_* value for every row. Always sent whole: a
    library older than 1.14 accepts the larger size while mode and reserved are 0 (the canonical mode),
    and refuses the exact mode with UNSUPPORTED (non-zero bytes past what it knows)."""
    _fields_ = [("size", ctypes.c_uint32), ("layout", ctypes.c_int32), ("count", ctypes.c_size_t),
                ("n", ctypes.c_size_t), ("x", Array), ("y", Array), ("x_row_stride", ctypes.c_int64),
                ("y_row_stride", ctypes.c_int64), ("offsets", ctypes.POINTER(ctypes.c_int64)),
                ("x_rows", ctypes.POINTER(ctypes.c_void_p)), ("y_rows", ctypes.POINTER(ctypes.c_void_p)),
                ("stream", ctypes.c_void_p), ("x_ready", ctypes.c_void_p),
                ("y_ready", ctypes.c_void_p), ("mode", ctypes.c_int32), ("reserved", ctypes.c_int32)]


# cudot_rows_layout
ROWS_STRIDED = 0
ROWS_SEGMENTED = 1
ROWS_POINTERS = 2


def check_major(version):
    """Raise LibraryLoadError unless `version` (major * 10000 + minor * 100 + patch) has our major."""
    if version // 10000 != MAJOR:
        raise LibraryLoadError(f"cudot: the loaded library is version {version // 10000}.{version // 100 % 100}."
                               f"{version % 100}, but this binding needs major version {MAJOR}")


def package_dir():
    """The folder of the cudot package in use (cudot.__file__'s folder, which is also this file's)."""
    return os.path.dirname(os.path.abspath(__file__))


def bundled_path():
    """Where a wheel's own copy of the library lies: beside this file."""
    return os.path.join(package_dir(), BUNDLED)


def is_source_tree():
    """Whether the package in use is the repository's bindings/python/cudot rather than an installed one: no
    bundled library in it, and a pyproject.toml in the folder above (an installed package has neither)."""
    return not os.path.exists(bundled_path()) and os.path.isfile(
        os.path.join(os.path.dirname(package_dir()), "pyproject.toml"))


def _candidates():
    """Library names to try, in order: the package's bundled copy, then the versioned name of our major,
    so that a copy of another major version found under the unversioned name never hides the right one."""
    names = [bundled_path()] if os.path.exists(bundled_path()) else []
    names.append(BUNDLED)
    found = ctypes.util.find_library("cudot")
    if found and found not in names:
        names.append(found)
    return names


def _version_of(lib):
    """The library's cudot_version(), or LibraryLoadError if it is not a cudot library."""
    try:
        version_fn = lib.cudot_version
    except AttributeError:
        raise LibraryLoadError(f"cudot: {lib._name!r} is not a cudot library (no cudot_version)") from None
    version_fn.restype, version_fn.argtypes = ctypes.c_uint32, []
    return version_fn()


def _unload(lib):
    """Unload a refused candidate. Left loaded, one whose SONAME is ours would be what the dynamic loader
    hands back for the next name, BUNDLED, instead of the file that name finds on the search path."""
    import _ctypes
    close = getattr(_ctypes, "FreeLibrary" if sys.platform == "win32" else "dlclose", None)
    if close is not None:
        close(lib._handle)


def _open():
    path = os.environ.get("CUDOT_LIBRARY")
    if path:  # an explicit choice: never fall back to another copy behind the user's back
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            raise LibraryLoadError(f"cudot: cannot load CUDOT_LIBRARY={path!r}: {e} (the cudot package in use "
                                   f"is {package_dir()})") from None
        check_major(_version_of(lib))  # before touching other symbols, which another major may lack
        return lib
    tried = []
    for name in _candidates():
        try:
            lib = ctypes.CDLL(name)
        except OSError as e:
            tried.append(f"{name} ({e if os.path.isabs(name) else 'not found'})")  # a path: say why
            continue
        try:
            check_major(_version_of(lib))
        except LibraryLoadError as e:  # another major version, or not cudot: try the next name
            tried.append(f"{name} ({e})")
            _unload(lib)
            continue
        return lib
    raise LibraryLoadError(not_found_message(tried))


def not_found_message(tried):
    """Why no candidate was usable: the package that was imported (which one, and so which candidates,
    is the first thing to check), each name tried and why it was refused, what to do, and, when that
    package is a source tree, that it hides any installed wheel."""
    here = package_dir()
    message = (f"cudot: no usable libcudot for the cudot package imported from {here} (tried {'; '.join(tried)}); "
               "install it where the system linker looks, or set CUDOT_LIBRARY to its full path")
    if is_source_tree():
        message += (f". That package is a source tree (no {BUNDLED} in it, a pyproject.toml in "
                    f"{os.path.dirname(here)}): run from that folder, or with it on PYTHONPATH, it shadows any "
                    "installed wheel; run from another folder, or set CUDOT_LIBRARY")
    return message


# Functions added after 1.0, with the version that added them: an older library lacks them, the binding
# still loads it, and calling one raises UNSUPPORTED (see _context.optional_function).
OPTIONAL = {"cudot_get_dtypes": "1.1", "cudot_tile_partials": "1.2", "cudot_join_partials": "1.2",
            "cudot_dot_arrays": "1.7", "cudot_dot_arrays_async": "1.7", "cudot_tile_partials_arrays": "1.7",
            "cudot_register_host": "1.7", "cudot_unregister_host": "1.7", "cudot_dot_rows": "1.9",
            "cudot_dot_rows_async": "1.9", "cudot_get_rows": "1.10", "cudot_dot_each_row": "1.10",
            "cudot_get_mode": "1.13", "cudot_join_exact_partials": "1.13"}


def _declare(lib):
    c_int, c_size_t, c_void_p, P = ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p, ctypes.POINTER
    signatures = {  # name: (restype, argtypes); enums (cudot_status) are C ints
        "cudot_init": (c_int, [P(c_void_p), c_size_t, P(Config)]),
        "cudot_get_inputs": (c_int, [c_void_p, P(c_void_p), P(c_void_p)]),
        "cudot_dot": (c_int, [c_void_p, P(ctypes.c_double)]),
        "cudot_dot_n": (c_int, [c_void_p, c_size_t, P(ctypes.c_double)]),
        "cudot_deinit": (c_int, [c_void_p]),
        "cudot_get_memory": (c_int, [c_void_p, P(ctypes.c_int32), P(ctypes.c_int32)]),
        "cudot_get_dtypes": (c_int, [c_void_p, P(ctypes.c_int32), P(ctypes.c_int32)]),
        "cudot_get_capacity": (c_int, [c_void_p, P(c_size_t)]),
        "cudot_get_rows": (c_int, [c_void_p, P(c_size_t), P(c_size_t)]),
        "cudot_get_mode": (c_int, [c_void_p, P(ctypes.c_int32)]),
        "cudot_dot_each_row": (c_int, [c_void_p, c_size_t, c_size_t, c_void_p]),
        "cudot_tile_partials": (c_int, [c_void_p, c_size_t, c_size_t, c_void_p]),
        "cudot_join_partials": (c_int, [ctypes.c_int32, ctypes.c_int32, c_void_p, c_size_t, P(ctypes.c_double)]),
        "cudot_join_exact_partials": (c_int, [c_void_p, c_size_t, P(ctypes.c_double)]),
        "cudot_dot_arrays": (c_int, [P(Arrays), P(ctypes.c_double)]),
        "cudot_dot_arrays_async": (c_int, [P(Arrays), c_void_p]),
        "cudot_tile_partials_arrays": (c_int, [P(Arrays), c_void_p]),
        "cudot_dot_rows": (c_int, [P(Rows), c_void_p]),
        "cudot_dot_rows_async": (c_int, [P(Rows), c_void_p]),
        "cudot_register_host": (c_int, [c_void_p, c_size_t]),
        "cudot_unregister_host": (c_int, [c_void_p]),
        "cudot_status_string": (ctypes.c_char_p, [c_int]),
        "cudot_last_error": (ctypes.c_char_p, [c_void_p]),  # c_char_p copies the text at once
        "cudot_version_string": (ctypes.c_char_p, []),
    }
    for name, (restype, argtypes) in signatures.items():
        fn = getattr(lib, name, None)
        if fn is None and name in OPTIONAL:
            continue
        if fn is None:
            raise LibraryLoadError(f"cudot: the loaded library lacks {name}")
        fn.restype, fn.argtypes = restype, argtypes


def _load():
    lib = _open()
    _declare(lib)
    return lib


_load_lock = threading.Lock()  # two threads making their first call at once load the library once


def get():
    """The library, loaded on the first call. A failed load is not remembered: the next call tries again
    (e.g. after CUDOT_LIBRARY was corrected)."""
    module = globals()
    if "lib" not in module:
        with _load_lock:
            if "lib" not in module:
                module["lib"] = _load()
    return module["lib"]


def __getattr__(name):
    # PEP 562: only called for names not (yet) in the module, i.e. `lib` before the first load.
    if name == "lib":
        return get()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


SIZE_MAX = 2 ** (8 * ctypes.sizeof(ctypes.c_size_t)) - 1


def text(raw):
    return raw.decode("utf-8", "replace") if raw else ""


def loaded():
    """Whether the library is loaded already (so that describing an error never triggers a load)."""
    return "lib" in globals()


def status_string(status):
    return text(get().cudot_status_string(status))


def last_error(ptr):
    """Message of this thread's last failure on ctx `ptr`, or of its last failed call without a context
    (cudot_init, cudot_deinit, the two joins of partials, and the calls on own arrays) if None."""
    return text(get().cudot_last_error(ptr))


def deinit_message():
    """This thread's failed cudot_deinit's message; "" from a library of 1.5.0 or older, which kept it
    nowhere (cudot_last_error(NULL) would give an unrelated older failure)."""
    return last_error(None) if get().cudot_version() > 10500 else ""
