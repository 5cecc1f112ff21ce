"""Status codes and the exceptions raised for them.

Every non-OK status raises a subclass of CudotError that is also the built-in exception Python code
would expect for it (an invalid argument is a ValueError, running out of memory a MemoryError, ...), so
code can catch either. `CudotError.for_status` picks the class; `CudotError(status, message)` itself
still builds a plain CudotError, as it always did.
"""
from __future__ import annotations

import enum
from typing import Dict, Type, Union

from . import _lib


class Status(enum.IntEnum):
    """cudot_status values; equal to the plain ints of the C enum."""
    OK = 0
    INVALID_ARGUMENT = 1
    OUT_OF_MEMORY = 2
    NO_DEVICE = 3
    UNSUPPORTED = 4
    CUDA = 5
    INTERNAL = 6


def _status_name(status: int) -> str:
    # The library's name when it is loaded (it knows statuses newer than this binding); our own spelling
    # of the same names otherwise, so that building an error never loads the library.
    if _lib.loaded():
        return _lib.status_string(status)
    if isinstance(status, Status):
        return "CUDOT_OK" if status == Status.OK else f"CUDOT_ERROR_{status.name}"
    return "CUDOT_ERROR_UNKNOWN"


class CudotError(Exception):
    """A non-OK status from the library. `.status` is a Status (a plain int for values newer than this
    binding), `.status_name` the library's name for it, `.message` the library's explanation."""
    status: Union[Status, int]
    status_name: str
    message: str

    def __init__(self, status: int, message: str = "") -> None:
        super().__init__(status, message)  # keeps the error picklable, as the same class
        try:
            status = Status(status)
        except ValueError:
            pass
        self.status = status
        self.status_name = _status_name(status)
        self.message = message

    def __str__(self) -> str:
        return f"{self.status_name}: {self.message}" if self.message else self.status_name

    @staticmethod
    def for_status(status: int, message: str = "") -> CudotError:
        """The error for a status: the subclass listed for it below, or CudotError for a status newer
        than this binding."""
        return _CLASSES.get(status, CudotError)(status, message)


class InvalidArgumentError(CudotError, ValueError):
    """CUDOT_ERROR_INVALID_ARGUMENT: e.g. n beyond the capacity, a device that does not exist."""


class OutOfMemoryError(CudotError, MemoryError):
    """CUDOT_ERROR_OUT_OF_MEMORY: host, pinned, managed or device memory could not be had."""


class NoDeviceError(CudotError, RuntimeError):
    """CUDOT_ERROR_NO_DEVICE: a GPU strategy was asked for and no usable GPU exists."""


class UnsupportedError(CudotError, NotImplementedError):
    """CUDOT_ERROR_UNSUPPORTED: a valid request this library or device cannot serve (also: a function
    that the loaded library is too old to have)."""


class CudaError(CudotError, RuntimeError):
    """CUDOT_ERROR_CUDA: a CUDA call failed; the message names the call and the error."""


class InternalError(CudotError, RuntimeError):
    """CUDOT_ERROR_INTERNAL: a bug in cudot."""


_CLASSES: Dict[int, Type[CudotError]] = {
    Status.INVALID_ARGUMENT: InvalidArgumentError, Status.OUT_OF_MEMORY: OutOfMemoryError,
    Status.NO_DEVICE: NoDeviceError, Status.UNSUPPORTED: UnsupportedError, Status.CUDA: CudaError,
    Status.INTERNAL: InternalError,
}


def invalid_argument(message: str) -> InvalidArgumentError:
    """The error for a mistake the binding itself finds in a value (its message, not the library's)."""
    return InvalidArgumentError(Status.INVALID_ARGUMENT, message)


def check_without_context(status: int) -> None:
    """Raise the error for a failed call that has no context to hold its message (the joins of partials,
    the calls on own arrays): the message is read with cudot_last_error(NULL), on this same thread."""
    if status != Status.OK:
        raise CudotError.for_status(status, _lib.last_error(None))


def optional_function(name: str):
    """A library function added after 1.0 (listed in _lib.OPTIONAL), or UnsupportedError naming the
    version that added it when the loaded library is older."""
    fn = getattr(_lib.lib, name, None)
    if fn is None:
        version = _lib.text(_lib.lib.cudot_version_string())
        raise UnsupportedError(Status.UNSUPPORTED, f"the loaded library {version} lacks {name} "
                                                   f"(new in {_lib.OPTIONAL[name]})")
    return fn
