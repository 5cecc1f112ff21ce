"""Fill two vectors in place, take their dot product, and say which strategy computed it; then a mixed
pair (float16 x with a bool mask) and bf16 data."""
import numpy as np

import cudot

n = 1_000_000
with cudot.Context(n, dtype="f32") as ctx:  # memory="auto": a GPU if there is one, else the CPU
    x, y = ctx.inputs()                      # numpy views of the library's buffers: no copies
    x[:] = np.arange(n) % 7 - 3
    y[:] = (np.arange(n) % 5) * 0.25
    result = ctx.dot()
    print(f"cudot {cudot.library_version()}: memory={ctx.memory}, device={ctx.device}")
    print(f"dot = {result!r} (numpy in float64: {float(np.dot(x.astype(np.float64), y.astype(np.float64)))!r})")
    print(f"first 1000 only: {ctx.dot(1000)!r}")
    del x, y  # with no view left, leaving the block frees the buffers at once

values = np.random.default_rng(1).standard_normal(n)
with cudot.Context(n, dtype="f16", y_dtype=bool) as ctx:  # x float16, y a mask (bytes 0/1)
    ctx.x[:] = values                                      # numpy rounds to float16
    ctx.y[:] = ctx.x > 1
    print(f"{ctx.dtypes}: sum of x above 1 = {ctx.dot()!r} "
          f"(numpy: {float(ctx.x[ctx.y].astype(np.float64).sum())!r})")

with cudot.Context(n, dtype="bf16", y_dtype="f32") as ctx:  # numpy has no bfloat16: x is uint16 bits
    ctx.x[:] = cudot.bf16_from_float(values)
    ctx.y[:] = 1
    as_float = cudot.bf16_to_float(ctx.x).astype(np.float64)
    print(f"{ctx.dtypes}: sum of x in bf16 = {ctx.dot()!r} (numpy: {float(as_float.sum())!r})")
