#!/usr/bin/env python3
"""own_arrays_check.py - dots on caller-owned arrays, checked from outside the test suite.

It uses nothing of the project's test helpers or internal hooks: only the public `cudot` package and,
for the operands, numpy, CuPy, PyTorch and the CUDA runtime's own cudaMalloc (through ctypes), as a
program of a user's would. It answers "does it hold for someone who just installed it?". For every
operand it computes cudot.dot(x, y) where the data lives, then the same values copied to fresh
contiguous host arrays and dotted by a HOST context, and requires the two results to have the same bits
(NaN compared as NaN). A framework that is not importable, or a machine without a GPU, is reported as
skipped, never as passed.

    CUDOT_LIBRARY=/path/to/libcudot.so PYTHONPATH=/path/to/bindings/python python3 tests/python/own_arrays_check.py

It prints one line per source ("numpy: 864 agreed with the host copies, 0 did not"), a "skipped:" line
for each source it could not use and why. Exit status: 0 when every case run agreed, 1 otherwise.
"""
import ctypes
import ctypes.util
import glob
import math
import os
import struct
import sys

import numpy as np

import cudot

SIZES = (0, 1, 7, 1000, 4097, (1 << 20) + 3)
rng = np.random.default_rng(2026)
results = {}  # source -> [agreed, disagreed]
skipped = []


def bits(v):
    return "nan" if math.isnan(v) else struct.pack("<d", v).hex()


def host_reference(xh, yh, x_type, y_type):
    """cudot's HOST context holding the same values (copies): the bits every other place must give."""
    n = len(xh)
    if n == 0:
        return 0.0
    with cudot.Context(n, x_type, memory="host", y_dtype=y_type) as ctx:
        ctx.x[:] = xh
        ctx.y[:] = yh
        return ctx.dot()


def record(source, label, got, want):
    tally = results.setdefault(source, [0, 0])
    if bits(got) == bits(want):
        tally[0] += 1
    else:
        tally[1] += 1
        print(f"MISMATCH {source} {label}: {got!r} ({bits(got)}) against the host copy's {want!r} ({bits(want)})")


def values(n, kind):
    """Host values of an element type, spread over many binades (floats) or the whole range (ints)."""
    if kind in ("i8", "u8"):
        lo, hi = (-128, 128) if kind == "i8" else (0, 256)
        return rng.integers(lo, hi, n).astype(np.int8 if kind == "i8" else np.uint8)
    v = rng.standard_normal(n) * np.exp2(rng.integers(-6, 7, n))
    if kind == "f16":
        return v.astype(np.float16)
    if kind == "bf16":
        return cudot.bf16_from_float(v)  # bit patterns, as the HOST context's bf16 buffer holds them
    return v.astype(np.float32 if kind == "f32" else np.float64)


def numpy_cases():
    kinds = ("f32", "f64", "f16", "bf16", "i8", "u8")
    for n in SIZES:
        for xk in kinds:
            for yk in kinds:
                x, y = values(3 * n + 1, xk), values(3 * n + 1, yk)
                frozen = x[:n].copy()
                frozen.flags.writeable = False  # read-only arrays are accepted too
                layouts = {
                    "contiguous, read-only": (frozen, y[:n]),
                    "reversed": (x[:n][::-1], y[:n][::-1]),
                    "stride 3": (x[::3][:n], y[1::3][:n]),
                    "broadcast y": (x[:n], np.broadcast_to(y[:1], (n,)) if n else y[:0]),
                }
                for name, (xv, yv) in layouts.items():
                    want = host_reference(np.ascontiguousarray(xv), np.ascontiguousarray(yv), xk, yk)
                    # numpy has no bfloat16: bf16 operands are uint16 bit patterns, marked with as_bf16
                    xo = cudot.as_bf16(xv) if xk == "bf16" else xv
                    yo = cudot.as_bf16(yv) if yk == "bf16" else yv
                    record("numpy", f"{xk}.{yk} n={n} {name}", cudot.dot(xo, yo), want)


def cupy_cases():
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # not installed, or no GPU/driver
        skipped.append(f"cupy ({type(e).__name__}: {e})")
        return
    kinds = {"f32": cupy.float32, "f64": cupy.float64, "f16": cupy.float16, "i8": cupy.int8, "u8": cupy.uint8}
    side = cupy.cuda.Stream(non_blocking=True)
    for n in SIZES:
        for xk in kinds:
            for yk in kinds:
                x, y = values(2 * n + 1, xk), values(2 * n + 1, yk)
                with side:  # written on a side stream: the dot must run after those writes
                    xd, yd = cupy.asarray(x), cupy.asarray(y)
                    for name, (xv, yv, xh, yh) in {
                        "contiguous": (xd[:n], yd[:n], x[:n], y[:n]),
                        "stride 2, reversed": (xd[::2][:n][::-1], yd[1::2][:n][::-1], x[::2][:n][::-1], y[1::2][:n][::-1]),
                    }.items():
                        want = host_reference(np.ascontiguousarray(xh), np.ascontiguousarray(yh), xk, yk)
                        record("cupy", f"{xk}.{yk} n={n} {name} (side stream)", cudot.dot(xv, yv), want)
                side.synchronize()


def torch_cases():
    try:
        import torch
        if not torch.cuda.is_available():
            raise RuntimeError("torch.cuda.is_available() is False")
    except Exception as e:
        skipped.append(f"torch ({type(e).__name__}: {e})")
        return
    kinds = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16, "bf16": torch.bfloat16,
             "i8": torch.int8, "u8": torch.uint8}
    side = torch.cuda.Stream()
    for n in SIZES:
        for xk, xt in kinds.items():
            for yk, yt in kinds.items():
                x, y = values(3 * n + 1, xk), values(3 * n + 1, yk)

                def to_device(a, kind, dtype):
                    if kind == "bf16":  # bit patterns into a bfloat16 tensor, unchanged
                        return torch.from_numpy(a.view(np.int16)).cuda().view(torch.bfloat16)
                    return torch.from_numpy(a).cuda().to(dtype)

                with torch.cuda.stream(side):
                    xd, yd = to_device(x, xk, xt), to_device(y, yk, yt)
                    for name, (xv, yv, xh, yh) in {
                        "contiguous": (xd[:n], yd[:n], x[:n], y[:n]),
                        "stride 3": (xd[::3][:n], yd[2::3][:n], x[::3][:n], y[2::3][:n]),
                    }.items():
                        want = host_reference(np.ascontiguousarray(xh), np.ascontiguousarray(yh), xk, yk)
                        got = cudot.dot(xv, yv, stream=torch.cuda.current_stream())
                        record("torch", f"{xk}.{yk} n={n} {name} (side stream)", got, want)
                side.synchronize()


class RawDeviceArray:
    """A cudaMalloc'd 1-D array described by __cuda_array_interface__ v3 (no framework involved)."""

    def __init__(self, runtime, host):
        self.runtime, self.nbytes = runtime, max(host.nbytes, 1)
        self.ptr = ctypes.c_void_p()
        check(runtime.cudaMalloc(ctypes.byref(self.ptr), ctypes.c_size_t(self.nbytes)), "cudaMalloc")
        check(runtime.cudaMemcpy(self.ptr, host.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(host.nbytes), 1),
              "cudaMemcpy")  # 1: cudaMemcpyHostToDevice
        self.__cuda_array_interface__ = {"version": 3, "shape": (len(host),), "typestr": host.dtype.str,
                                         "data": (self.ptr.value or 0, True), "strides": None, "stream": None}

    def free(self):
        check(self.runtime.cudaFree(self.ptr), "cudaFree")


def check(code, call):
    if code != 0:
        raise RuntimeError(f"{call} returned CUDA error {code}")


def cuda_runtime():
    names = [ctypes.util.find_library("cudart")] + sorted(glob.glob("/usr/local/cuda/lib64/libcudart.so*"))
    for name in filter(None, names):
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


def raw_cases():
    runtime = cuda_runtime()
    count = ctypes.c_int(0)
    if runtime is None or runtime.cudaGetDeviceCount(ctypes.byref(count)) != 0 or count.value == 0:
        skipped.append("raw cudaMalloc (no CUDA runtime library or no GPU)")
        return
    for n in SIZES:
        for xk in ("f32", "f64", "f16", "i8", "u8"):
            for yk in ("f32", "f64", "f16", "i8", "u8"):
                x, y = values(n, xk), values(n, yk)
                xd, yd = RawDeviceArray(runtime, x), RawDeviceArray(runtime, y)
                try:
                    record("raw cudaMalloc", f"{xk}.{yk} n={n}", cudot.dot(xd, yd), host_reference(x, y, xk, yk))
                finally:
                    xd.free()
                    yd.free()


def main():
    print(f"cudot {cudot.library_version()} (package {cudot.__version__}), numpy {np.__version__}")
    for cases in (numpy_cases, cupy_cases, torch_cases, raw_cases):
        cases()
    failed = 0
    for source, (agreed, disagreed) in results.items():
        print(f"{source}: {agreed} agreed with the host copies, {disagreed} did not")
        failed += disagreed
    for s in skipped:
        print(f"skipped: {s}")
    if not results:
        print("nothing was checked")
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
