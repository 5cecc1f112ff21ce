"""Dots of device arrays: cudot.dot against torch.dot and cupy.dot, f32 and f64, n = 2^10 .. 2^26.

    CUDOT_LIBRARY=/path/to/build/libcudot.so python3 bench/own_arrays_bench.py results.json [--repeats 200]

Each call is timed alone with time.perf_counter, synchronised: torch and cupy calls include a
synchronize of the device after them (their dot returns before the GPU has finished); cudot.dot already
waits for its result, so nothing is added. The median of the repeats is reported, after warm-up calls.
The same two arrays are read on every repeat: up to 2^20 elements they stay in the GPU's L2 cache.
cudot is timed on CuPy's arrays (read through __cuda_array_interface__) and on PyTorch's tensors (read
through DLPack), beside each framework's own dot on the same arrays. A framework that is missing (or sees
no GPU) has its two columns skipped; with neither, the table is empty. Prints a table and writes the
numbers as JSON to the path given.
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import cudot  # noqa: E402  (this folder's package, when run from the source tree)

SIZES = [2 ** 10, 2 ** 12, 2 ** 14, 2 ** 16, 2 ** 20, 2 ** 26]
DTYPES = ["float32", "float64"]


def optional(name):
    """The framework module if it is installed and sees a GPU, else None (with the reason printed)."""
    try:
        module = __import__(name)
    except ImportError as e:
        print(f"# {name}: not installed ({e}); its column is skipped")
        return None
    try:
        usable = module.cuda.is_available() if name == "torch" else module.cuda.runtime.getDeviceCount() > 0
    except Exception as e:
        usable = False
        print(f"# {name}: no GPU ({e})")
    return module if usable else None


def median_seconds(call, repeats, warmup=10):
    for _ in range(warmup):
        call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def inputs(n, dtype, seed=1):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)


def device_arrays(name, module, xh, yh):
    """(x, y, synchronize) on the GPU, made by the framework `name`."""
    if name == "cupy":
        return module.asarray(xh), module.asarray(yh), module.cuda.Device().synchronize
    return module.from_numpy(xh).cuda(), module.from_numpy(yh).cuda(), module.cuda.synchronize


def time_pair(module, x, y, sync, want, repeats):
    """(cudot seconds, the framework's seconds) on the same arrays, after checking cudot's bits."""
    sync()
    assert np.float64(cudot.dot(x, y)).tobytes() == want

    def framework_dot():
        module.dot(x, y)
        sync()
    return median_seconds(lambda: cudot.dot(x, y), repeats), median_seconds(framework_dot, repeats)


def measure(n, dtype, frameworks, repeats):
    """{column: median seconds} for one size and type. cudot is timed on each framework's arrays (CuPy's
    reach it through __cuda_array_interface__, PyTorch's through DLPack), and each of its results is
    checked bit for bit against cudot.dot of the host copies (itself a HOST context's bits)."""
    row = {}
    if not frameworks:
        return row
    xh, yh = inputs(n, dtype)
    want = np.float64(cudot.dot(xh, yh)).tobytes()
    for name, module in frameworks:
        x, y, sync = device_arrays(name, module, xh, yh)
        row[f"cudot({name})"], row[name] = time_pair(module, x, y, sync, want, repeats)
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json_path", help="where to write the results as JSON")
    parser.add_argument("--repeats", type=int, default=200, help="timed calls per cell (default 200)")
    args = parser.parse_args()
    cupy, torch = optional("cupy"), optional("torch")
    frameworks = [(name, m) for name, m in (("cupy", cupy), ("torch", torch)) if m is not None]
    columns = [c for name, _ in frameworks for c in (f"cudot({name})", name)]
    print(f"# cudot {cudot.library_version()} (binding {cudot.__version__}), median of {args.repeats} "
          f"synchronised calls, microseconds")
    if not columns:
        print("# neither CuPy nor PyTorch with a GPU: there is nothing to time")
    print(f"{'dtype':8} {'n':>10} " + " ".join(f"{c:>12}" for c in columns))
    rows = []
    for dtype in DTYPES:
        for n in SIZES:
            row = measure(n, dtype, frameworks, args.repeats)
            rows.append({"dtype": dtype, "n": n, "seconds": row})
            print(f"{dtype:8} {n:>10} " + " ".join(f"{row[c] * 1e6:>12.1f}" for c in columns), flush=True)
    gpu = None
    if torch is not None:
        gpu = torch.cuda.get_device_name()
    elif cupy is not None:
        gpu = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    report = {"library": cudot.library_version(), "binding": cudot.__version__, "python": platform.python_version(),
              "numpy": np.__version__, "cupy": getattr(cupy, "__version__", None),
              "torch": getattr(torch, "__version__", None), "gpu": gpu, "repeats": args.repeats,
              "timing": "median of time.perf_counter around each call; torch/cupy calls followed by a device "
                        "synchronize, cudot.dot waits for its result itself",
              "columns": columns, "rows": rows}
    with open(args.json_path, "w") as f:
        json.dump(report, f, indent=1)
    print(f"# wrote {args.json_path}")


if __name__ == "__main__":
    main()
