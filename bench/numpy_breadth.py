"""NumPy-breadth functions against NumPy in the same run on the same data: median, bincount,
histogram and convolve (issue 28's targets: >= 1x NumPy), and add.at. Each hx call includes its wait, so a
figure is the time to have the result. Ratio = NumPy's time / ours (> 1: hx is faster).

Writes bench/results/numpy_breadth.json. Run: python bench/numpy_breadth.py [repeats=5] [n=2097152]
"""

from __future__ import annotations

import os
import statistics
import sys

import numpy as np

import hrxarray as hx
from _common import alternating_timings_s, save_results


def _at(lib, acc, idx, vals):
    """lib.add.at into acc (updated in place, so each call adds again); returns acc."""
    lib.add.at(acc, idx, vals)
    return acc


def main(repeats: int = 5, n: int = 1 << 21) -> None:
    rng = np.random.default_rng(0)
    f = rng.standard_normal(n)
    ints = rng.integers(0, 1000, n)
    sig = rng.standard_normal(1 << 17)
    ker = rng.standard_normal(31)
    f32 = f.astype(np.float32)
    xf, xi, xs, xk, x32 = hx.asarray(f), hx.asarray(ints), hx.asarray(sig), hx.asarray(ker), hx.asarray(f32)
    fnan = np.where(rng.random(n) < 0.1, np.nan, f)
    fnan2 = fnan.reshape(n // 1024, 1024)
    xnan, xnan2 = hx.asarray(fnan), hx.asarray(fnan2)
    cases = {
        f"median of {n:,} float64": (lambda: hx.median(xf), lambda: np.median(f)),
        f"nanmedian of {n:,} float64": (lambda: hx.nanmedian(xf), lambda: np.nanmedian(f)),
        f"nanmedian of {n:,} float64, 10% NaN": (lambda: hx.nanmedian(xnan), lambda: np.nanmedian(fnan)),
        f"nanmedian of {n:,} float64, 10% NaN, along axis 1 of {n // 1024:,} x 1024":
            (lambda: hx.nanmedian(xnan2, axis=1), lambda: np.nanmedian(fnan2, axis=1)),
        f"bincount of {n:,} ints < 1000": (lambda: hx.bincount(xi), lambda: np.bincount(ints)),
        f"bincount of {n:,} ints < 1000, float64 weights": (lambda: hx.bincount(xi, xf),
                                                            lambda: np.bincount(ints, f)),
        f"histogram of {n:,} float64, 100 bins": (lambda: hx.histogram(xf, 100)[0], lambda: np.histogram(f, 100)),
        f"histogram of {n:,} float32, 100 bins in (-3, 3)": (lambda: hx.histogram(x32, 100, (-3, 3))[0],
                                                            lambda: np.histogram(f32, 100, (-3, 3))),
        f"convolve {sig.size:,} x {ker.size} float64": (lambda: hx.convolve(xs, xk), lambda: np.convolve(sig, ker)),
        f"add.at of {n:,} float64 into 1000 slots": (lambda: _at(hx, acc_hx, xi, xf), lambda: _at(np, acc_np, ints, f)),
    }
    acc_np, acc_hx = np.zeros(1000), hx.asarray(np.zeros(1000))
    rows, measured = [], {}
    for name, (ours, peer) in cases.items():
        def run_ours(fn=ours):
            hx.asarray(fn()).block_until_ready()

        t_ours, t_peer = alternating_timings_s(run_ours, peer, repeats)
        o, p = statistics.median(t_ours) * 1e3, statistics.median(t_peer) * 1e3
        measured[name] = {"hx_s": t_ours, "numpy_s": t_peer}
        rows.append({"figure": f"{name} (ms, median of {repeats})", "value": o, "unit": "ms", "peer": "numpy",
                     "peer_value": p, "ratio": p / o, "ratio_label": "NumPy time / ours"})
        print(f"{name:44s} hx {o:8.2f} ms   numpy {p:8.2f} ms   ratio {p / o:5.2f}x", flush=True)
    save_results("numpy_breadth", {"figure": "NumPy-breadth functions vs NumPy", "n": n, "repeats": repeats,
                                   "threads": int(os.environ.get("HRXARRAY_NUM_THREADS", 0)) or os.cpu_count(),
                                   "numpy": np.__version__, "table": rows, "measured_s": measured})


if __name__ == "__main__":
    main(*(int(v) for v in sys.argv[1:3]))
