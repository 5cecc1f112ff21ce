#!/usr/bin/env python3
"""plot.py - turn cudot-bench's JSON into a PNG: GB/s against n per strategy and peer, ceilings as lines
(shaded: the spread of their rounds).

usage: plot.py BENCH.json OUT.png      (needs matplotlib: Debian's python3-matplotlib)
"""
import json
import sys

from plot_common import pyplot

plt = pyplot()  # exits with SKIPPED where matplotlib is missing (CTest reports a skip, never a pass)


# One colour per strategy; the tutorial's design for a strategy (seed-X) is drawn dashed in X's colour.
COLORS = {"auto": "C0", "auto-managed": "C9", "pinned": "C1", "mapped": "C2", "managed": "C3", "host": "C4",
          "cublas": "C5", "openblas": "C6", "openblas-1t": "C7", "openblas-dsdot-1t": "C8"}


def style_of(name):
    """(line style, colour) of a series: seed peers dashed like their strategy, BLAS peers dash-dotted."""
    if name.startswith("seed-"):
        return "--", COLORS.get(name[len("seed-"):])
    if name.startswith(("cublas", "openblas")):
        return "-.", COLORS.get(name)
    return "-", COLORS.get(name)


def main(src, dst):
    with open(src) as f:
        data = json.load(f)
    c = data["ceilings"]
    spread = c.get("spread", {})
    panels = [(dt, sc) for dt in ("f32", "f64") for sc in ("fresh", "resident")]
    fig, axes = plt.subplots(2, 2, figsize=(13, 9), sharex=True)
    for ax, (dtype, scenario) in zip(axes.flat, panels):
        series = {}
        for r in data["rows"]:
            if r["dtype"] != dtype or r["scenario"] not in (scenario, "peer"):
                continue
            series.setdefault(r["what"], []).append((r["n"], r["GBps"]))
        for name, pts in sorted(series.items()):
            pts.sort()
            ls, color = style_of(name)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], ls, color=color, marker="o", ms=3, label=name)
        for key, label, color in (("h2d_GBps", "host->device copy", "k"), ("d2d_GBps", "device copy", "r"),
                                  ("host_read_GBps", "host read (all threads)", "g")):
            if c.get(key):
                ax.axhline(c[key], color=color, lw=0.8, ls=":", label=f"ceiling: {label} {c[key]:.0f} GB/s")
                lo, hi = spread.get(key, (0, 0))
                if 0 < lo < hi:  # how far the rounds of that ceiling spread in this run
                    ax.axhspan(lo, hi, color=color, alpha=0.08, lw=0)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(f"{dtype}, {scenario} inputs")
        ax.set_xlabel("n (elements)")
        ax.set_ylabel("GB/s (input bytes / time)")
        ax.grid(True, which="both", lw=0.3)
        ax.legend(fontsize=7, ncol=2)
    gpu = c.get("gpu") or "no GPU"
    fig.suptitle(f"cudot-bench {data['cudot_version']} on {gpu}{' (--quick)' if data['quick'] else ''}")
    fig.tight_layout()
    fig.savefig(dst, dpi=110)
    print(f"wrote {dst}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
