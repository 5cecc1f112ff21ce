"""Many dots in one call on CuPy and PyTorch arrays: cudot.vecdot against the frameworks' own batched dots,
interpreter included, on one GPU, with the verdict lines of the rows targets that need Python:

  B3  at every B1 shape (256 MiB an operand, rows of 32 .. 2^20, f32 and f64), cudot >= 1.0 x the
      fastest of torch.linalg.vecdot, (x * y).sum(-1) in torch and CuPy, and cupy.einsum
  B7  10^4 rows x 1024 f32: cudot.vecdot >= 3 x faster than torch.linalg.vecdot and than CuPy's fastest
      form

    CUDOT_LIBRARY=/path/to/libcudot.so python3 bench/rows_peers.py [--quick]

Every call is timed with the stream synchronized after it, as a caller that needs the numbers does:
cudot.vecdot with host results (blocking, returns numpy) and with a device `out` (then the stream is
synchronized); the frameworks' results stay on the GPU. Each figure is the median, in microseconds, of
rounds in which the contenders take turns. cudot's results are checked against cudot.dot on sampled rows,
bit for bit.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, ".."))
import cudot  # noqa: E402


def timed(cases, rounds):
    """{name: median µs}: the cases take turns in every round."""
    samples = {name: [] for name, _ in cases}
    for r in range(rounds + 3):
        for name, call in cases:
            t0 = time.perf_counter()
            call()
            dt = (time.perf_counter() - t0) * 1e6
            if r >= 3:
                samples[name].append(dt)
    return {name: statistics.median(v) for name, v in samples.items()}


def synced(stream, f):
    """f, then a wait for `stream`: a caller that needs the numbers waits for them."""
    def call():
        f()
        stream.synchronize()
    return call


def verdict(name, value, goal, at_least=True):
    met = value >= goal if at_least else value <= goal
    print(f"{name:<64} {value:8.3f} {'>=' if at_least else '<='}{goal:<6} {'met' if met else 'MISSED'}")


def main():
    quick = "--quick" in sys.argv
    import cupy as cp
    import torch
    rounds = 5 if quick else 30
    operand_bytes = (16 if quick else 256) << 20
    stream = cp.cuda.Stream(non_blocking=True)
    tstream = torch.cuda.ExternalStream(stream.ptr)
    print(f"cudot {cudot.library_version()}  rows_peers.py{' --quick' if quick else ''}  "
          f"{torch.cuda.get_device_name()}  torch {torch.__version__}  cupy {cp.__version__}")
    print(f"{'':4} {'type':5} {'row':>8} {'rows':>8} {'cudot':>9} {'cudot_out':>9} {'torch_vd':>9} {'torch_sum':>9} "
          f"{'cupy_sum':>9} {'einsum':>9} {'vs_best':>7} check")
    worst_b3 = None
    for dtype in ("float32", "float64"):
        size = np.dtype(dtype).itemsize
        for n in (32, 256, 1024, 8192, 1 << 16, 1 << 20):
            count = operand_bytes // size // n
            with stream:
                x = cp.random.standard_normal((count, n), dtype=dtype)
                y = cp.random.standard_normal((count, n), dtype=dtype)
                out = cp.empty(count, dtype=cp.float64)
            stream.synchronize()
            tx, ty = torch.from_dlpack(x), torch.from_dlpack(y)
            ptr = stream.ptr

            with torch.cuda.stream(tstream):
                cases = [
                    ("cudot", lambda: cudot.vecdot(x, y, stream=ptr)),
                    ("cudot_out", synced(stream, lambda: cudot.vecdot(x, y, out=out, stream=ptr))),
                    ("torch_vd", synced(stream, lambda: torch.linalg.vecdot(tx, ty))),
                    ("torch_sum", synced(stream, lambda: (tx * ty).sum(-1))),
                ]
                with stream:
                    cases += [("cupy_sum", synced(stream, lambda: (x * y).sum(-1))),
                              ("einsum", synced(stream, lambda: cp.einsum("ij,ij->i", x, y)))]
                    t = timed(cases, rounds)
            got = cudot.vecdot(x, y, stream=ptr)
            sample = np.unique(np.linspace(0, count - 1, 16).astype(int))
            ok = all(np.float64(got[i]).tobytes() == np.float64(cudot.dot(x[i], y[i], stream=ptr)).tobytes()
                     for i in sample)
            mine = min(t["cudot"], t["cudot_out"])
            best = min(t[k] for k in ("torch_vd", "torch_sum", "cupy_sum", "einsum"))
            ratio = best / mine
            worst_b3 = ratio if worst_b3 is None else min(worst_b3, ratio)
            print(f"B3   {dtype[:1] + dtype[-2:]:5} {n:8} {count:8} {t['cudot']:9.1f} {t['cudot_out']:9.1f} "
                  f"{t['torch_vd']:9.1f} {t['torch_sum']:9.1f} {t['cupy_sum']:9.1f} {t['einsum']:9.1f} {ratio:7.2f} "
                  f"{'ok' if ok else 'MISMATCH'}")
            del x, y, tx, ty, out
    # B7: 10^4 x 1024 f32, interpreter included.
    with stream:
        x = cp.random.standard_normal((10000, 1024), dtype="float32")
        y = cp.random.standard_normal((10000, 1024), dtype="float32")
        out = cp.empty(10000, dtype=cp.float64)
    stream.synchronize()
    tx, ty = torch.from_dlpack(x), torch.from_dlpack(y)
    ptr = stream.ptr

    with torch.cuda.stream(tstream), stream:
        t = timed([("cudot", lambda: cudot.vecdot(x, y, stream=ptr)),
                   ("cudot_out", synced(stream, lambda: cudot.vecdot(x, y, out=out, stream=ptr))),
                   ("torch_vd", synced(stream, lambda: torch.linalg.vecdot(tx, ty))),
                   ("cupy_sum", synced(stream, lambda: (x * y).sum(-1))),
                   ("einsum", synced(stream, lambda: cp.einsum("ij,ij->i", x, y)))], 20 if quick else 300)
    print("B7   10^4 x 1024 f32, µs: " + ", ".join(f"{k} {v:.1f}" for k, v in t.items()))
    mine = min(t["cudot"], t["cudot_out"])
    print()
    verdict("B3 cudot vs the fastest of torch and CuPy (worst shape)", worst_b3, 1.0)
    verdict("B7 10^4 x 1024 f32: torch.linalg.vecdot / cudot.vecdot", t["torch_vd"] / mine, 3.0)
    verdict("B7 10^4 x 1024 f32: CuPy's fastest / cudot.vecdot", min(t["cupy_sum"], t["einsum"]) / mine, 3.0)


if __name__ == "__main__":
    main()
