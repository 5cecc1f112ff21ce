#!/usr/bin/env python3
"""plot_accuracy.py - relative error against condition number from cudot-accuracy's JSON, as a PNG.

usage: plot_accuracy.py ACCURACY.json OUT.png      (needs matplotlib: Debian's python3-matplotlib)
"""
import json
import sys

from plot_common import pyplot

plt = pyplot()  # exits with SKIPPED where matplotlib is missing (CTest reports a skip, never a pass)

FLOOR = 1e-22  # exact results (error 0) are drawn here
CEIL = 1e3  # errors beyond this (no correct digit at all) are drawn here


def main(src, dst):
    with open(src) as f:
        data = json.load(f)
    n = data["n"]
    u = 2.0 ** -53
    gamma = (n - 1) * u / (1 - (n - 1) * u)
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.5), sharey=True)
    for ax, dtype in zip(axes, ("f32", "f64")):
        rows = [s for s in data["samples"] if s["dtype"] == dtype and s["condition"]]
        conds = [s["condition"] for s in rows]
        for key, label, marker in (("naive", "naive loop in the input precision", "x"),
                                   ("openblas", "OpenBLAS dot", "s"), ("cublas", "cuBLAS dot", "^"),
                                   ("cudot_host", "cudot HOST", "o"), ("cudot_gpu", "cudot GPU (MANAGED)", ".")):
            pts = [(c, min(max(s[key], FLOOR), CEIL)) for c, s in zip(conds, rows) if s.get(key) is not None]
            if pts:
                ax.scatter([p[0] for p in pts], [p[1] for p in pts], marker=marker, s=28, label=label)
        lo, hi = min(conds), max(conds)
        xs = [lo * (hi / lo) ** (i / 50) for i in range(51)]
        if dtype == "f32":
            ax.plot(xs, [min(CEIL, gamma * c / 2) for c in xs], "k--", lw=0.8, label="bound: gamma(n-1) cond/2")
        else:
            ax.plot(xs, [min(CEIL, u + gamma * gamma * c / 2) for c in xs], "k--", lw=0.8,
                    label="bound: u + gamma(n-1)^2 cond/2")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_ylim(FLOOR / 3, CEIL * 3)
        ax.set_xlabel("condition number 2 sum|x y| / |x.y|")
        ax.set_title(f"{dtype} inputs, n = {n} (GenDot)")
        ax.grid(True, which="major", lw=0.3)
        ax.legend(fontsize=7, loc="upper left")
    axes[0].set_ylabel(f"relative error (0 drawn at {FLOOR:g}, above {CEIL:g} at {CEIL:g})")
    fig.tight_layout()
    fig.savefig(dst, dpi=110)
    print(f"wrote {dst}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
