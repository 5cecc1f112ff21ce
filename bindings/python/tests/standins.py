"""Stand-ins for CuPy arrays and PyTorch tensors over HOST numpy memory, and for the two modules, so that
the binding's short ways for them (cudot/_fast.py) run, and are timed, where neither framework nor a GPU
is: the library takes the memory for host memory and the CPU computes.

Each stand-in has the attributes cudot reads (CuPy: data.ptr, dtype, shape, strides; PyTorch:
data_ptr(), dtype, shape, stride(), requires_grad, is_cuda, layout, is_neg(), get_device()) as cheap
C-level callables, and the protocol the binding would otherwise use (CuPy: __cuda_array_interface__ v3
naming the module's current stream; PyTorch: __dlpack__ and __dlpack_device__ of a CUDA device), which
counts its uses: a use means the short way was not taken.

The modules are made once (a recognised type is remembered with its module's stream function); put them
in sys.modules with `installed()` (or monkeypatch.setitem) only while they are used: they are not CuPy
or PyTorch.
"""
import contextlib
import ctypes
import sys
import types

import numpy as np

KDL_CUDA = 2


def _make_cupy(name="cupy"):
    module = types.ModuleType(name)
    module.current = types.SimpleNamespace(ptr=0)  # the current stream (CuPy's null stream: ptr 0)

    def get_current_stream():
        return module.current

    module.cuda = types.SimpleNamespace(get_current_stream=get_current_stream)

    class ndarray:
        """A CuPy array's face over a 1-D (or any) numpy array's memory."""
        protocol_uses = 0

        def __init__(self, a):
            self.base = a  # keeps the memory alive
            self.data = types.SimpleNamespace(ptr=a.ctypes.data)
            self.dtype, self.shape, self.strides, self.size = a.dtype, a.shape, a.strides, a.size

        @property
        def __cuda_array_interface__(self):
            ndarray.protocol_uses += 1  # counted on this class, whatever subclass self is of
            a = self.base
            return dict(version=3, shape=a.shape, typestr=a.dtype.str, data=(a.ctypes.data, False),
                        strides=None if a.flags.c_contiguous else a.strides,
                        stream=module.current.ptr or 1)

    ndarray.__module__ = name
    module.ndarray = ndarray
    return module


def _exportable(a):
    """A view of a's memory that numpy's __dlpack__ exports: writable (numpy refuses read-only arrays,
    e.g. broadcast ones) and bool as uint8 (numpy has no DLPack bool; cudot reads both as 0/1 bytes)."""
    if a.dtype == np.bool_:
        a = a.view(np.uint8)
    if a.flags.writeable or a.size == 0:
        return a
    low = a.ctypes.data + sum(min(0, s * (e - 1)) for s, e in zip(a.strides, a.shape))
    span = a.ctypes.data - low + max(0, *(s * (e - 1) for s, e in zip(a.strides, a.shape))) + a.itemsize
    memory = (ctypes.c_char * span).from_address(low)  # a's own memory, kept alive by the stand-in
    return np.ndarray(a.shape, a.dtype, buffer=memory, offset=a.ctypes.data - low, strides=a.strides)


class _DType:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"standins.torch.{self.name}"


def _make_torch(raw_stream=True, name="torch"):
    """A torch module: with raw_stream, torch._C._cuda_getCurrentRawStream exists (the binding reads the
    stream through it); without, only torch.cuda.current_stream(device).cuda_stream."""
    module = types.ModuleType(name)
    module.streams = {0: 0, 1: 0}  # the current stream of each device (0: PyTorch's default, the legacy one)
    module.strided, module.sparse_coo = object(), object()
    numpy_types = {}
    for dtype_name in ("float32", "float64", "float16", "bfloat16", "int8", "uint8", "bool", "int32", "int16"):
        setattr(module, dtype_name, _DType(dtype_name))
        numpy_types[dtype_name] = getattr(module, dtype_name)
    if raw_stream:
        module._C = types.SimpleNamespace(_cuda_getCurrentRawStream=module.streams.__getitem__)
    else:
        module._C = types.SimpleNamespace()
    module.cuda = types.SimpleNamespace(
        current_stream=lambda device=None: types.SimpleNamespace(cuda_stream=module.streams[device]))

    class Tensor:
        """A CUDA tensor's face over a numpy array's memory (bf16: give uint16 bits and dtype='bfloat16')."""
        protocol_uses = 0

        def __init__(self, a, dtype=None, device=0, requires_grad=False, is_cuda=True, layout=None, neg=False):
            self.base = a
            self.dtype = getattr(module, dtype or a.dtype.name)
            self.shape = a.shape
            self.requires_grad, self.is_cuda = requires_grad, is_cuda
            self.layout = module.strided if layout is None else layout
            self.device_index = device
            # Bound C methods, as cheap to call as PyTorch's own.
            self.data_ptr = a.ctypes.data.__int__
            self.stride = tuple(s // a.itemsize for s in a.strides).__getitem__
            self.is_neg = bool(neg).__bool__
            self.get_device = device.__int__

        def __dlpack__(self, stream=None):
            Tensor.protocol_uses += 1
            if self.requires_grad:
                raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
            return _exportable(self.base).__dlpack__()  # bf16: uint16 bits (cudot.as_bf16 reads them so)

        def __dlpack_device__(self):
            return (KDL_CUDA, self.device_index)

    Tensor.__module__ = name
    module.Tensor = Tensor
    return module


CUPY = _make_cupy()
TORCH = _make_torch()
TORCH_PUBLIC_STREAM = _make_torch(raw_stream=False)  # a torch without _C._cuda_getCurrentRawStream


@contextlib.contextmanager
def installed(*modules):
    """The stand-in modules in sys.modules (under their names) for the duration; what was there before
    is put back."""
    saved = {m.__name__: sys.modules.get(m.__name__) for m in modules}
    try:
        for m in modules:
            sys.modules[m.__name__] = m
        yield
    finally:
        for name, old in saved.items():
            if old is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old
