"""The hx float64 math ufuncs against NumPy's float64 loops, measured in the same run.

Each row is one ufunc over n float64 values (2 M and 16 M by default), both sides writing into
an existing result (``out=``), so the figure is the cost of the math and not of a fresh
allocation's page faults; ours includes the wait for the result. The inputs are those the issue
measured (uniform(0.01, 10)) for every op, plus a row for sin/cos/tan over a wider range
(uniform(-1e4, 1e4)) and one for log1p near 0 (uniform(-0.5, 0.5)). hx's float64 functions are
fmath64.h's vector kernels (Note [float64 kernels]); the issue's figures before them (glibc per
element, ours/NumPy at 2 M): exp 2.03, log 1.70, sin 0.55, tanh 3.92, arctan 1.57, expm1 2.43,
log1p 3.54. Ratio = our time / NumPy's (< 1: hx is faster); the calls alternate so a noisy moment
hits both.

Writes bench/results/math_ufuncs_f64.json (+ .png). Run: python bench/math_ufuncs_f64.py
[repeats=11] (``--quick``: 3 repeats, 2 M only, prints only).
"""

from __future__ import annotations

import os
import statistics
import sys

import numpy as np

import hrxarray as hx
from _common import RESULTS, pyplot, save_results, ufunc_vs_numpy_s

SIZES = (2 * 1024 * 1024, 16 * 1024 * 1024)


def cases(n: int) -> dict:
    rng = np.random.default_rng(7)
    x = rng.uniform(0.01, 10, n)
    wide = rng.uniform(-1e4, 1e4, n)
    small = rng.uniform(-0.5, 0.5, n)
    unit = rng.uniform(-1, 1, n)
    # name: (hx ufunc, numpy ufunc, input)
    return {
        "exp": (hx.exp, np.exp, x),
        "expm1": (hx.expm1, np.expm1, x),
        "log": (hx.log, np.log, x),
        "log2": (hx.log2, np.log2, x),
        "log10": (hx.log10, np.log10, x),
        "log1p": (hx.log1p, np.log1p, x),
        "log1p small": (hx.log1p, np.log1p, small),
        "sin": (hx.sin, np.sin, x),
        "cos": (hx.cos, np.cos, x),
        "tan": (hx.tan, np.tan, x),
        "sin wide": (hx.sin, np.sin, wide),
        "tanh": (hx.tanh, np.tanh, x),
        "arctan": (hx.arctan, np.arctan, x),
        "arcsin": (hx.arcsin, np.arcsin, unit),
        "arccos": (hx.arccos, np.arccos, unit),
        "sinh": (hx.sinh, np.sinh, x),
        "cosh": (hx.cosh, np.cosh, x),
        "arctan2": (hx.arctan2, np.arctan2, x, small),
        "x**y": (hx.power, np.power, x, small * 10),
        "x**2": (hx.power, np.power, x, 2.0),
    }


def main(repeats: int = 11, quick: bool = False) -> None:
    rows, measured = [], {}
    for n in SIZES[:1] if quick else SIZES:
        for name, (ours_f, peer_f, a, *second) in cases(n).items():
            t_ours, t_peer, out = ufunc_vs_numpy_s(ours_f, peer_f, a, second[0] if second else None, repeats)
            o, p = statistics.median(t_ours) * 1e3, statistics.median(t_peer) * 1e3
            rows.append({"figure": f"hx.{name} float64, {n:,} values, out= (ms, median of {repeats})",
                         "op": name, "n": n, "value": o, "unit": "ms", "peer": f"numpy {peer_f.__name__} float64",
                         "peer_value": p, "ratio": o / p, "ratio_label": "ours / NumPy"})
            measured[f"{name} {n}"] = {"hx_ms": [t * 1e3 for t in t_ours], "numpy_ms": [t * 1e3 for t in t_peer]}
            print(f"{name:12s} n={n:>9,} hx {o:8.3f} ms   numpy {p:8.3f} ms   ours/NumPy {o / p:6.2f}x", flush=True)
            del out
    if quick:
        print("--quick: nothing written")
        return
    save_results("math_ufuncs_f64", {"figure": "hx float64 math ufuncs vs NumPy", "sizes": list(SIZES),
                                     "repeats": repeats,
                                     "threads": int(os.environ.get("HRXARRAY_NUM_THREADS", 0)) or os.cpu_count(),
                                     "numpy": np.__version__, "table": rows, "measured_ms": measured})
    plt = pyplot()
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(11, 4))
    names = list(dict.fromkeys(r["op"] for r in rows))
    width = 0.8 / len(SIZES)
    for k, n in enumerate(SIZES):
        ratios = [next(r["ratio"] for r in rows if r["op"] == op and r["n"] == n) for op in names]
        pos = [i + (k - (len(SIZES) - 1) / 2) * width for i in range(len(names))]
        ax.bar(pos, ratios, width, label=f"{n:,} values")
        for p_, r in zip(pos, ratios):
            ax.text(p_, r, f"{r:.2f}", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(names)), names, rotation=20)
    ax.axhline(1.0, color="gray", lw=1, ls="--")
    ax.set_ylabel("hx time / NumPy time (float64)")
    ax.set_title(f"hx float64 math ufuncs, out= (medians of {repeats})")
    ax.legend()
    fig.tight_layout()
    fig.savefig(RESULTS / "math_ufuncs_f64.png", dpi=110)


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    quick = "--quick" in sys.argv
    main(*(int(a) for a in args[:1]), **({"repeats": 3} if quick and not args else {}), quick=quick)
