"""Host transfer and copies into arrays (ext/core/array/host_transfer.cpp) against NumPy, in one run.

1. ``hx.asarray(a)`` of 16 M float32 into Shared (one host copy) and into
   GpuLocal (staged through HostVisible, then the upload lane), waited for,
   vs ``np.array(a)`` (a copy).
2. ``hx.to_numpy(x)`` of 16 M float32 from Shared and from GpuLocal (the
   download lane, then a host copy) vs ``np.array(a)``.
3. ``x[...] = a`` of 16 M float32 host data into a Shared array (staged, then
   a copy on the compute lane), waited for, vs ``b[...] = a``.
4. The per-call cost of the small cases, 2,000 back-to-back calls then one
   wait: ``x[...] = 1.0`` (a scalar fill), ``x[...] = y`` (a DeviceArray),
   ``hx.asarray(a)``, ``hx.full(1, 1.0)`` and ``x.astype(float64)`` on
   1-element float32 arrays, vs the NumPy equivalents.

Each figure is the median of the repetitions (the best is recorded too);
ratio = NumPy time / hx time, so above 1 means hrxarray is faster. Writes
bench/results/host_transfer.json.

Run: python bench/host_transfer.py [repeats=7]
"""

from __future__ import annotations

import statistics
import sys

import numpy as np

import hrxarray as hx
from _common import save_results, timings_s

N = 1 << 24
CALLS = 2000


def figure(hx_fn, np_fn, repeats, per=1):
    ht = timings_s(hx_fn, repeats, warmup=1)
    nt = timings_s(np_fn, repeats, warmup=1)
    h, n = statistics.median(ht) / per, statistics.median(nt) / per
    return {"hx_s": h, "hx_best_s": min(ht) / per, "numpy_s": n, "numpy_best_s": min(nt) / per, "ratio": n / h}


def main(repeats: int) -> dict:
    a = np.random.default_rng(0).standard_normal(N, dtype=np.float32)
    res: dict = {"elements": N, "calls": CALLS, "repeats": repeats}
    copy = lambda: np.array(a)  # noqa: E731
    for name, place in (("shared", None), ("gpulocal", hx.GpuLocal())):
        res[f"asarray_{name}_f32_16M"] = figure(lambda: hx.asarray(a, placement=place).block_until_ready(), copy,
                                               repeats)
        x = hx.asarray(a, placement=place)
        assert np.array_equal(hx.to_numpy(x), a)
        res[f"to_numpy_{name}_f32_16M"] = figure(lambda: hx.to_numpy(x), copy, repeats)
    x, b = hx.empty(N, np.float32), np.empty(N, np.float32)

    def setitem_host():
        x[...] = a
        x.block_until_ready()

    def np_setitem_host():
        b[...] = a

    res["setitem_host_f32_16M"] = figure(setitem_host, np_setitem_host, repeats)
    assert np.array_equal(hx.to_numpy(x), a)

    one, y1, c1, d1 = hx.empty(1, np.float32), hx.ones(1, np.float32), np.empty(1, np.float32), np.ones(1, np.float32)
    h1 = np.ones(1, np.float32)

    def loop(fn, last):
        def run():
            for _ in range(CALLS):
                r = fn()
            (last() if r is None else r).block_until_ready()
        return run

    def np_loop(fn):
        def run():
            for _ in range(CALLS):
                fn()
        return run

    def fill():
        one[...] = 1.0

    def np_fill():
        c1[...] = 1.0

    def copy_dev():
        one[...] = y1

    def np_copy():
        c1[...] = d1

    small = {
        "setitem_scalar_1": (loop(fill, lambda: one), np_loop(np_fill)),
        "setitem_array_1": (loop(copy_dev, lambda: one), np_loop(np_copy)),
        "asarray_host_1": (loop(lambda: hx.asarray(h1), None), np_loop(lambda: np.array(h1))),
        "full_1": (loop(lambda: hx.full(1, 1.0, dtype=np.float32), None),
                   np_loop(lambda: np.full(1, 1.0, dtype=np.float32))),
        "astype_1": (loop(lambda: y1.astype(np.float64), None), np_loop(lambda: d1.astype(np.float64))),
    }
    for k, (ours, peer) in small.items():
        res[k] = figure(ours, peer, max(repeats, 9), per=CALLS)
    res["table"] = table(res)
    return res


def table(res: dict) -> list[dict]:
    """bench/run.py's rows: our median against NumPy's, ratio = NumPy time / ours."""
    rows = []
    for k, v in res.items():
        if not isinstance(v, dict) or "ratio" not in v:
            continue
        small = not k.endswith("16M")
        unit, scale = ("µs", 1e6) if small else ("ms", 1e3)
        what = "per call, median" if small else "median"
        rows.append({"figure": f"{k} ({unit}, {what})", "value": v["hx_s"] * scale, "unit": unit,
                     "peer": "NumPy (same run)", "peer_value": v["numpy_s"] * scale, "ratio": v["ratio"],
                     "ratio_label": "NumPy time / ours"})
    return rows


if __name__ == "__main__":
    out = main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
    path = save_results("host_transfer", out)
    for row in out["table"]:
        print(f"{row['figure']:42s} hx {row['value']:10.3f}  numpy {row['peer_value']:10.3f}  ratio {row['ratio']:.2f}x")
    print("wrote", path)
