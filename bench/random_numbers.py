"""hx.random against NumPy's Generator (PCG64) in the same run: 16 M float64 ``random`` and
``standard_normal`` (plus float32 ``random`` and int64 ``integers``), each call including its
wait, so a figure is the time to have the values. "fresh" rows allocate a new result per call, as
users call them (a new hx array of this size is a new mapping whose first touch page-faults, where
NumPy's malloc reuses the freed block); "out=" rows fill an existing array on both sides, the cost
of generation itself. Ratio = NumPy's time / ours (> 1: hx.random is faster).

Writes bench/results/random_numbers.json. Run: python bench/random_numbers.py [repeats=7] [n=16777216]
"""

from __future__ import annotations

import os
import statistics
import sys

import numpy as np

import hrxarray as hx
from _common import alternating_timings_s, save_results


def main(repeats: int = 7, n: int = 16 * 1024 * 1024) -> None:
    g, ref = hx.random.default_rng(1), np.random.default_rng(1)
    hx_out, np_out = hx.empty(n, np.float64), np.empty(n)
    cases = {
        "random float64 out=": (lambda: g.random(out=hx_out).block_until_ready(), lambda: ref.random(out=np_out)),
        "standard_normal float64 out=": (lambda: g.standard_normal(out=hx_out).block_until_ready(),
                                         lambda: ref.standard_normal(out=np_out)),
        "random float64 fresh": (lambda: g.random(n).block_until_ready(), lambda: ref.random(n)),
        "standard_normal float64 fresh": (lambda: g.standard_normal(n).block_until_ready(), lambda: ref.standard_normal(n)),
        "random float32 fresh": (lambda: g.random(n, dtype=np.float32).block_until_ready(),
                           lambda: ref.random(n, dtype=np.float32)),
        "integers(0, 1000) int64 fresh": (lambda: g.integers(0, 1000, n).block_until_ready(),
                                    lambda: ref.integers(0, 1000, n)),
    }
    rows, measured = [], {}
    for name, (ours, peer) in cases.items():
        t_ours, t_peer = alternating_timings_s(ours, peer, repeats)
        o, p = statistics.median(t_ours) * 1e3, statistics.median(t_peer) * 1e3
        measured[name] = {"hx_ms": t_ours, "numpy_ms": t_peer}
        rows.append({"figure": f"{name}, {n:,} values (ms, median of {repeats})", "value": o, "unit": "ms",
                     "peer": "numpy Generator (PCG64)", "peer_value": p, "ratio": p / o,
                     "ratio_label": "NumPy time / ours"})
        print(f"{name:30s} hx {o:8.1f} ms   numpy {p:8.1f} ms   ratio {p / o:5.2f}x", flush=True)
    save_results("random_numbers", {"figure": "hx.random vs numpy.random.Generator", "n": n, "repeats": repeats,
                            "threads": int(os.environ.get("HRXARRAY_NUM_THREADS", 0)) or os.cpu_count(),
                            "numpy": np.__version__, "table": rows, "measured_s": measured})


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
