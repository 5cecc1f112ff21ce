"""Fill two vectors in place, take their dot product, and say which strategy computed it."""
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
