"""Manipulation, creation and contraction functions against NumPy in the same run: roll, tile,
repeat, pad (constant and reflect), concat, flip-then-copy, tril, and einsum/tensordot contractions,
on 16 M float32 elements (4096 x 4096) unless the case says otherwise. Each hx call includes its
wait, so a figure is the time to have the result. Ratio = NumPy's time / ours (> 1: hx is faster).
The first row, hx's own copy into a fresh array, is the floor the data-movement rows share.

Writes bench/results/manipulation.json. Run: python bench/manipulation.py [repeats=5] [side=4096]
"""

from __future__ import annotations

import os
import statistics
import sys

import numpy as np

import hrxarray as hx
from _common import alternating_timings_s, save_results


def main(repeats: int = 5, side: int = 4096) -> None:
    a = (np.arange(side * side, dtype=np.float32) % 1009).reshape(side, side)
    x = hx.asarray(a)
    m = (np.arange(512 * 512, dtype=np.float32) % 17 - 8).reshape(512, 512)
    y = hx.asarray(m)
    cases = {
        # The floor of every row below: a fresh 64 MB result is a new mapping whose first touch
        # page-faults, where NumPy's malloc reuses the block it just freed.
        "x.copy() (floor: a fresh result)": (lambda: x.copy(), lambda: a.copy()),
        "roll (axis 1)": (lambda: hx.roll(x, 17, axis=1), lambda: np.roll(a, 17, axis=1)),
        "roll (flattened)": (lambda: hx.roll(x, 12345), lambda: np.roll(a, 12345)),
        "tile (2, 1) of a half": (lambda: hx.tile(x[: side // 2], (2, 1)), lambda: np.tile(a[: side // 2], (2, 1))),
        "repeat 2 along axis 0 of a half": (lambda: hx.repeat(x[: side // 2], 2, axis=0),
                                            lambda: np.repeat(a[: side // 2], 2, axis=0)),
        "pad 8 constant": (lambda: hx.pad(x, 8), lambda: np.pad(a, 8)),
        "pad 8 reflect": (lambda: hx.pad(x, 8, mode="reflect"), lambda: np.pad(a, 8, mode="reflect")),
        "concat of two halves, axis 1": (lambda: hx.concat([x[:, : side // 2], x[:, side // 2:]], axis=1),
                                         lambda: np.concatenate([a[:, : side // 2], a[:, side // 2:]], axis=1)),
        "flip, then copy": (lambda: hx.flip(x).copy(), lambda: np.flip(a).copy()),
        "tril": (lambda: hx.tril(x), lambda: np.tril(a)),
        "einsum ij,jk->ik 512^2": (lambda: hx.einsum("ij,jk->ik", y, y), lambda: np.einsum("ij,jk->ik", m, m)),
        "einsum ij,kj->ik 512^2 (optimize)": (lambda: hx.einsum("ij,kj->ik", y, y, optimize=True),
                                              lambda: np.einsum("ij,kj->ik", m, m, optimize=True)),
        "tensordot axes=1 512^2": (lambda: hx.tensordot(y, y, axes=1), lambda: np.tensordot(m, m, axes=1)),
    }
    rows, measured = [], {}
    for name, (ours, peer) in cases.items():
        def run_ours(f=ours):
            f().block_until_ready()

        t_ours, t_peer = alternating_timings_s(run_ours, peer, repeats)
        o, p = statistics.median(t_ours) * 1e3, statistics.median(t_peer) * 1e3
        measured[name] = {"hx_s": t_ours, "numpy_s": t_peer}
        rows.append({"figure": f"{name} (ms, median of {repeats})", "value": o, "unit": "ms", "peer": "numpy",
                     "peer_value": p, "ratio": p / o, "ratio_label": "NumPy time / ours"})
        print(f"{name:36s} hx {o:8.2f} ms   numpy {p:8.2f} ms   ratio {p / o:5.2f}x", flush=True)
    save_results("manipulation", {"figure": "manipulation and contraction functions vs NumPy", "side": side,
                                  "repeats": repeats,
                                  "threads": int(os.environ.get("HRXARRAY_NUM_THREADS", 0)) or os.cpu_count(),
                                  "numpy": np.__version__, "table": rows, "measured_s": measured})


if __name__ == "__main__":
    main(*(int(v) for v in sys.argv[1:3]))
