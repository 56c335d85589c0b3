"""Array API functions of issue 16 against NumPy, measured in the same run.

1. ``hx.sort`` and ``hx.argsort`` of 16 M float32 (standard normal) vs
   ``np.sort`` / ``np.argsort(kind="stable")`` (NumPy's sort uses
   x86-simd-sort's AVX-512 path where the CPU has it). Target: sort >= 0.8x.
2. ``hx.cumsum`` of 16 M float32 vs ``np.cumsum`` (both sequential). Target >= 1x.
3. ``hx.sum(x, axis=0)`` of a (4096, 4096) float32 array vs ``np.sum``. Target >= 1x.
4. Gathers from 16 M float32: ``x[mask]`` (a random half of the elements),
   ``x[idx]`` and ``hx.take(x, idx)`` (16 M random int64 indices) vs the same
   NumPy expressions and ``np.take``. Target >= 1x. ``x[mask]`` includes the
   wait for the mask's count, ``x[idx]`` and ``take`` the bounds check.
5. ``hx.linalg.solve`` of a 2048 x 2048 system (float64 and float32, one
   right-hand side) vs ``np.linalg.solve`` on the same data: both call the
   same OpenBLAS gesv. Target: within 1.5x (ratio >= 0.67).
6. ``hx.fft.fft`` of 2**20 complex64 vs ``np.fft.fft`` (both pocketfft).
   Target: within 1.5x.
7. The sustained cost of a tiny operation: 2,000 back-to-back
   ``hx.add(x, y, out=z)`` on 1-element float32 arrays, then one wait, per
   call, vs ``np.add(a, b, out=c)``. Target: <= 2 us per call.

The hx timings include submission and the wait for the result
(``block_until_ready``); inputs live in Shared memory. Each figure is the
median of the repetitions (the best is recorded too); ratio = NumPy time /
hx time, so above 1 means hrxarray is faster. Writes bench/results/array_api.json
(+ array_api.png when matplotlib is present).

Run: python bench/array_api.py [repeats=7]
"""

from __future__ import annotations

import statistics
import sys

import numpy as np

import hrxarray as hx
from _common import RESULTS, pyplot, save_results, timings_s, tiny_add_loops


def figure(hx_fn, np_fn, repeats):
    ht = timings_s(hx_fn, repeats, warmup=1)
    nt = timings_s(np_fn, repeats, warmup=1)
    h, n = statistics.median(ht), statistics.median(nt)
    return {"hx_s": h, "hx_best_s": min(ht), "numpy_s": n, "numpy_best_s": min(nt), "ratio": n / h}


def main(repeats: int) -> dict:
    rng = np.random.default_rng(0)
    a = rng.standard_normal(1 << 24).astype(np.float32)
    x = hx.asarray(a)
    x.block_until_ready()
    assert np.array_equal(hx.to_numpy(hx.sort(x)), np.sort(a))
    res = {"n": a.size}
    res["sort_f32_16M"] = figure(lambda: hx.sort(x).block_until_ready(), lambda: np.sort(a), repeats)
    res["argsort_f32_16M"] = figure(lambda: hx.argsort(x).block_until_ready(),
                                    lambda: np.argsort(a, kind="stable"), repeats)
    assert np.array_equal(hx.to_numpy(hx.cumsum(x)), np.cumsum(a))
    res["cumsum_f32_16M"] = figure(lambda: hx.cumsum(x).block_until_ready(), lambda: np.cumsum(a), repeats)
    m = a.reshape(4096, 4096)
    xm = hx.asarray(m)
    res["sum_axis0_f32_4096x4096"] = figure(lambda: hx.sum(xm, axis=0).block_until_ready(),
                                            lambda: np.sum(m, axis=0), repeats)
    mask = rng.random(a.size) < 0.5
    idx = rng.integers(0, a.size, a.size)
    xmask, xidx = hx.asarray(mask), hx.asarray(idx)
    assert np.array_equal(hx.to_numpy(x[xmask]), a[mask]) and np.array_equal(hx.to_numpy(x[xidx]), a[idx])
    res["mask_gather_f32_16M"] = figure(lambda: x[xmask].block_until_ready(), lambda: a[mask], repeats)
    res["index_gather_f32_16M"] = figure(lambda: x[xidx].block_until_ready(), lambda: a[idx], repeats)
    res["take_f32_16M"] = figure(lambda: hx.take(x, xidx).block_until_ready(), lambda: np.take(a, idx), repeats)
    for dt in (np.float64, np.float32):
        sa = (rng.standard_normal((2048, 2048)) + 2048 * np.eye(2048)).astype(dt)
        sb = rng.standard_normal(2048).astype(dt)
        xa, xb = hx.asarray(sa), hx.asarray(sb)
        assert np.allclose(hx.to_numpy(hx.linalg.solve(xa, xb)), np.linalg.solve(sa, sb), rtol=1e-3)
        res[f"linalg_solve_{np.dtype(dt).name}_2048"] = figure(lambda: hx.linalg.solve(xa, xb).block_until_ready(),
                                                               lambda: np.linalg.solve(sa, sb), repeats)
    c = (rng.standard_normal(1 << 20) + 1j * rng.standard_normal(1 << 20)).astype(np.complex64)
    xc = hx.asarray(c)
    assert np.allclose(hx.to_numpy(hx.fft.fft(xc)), np.fft.fft(c), rtol=1e-3, atol=1e-2)
    res["fft_c64_1M"] = figure(lambda: hx.fft.fft(xc).block_until_ready(), lambda: np.fft.fft(c), repeats)
    res["tiny_add_out_per_call"] = tiny_op(repeats)
    res["table"] = table(res)
    return res


def tiny_op(repeats: int, calls: int = 2000) -> dict:
    """Per-call seconds of `calls` back-to-back one-element hx.add(out=) then one wait, vs np.add(out=)."""
    ours, peer, check = tiny_add_loops(calls)
    f = figure(ours, peer, max(repeats, 9))
    check()
    return {k: (v / calls if k.endswith("_s") else v) for k, v in f.items()} | {"calls": calls}


TARGETS = {"sort_f32_16M": 0.8, "cumsum_f32_16M": 1.0, "sum_axis0_f32_4096x4096": 1.0, "mask_gather_f32_16M": 1.0,
           "index_gather_f32_16M": 1.0, "take_f32_16M": 1.0, "linalg_solve_float64_2048": 0.67,
           "linalg_solve_float32_2048": 0.67, "fft_c64_1M": 0.67}


def table(res: dict) -> list[dict]:
    """bench/run.py's rows: our median against NumPy's, ratio = NumPy time / ours."""
    rows = []
    for k, v in res.items():
        if not isinstance(v, dict) or "ratio" not in v:
            continue
        tiny = k.startswith("tiny")
        unit, scale = ("µs", 1e6) if tiny else ("ms", 1e3)
        target = "target ≤ 2 µs" if tiny else f"target ≥ {TARGETS[k]}x" if k in TARGETS else ""
        rows.append({"figure": f"{k} ({unit}, median; {target})", "value": v["hx_s"] * scale, "unit": unit,
                     "peer": "NumPy (same run)", "peer_value": v["numpy_s"] * scale, "ratio": v["ratio"],
                     "ratio_label": "NumPy time / ours"})
    return rows


def plot(res: dict) -> None:
    plt = pyplot()
    if plt is None:
        return
    rows = [(k, v) for k, v in res.items() if isinstance(v, dict) and "ratio" in v]
    fig, ax = plt.subplots(figsize=(10, 4.5))
    ax.bar(range(len(rows)), [v["ratio"] for _, v in rows], color="tab:blue")
    for i, (k, _) in enumerate(rows):
        t = TARGETS.get(k)
        if t is not None:
            ax.plot([i - 0.4, i + 0.4], [t, t], color="tab:red")
    ax.axhline(1.0, color="gray", lw=0.8, ls="--")
    ax.set_xticks(range(len(rows)), [k.replace("_", "\n", 1) for k, _ in rows], fontsize=7)
    ax.set_ylabel("NumPy time / hrxarray time")
    ax.set_yscale("log")
    ax.set_title("hrxarray vs NumPy, same run (red: target)")
    fig.tight_layout()
    fig.savefig(RESULTS / "array_api.png", dpi=120)


if __name__ == "__main__":
    out = main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
    path = save_results("array_api", out)
    plot(out)
    for k, v in out.items():
        if isinstance(v, dict):
            print(f"{k:28s} hx {v['hx_s'] * 1e3:10.4f} ms  numpy {v['numpy_s'] * 1e3:10.4f} ms  ratio {v['ratio']:.2f}x")
    print("wrote", path)
