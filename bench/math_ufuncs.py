"""The hx float32 math ufuncs against NumPy's float32 loops, measured in the same run.

Each row is one ufunc over n float32 values (default 2 M, the size an issue measured before
hrx::fmath: tanh 80x NumPy, expm1 54x, log1p 47x, arctan 43x, sin/cos 23x, log 14x, exp 9x,
``x**2`` 28x), both sides writing into an existing result (``out=``), so the figure is the cost
of the math and not of a fresh allocation's page faults; ours includes the wait for the result.
Inputs are the op's usual domain (positive for log and sqrt, |x| <= 1 for log1p's neighbourhood
of 0, a few periods for the trigonometric functions). ``x**2`` is ``hx.power(x, 2)`` against
``np.power(x, 2)``; its row also records whether the result equals ``x * x`` bit for bit (it
must: one rounding of an exact square). Ratio = our time / NumPy's (< 1: hx is faster); the
calls alternate so a noisy moment hits both.

Rows for 2 M and 16 M values (the sizes issue 28 asks; 16 M is beyond the caches, so memory
traffic weighs more there). Writes bench/results/math_ufuncs.json (+ .png, 2 M). Run: python
bench/math_ufuncs.py [repeats=15] [n ...] (default n: 2097152 16777216; ``--quick``: 5 repeats,
2 M only, prints only).
"""

from __future__ import annotations

import os
import statistics
import sys

import numpy as np

import hrxarray as hx
from _common import RESULTS, pyplot, save_results, ufunc_vs_numpy_s


def cases(n: int) -> dict:
    rng = np.random.default_rng(7)
    wide = rng.uniform(-10, 10, n).astype(np.float32)
    pos = rng.uniform(1e-3, 1e3, n).astype(np.float32)
    small = rng.uniform(-0.9, 1.0, n).astype(np.float32)
    trig = rng.uniform(-20, 20, n).astype(np.float32)
    unit = rng.uniform(-1, 1, n).astype(np.float32)
    # name: (hx ufunc, numpy ufunc, input, extra operand or None)
    return {
        "exp": (hx.exp, np.exp, wide, None),
        "log": (hx.log, np.log, pos, None),
        "log2": (hx.log2, np.log2, pos, None),
        "log10": (hx.log10, np.log10, pos, None),
        "expm1": (hx.expm1, np.expm1, wide, None),
        "log1p": (hx.log1p, np.log1p, small, None),
        "sin": (hx.sin, np.sin, trig, None),
        "cos": (hx.cos, np.cos, trig, None),
        "tan": (hx.tan, np.tan, trig, None),
        "tanh": (hx.tanh, np.tanh, wide, None),
        "arctan": (hx.arctan, np.arctan, wide, None),
        "sqrt": (hx.sqrt, np.sqrt, pos, None),
        "x**2": (hx.power, np.power, wide, 2),
        "x**3": (hx.power, np.power, wide, 3),
        "arcsin": (hx.arcsin, np.arcsin, unit, None),
        "arccos": (hx.arccos, np.arccos, unit, None),
        "sinh": (hx.sinh, np.sinh, wide, None),
        "cosh": (hx.cosh, np.cosh, wide, None),
        "arctan2": (hx.arctan2, np.arctan2, wide, trig),
        "x**2.5": (hx.power, np.power, pos, 2.5),
        "x**y": (hx.power, np.power, pos, small * 10),
    }


def main(repeats: int = 15, sizes: tuple[int, ...] = (2 * 1024 * 1024, 16 * 1024 * 1024),
         quick: bool = False) -> None:
    rows, measured = [], {}
    for n in sizes:
        measure(n, repeats, rows, measured)
    if quick:
        print("--quick: nothing written")
        return
    save_results("math_ufuncs", {"figure": "hx float32 math ufuncs vs NumPy", "sizes": list(sizes),
                                 "repeats": repeats,
                                 "threads": int(os.environ.get("HRXARRAY_NUM_THREADS", 0)) or os.cpu_count(),
                                 "numpy": np.__version__, "table": rows, "measured_ms": measured})
    plot([r for r in rows if r["n"] == sizes[0]], sizes[0], repeats)


def measure(n: int, repeats: int, rows: list, measured: dict) -> None:
    """Time every case at n values; append the rows and the raw timings (keyed 'op@n')."""
    for name, (ours_f, peer_f, a, extra) in cases(n).items():
        if isinstance(extra, np.ndarray):  # a second array operand
            extra = extra.astype(np.float32)
        elif extra is not None:
            extra = np.float32(extra)
        t_ours, t_peer, out = ufunc_vs_numpy_s(ours_f, peer_f, a, extra, repeats)
        o, p = statistics.median(t_ours) * 1e3, statistics.median(t_peer) * 1e3
        row = {"figure": f"hx.{name} float32, {n:,} values, out= (ms, median of {repeats})", "op": name,
               "value": o, "unit": "ms", "peer": f"numpy {peer_f.__name__} float32", "peer_value": p,
               "ratio": o / p, "ratio_label": "ours / NumPy", "n": n}
        if name == "x**2":
            row["equals_x_times_x"] = bool(np.array_equal(np.asarray(out).view(np.uint32), (a * a).view(np.uint32)))
        measured[f"{name}@{n}"] = {"hx_ms": [t * 1e3 for t in t_ours], "numpy_ms": [t * 1e3 for t in t_peer]}
        rows.append(row)
        extra_txt = f"  (== x*x: {row['equals_x_times_x']})" if "equals_x_times_x" in row else ""
        print(f"{name:7s} n={n:>10,} hx {o:8.3f} ms   numpy {p:8.3f} ms   ours/NumPy {o / p:6.2f}x{extra_txt}", flush=True)


def plot(rows: list, n: int, repeats: int) -> None:
    plt = pyplot()
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(9, 4))
    names = [r["op"] for r in rows]
    ax.bar(names, [r["ratio"] for r in rows], color="tab:blue")
    ax.axhline(1.0, color="gray", lw=1, ls="--")
    ax.set_ylabel("hx time / NumPy time (float32)")
    ax.set_title(f"hx float32 math ufuncs, {n:,} values, out= (medians of {repeats})")
    for i, r in enumerate(rows):
        ax.text(i, r["ratio"], f"{r['ratio']:.2f}", ha="center", va="bottom", fontsize=8)
    fig.tight_layout()
    fig.savefig(RESULTS / "math_ufuncs.png", dpi=110)


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    quick = "--quick" in sys.argv
    nums = [int(a) for a in args]
    kw = {"repeats": nums[0]} if nums else ({"repeats": 5} if quick else {})
    if len(nums) > 1:
        kw["sizes"] = tuple(nums[1:])
    elif quick:
        kw["sizes"] = (2 * 1024 * 1024,)
    main(**kw, quick=quick)
