"""Dots on arrays you already have (library 1.7): numpy arrays of any stride, then, where CuPy or PyTorch
with a GPU are installed, their device arrays, on a stream, and the asynchronous form. Nothing is copied:
the library reads each array where it is. Every result has the bits of a HOST context."""
import numpy as np

import cudot

rng = np.random.default_rng(1)
n = 1_000_000
x = rng.standard_normal(n).astype(np.float32)
y = rng.standard_normal(2 * n)                     # float64, twice as long

print(f"cudot {cudot.library_version()}")
print(f"f32 . f64 (every other y)       = {cudot.dot(x, y[::2])!r}")
print(f"x reversed . y reversed         = {cudot.dot(x[::-1], y[:n][::-1])!r}")
print(f"x . 0.5 repeated (stride 0)     = {cudot.dot(x, np.broadcast_to(np.float16(0.5), (n,)))!r}")
mask = x > 1                                       # bool, read as 0/1 bytes
print(f"sum of x above 1 (x . mask)     = {cudot.dot(x, mask)!r}")
bits = cudot.bf16_from_float(x)                    # numpy has no bfloat16: bit patterns, marked as such
print(f"bf16(x) . f32                   = {cudot.dot(cudot.as_bf16(bits), x)!r}")

# The same bits as a HOST context holding the same values:
with cudot.Context(n, "f32", memory="host", y_dtype="f64") as ctx:
    ctx.x[:], ctx.y[:] = x, y[::2]
    assert cudot.dot(x, y[::2]) == ctx.dot()

# Partials of pieces (each starting on a tile) join to the dot of the whole.
cut = 40 * cudot.TILE_ELEMENTS
parts = np.concatenate([cudot.tile_partials(x[:cut], y[:cut]), cudot.tile_partials(x[cut:], y[cut:n])])
assert cudot.join_partials(parts, "f32", "f64") == cudot.dot(x, y[:n])

# Page-locked once, read over the bus by a GPU if there is one (the CPU reads it otherwise).
with cudot.register_host(x):
    print(f"registered x . x                = {cudot.dot(x, x)!r}")

try:
    import cupy
    cupy.cuda.runtime.getDeviceCount()
except Exception:
    cupy = None
if cupy is not None:
    xd, yd = cupy.asarray(x), cupy.asarray(y)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:                                   # the arrays' producer stream: the work runs there
        print(f"CuPy f32 . f64 (on a stream)    = {cudot.dot(xd, yd[::2])!r}")
        out = cupy.zeros(1)
        cudot.dot_async(xd, yd[::2], out, stream=stream)   # returns at once; out is written in order
    stream.synchronize()
    print(f"CuPy async                      = {float(out.get()[0])!r}")

try:
    import torch
except ImportError:
    torch = None
if torch is not None and torch.cuda.is_available():
    xt = torch.from_numpy(x).cuda().to(torch.bfloat16)   # PyTorch's bfloat16 is read through DLPack
    print(f"PyTorch bf16 . bf16             = {cudot.dot(xt, xt, stream=torch.cuda.current_stream())!r}")
