"""The binding's own cost per cudot.dot, measured without a GPU: cudot.dot against a bare ctypes call of
cudot_dot_arrays on the same memory.

    CUDOT_LIBRARY=/path/to/build/libcudot.so python3 bench/overhead_bench.py [--n 1024] [--json out.json]

Operands, all over the same two host numpy arrays (float32), so the library's CPU path computes each dot:
numpy arrays themselves; stand-ins for CuPy arrays and PyTorch tensors (tests/standins.py: the attributes
cudot reads, under stand-in `cupy` and `torch` modules put in sys.modules for the run), read the short
way; and the same stand-ins read through the protocols (__cuda_array_interface__, DLPack), the way
every CUDA array went before the short way. "bare" is the library call alone: a prebuilt cudot_arrays
and result passed to the declared ctypes function. Each row is the best, over 31 rounds in which the
cases take turns, of the mean of 2000 calls, in microseconds; "overhead" is the row minus "bare".
The stand-ins' attributes are C-level callables, about as cheap as CuPy's and PyTorch's own: on a GPU
machine their real objects add their own attribute costs (and the CUDA stream query) on top.
"""
import argparse
import ctypes
import json
import os
import platform
import sys
import time

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, ".."))
sys.path.insert(0, os.path.join(here, "..", "tests"))
import cudot  # noqa: E402  (this folder's package, when run from the source tree)
import standins  # noqa: E402
from cudot import _arrays, _lib  # noqa: E402


def per_call_us(cases, calls=2000, rounds=31):
    """{name: µs per call}: the best, over `rounds`, of the mean of `calls` calls. The cases take turns
    within each round, so that a busy spell of the machine falls on all of them alike; the best round
    is the one least disturbed by other work."""
    best = {name: float("inf") for name, _ in cases}
    for round_ in range(rounds + 1):
        for name, call in cases:
            start = time.perf_counter()
            for _ in range(calls):
                call()
            if round_:  # round 0 warms up
                best[name] = min(best[name], (time.perf_counter() - start) / calls * 1e6)
    return best


def bare_call(x, y):
    """The library call alone, as a careful ctypes user writes it: everything prebuilt."""
    fn = _lib.lib.cudot_dot_arrays
    arrays = _lib.Arrays(ctypes.sizeof(_lib.Arrays), 0, len(x), _lib.Array(x.ctypes.data, 1, 0, 1),
                         _lib.Array(y.ctypes.data, 1, 0, 1), None, None, None)
    result = ctypes.c_double()
    return lambda: fn(arrays, result)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1024, help="elements per operand (default 1024)")
    parser.add_argument("--json", help="also write the figures as JSON here")
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(args.n).astype(np.float32), rng.standard_normal(args.n).astype(np.float32)
    want = cudot.dot(x, y)
    with standins.installed(standins.CUPY, standins.TORCH):
        cx, cy = standins.CUPY.ndarray(x), standins.CUPY.ndarray(y)
        tx, ty = standins.TORCH.Tensor(x), standins.TORCH.Tensor(y)
        cases = [
            ("bare ctypes call", bare_call(x, y)),
            ("cudot.dot(numpy)", lambda: cudot.dot(x, y)),
            ("cudot.dot(cupy stand-in)", lambda: cudot.dot(cx, cy)),
            ("cudot.dot(torch stand-in)", lambda: cudot.dot(tx, ty)),
            ("cudot.dot(torch stand-in, stream=int)", lambda: cudot.dot(tx, ty, stream=7)),
            ("numpy through __array_interface__", lambda: _arrays._dot_through_protocols(x, y, None)),
            ("cupy stand-in through __cuda_array_interface__", lambda: _arrays._dot_through_protocols(cx, cy, None)),
            ("torch stand-in through DLPack", lambda: _arrays._dot_through_protocols(tx, ty, None)),
        ]
        for name, call in cases[1:]:
            assert np.float64(call()).tobytes() == np.float64(want).tobytes(), name
            if name.startswith("cudot.dot"):  # the short way reads no protocol
                assert (standins.CUPY.ndarray.protocol_uses, standins.TORCH.Tensor.protocol_uses) == (0, 0), name
        print(f"# cudot {cudot.library_version()} (binding {cudot.__version__}), n = {args.n} float32 on the "
              f"CPU path, Python {platform.python_version()}, numpy {np.__version__}; µs per call")
        print(f"{'':48} {'per call':>9} {'overhead':>9}")
        rows = per_call_us(cases)
        for name, _ in cases:
            print(f"{name:48} {rows[name]:9.2f} {rows[name] - rows['bare ctypes call']:9.2f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"n": args.n, "python": platform.python_version(), "numpy": np.__version__,
                       "library": cudot.library_version(), "microseconds_per_call": rows}, f, indent=1)


if __name__ == "__main__":
    main()
