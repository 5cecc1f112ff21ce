"""Finds libcudot, refuses an incompatible major version and declares every C signature used."""
import ctypes
import ctypes.util
import os
import sys

MAJOR = 1  # the cudot.h major version this binding was written for


class Config(ctypes.Structure):
    """cudot_config as of 1.1 (20 bytes). A 1.0 library accepts it as long as y_dtype is 0."""
    _fields_ = [("size", ctypes.c_uint32), ("dtype", ctypes.c_int32),
                ("memory", ctypes.c_int32), ("device", ctypes.c_int32), ("y_dtype", ctypes.c_int32)]


def check_major(version):
    """Raise ImportError unless `version` (major * 10000 + minor * 100 + patch) has our major."""
    if version // 10000 != MAJOR:
        raise ImportError(f"cudot: the loaded library is version {version // 10000}.{version // 100 % 100}."
                          f"{version % 100}, but this binding needs major version {MAJOR}")


def _candidates():
    """Library names to try, in order: the versioned name of our major first, so that a copy of another
    major version found under the unversioned name never hides the right one."""
    if sys.platform == "win32":
        names = ["cudot.dll"]
    elif sys.platform == "darwin":
        names = [f"libcudot.{MAJOR}.dylib"]
    else:
        names = [f"libcudot.so.{MAJOR}"]
    found = ctypes.util.find_library("cudot")
    if found and found not in names:
        names.append(found)
    return names


def _version_of(lib):
    """The library's cudot_version(), or ImportError if it is not a cudot library."""
    try:
        version_fn = lib.cudot_version
    except AttributeError:
        raise ImportError(f"cudot: {lib._name!r} is not a cudot library (no cudot_version)") from None
    version_fn.restype, version_fn.argtypes = ctypes.c_uint32, []
    return version_fn()


def _open():
    path = os.environ.get("CUDOT_LIBRARY")
    if path:  # an explicit choice: never fall back to another copy behind the user's back
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            raise ImportError(f"cudot: cannot load CUDOT_LIBRARY={path!r}: {e}") from None
        check_major(_version_of(lib))  # before touching other symbols, which another major may lack
        return lib
    tried = []
    for name in _candidates():
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            tried.append(f"{name} (not found)")
            continue
        try:
            check_major(_version_of(lib))
        except ImportError as e:  # another major version, or not cudot: try the next name
            tried.append(f"{name} ({e})")
            continue
        return lib
    raise ImportError(f"cudot: no usable libcudot (tried {'; '.join(tried)}); install it where the "
                      "system linker looks, or set CUDOT_LIBRARY to its full path")


# Functions added after 1.0: a 1.0 library lacks them, and the binding still loads it.
OPTIONAL = {"cudot_get_dtypes": "1.1"}


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
        "cudot_status_string": (ctypes.c_char_p, [c_int]),
        "cudot_last_error": (ctypes.c_char_p, [c_void_p]),  # c_char_p copies the text at once
        "cudot_version_string": (ctypes.c_char_p, []),
    }
    for name, (restype, argtypes) in signatures.items():
        fn = getattr(lib, name, None)
        if fn is None and name in OPTIONAL:
            continue
        if fn is None:
            raise ImportError(f"cudot: the loaded library lacks {name}")
        fn.restype, fn.argtypes = restype, argtypes


def _load():
    lib = _open()
    _declare(lib)
    return lib


lib = _load()
SIZE_MAX = 2 ** (8 * ctypes.sizeof(ctypes.c_size_t)) - 1


def text(raw):
    return raw.decode("utf-8", "replace") if raw else ""


def status_string(status):
    return text(lib.cudot_status_string(status))


def last_error(ptr):
    """Message of the last failure on ctx `ptr`, or of this thread's last failed cudot_init if None."""
    return text(lib.cudot_last_error(ptr))
