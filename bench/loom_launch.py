"""Launch cost of a Loom ufunc: one call of ``hx.loom.ufunc`` against one call of ``hx.add(out=)`` (issue 25 item 5).

The Loom kernel is examples/loom/add_f32.loom (``out = x + y``, float32, one
workgroup of 256 work-items per 256 elements), made an ``hx.ufunc`` with
``hx.loom.ufunc(source, "add_f32")``; its peer is ``hx.add(x, y, out=z)`` on the
same DeviceArrays, measured in the same run. At each size (8, 64, 512, 4,096 and
65,536 float32) both are timed the way bench/array_ops.py times hx.add's
per-call cost: ``calls`` calls back to back (below the runtime's capacity),
then one wait for z, divided by ``calls``; the time of the calls alone (before
the wait) is the call path's share. The two alternate, ``repeats`` rounds each,
and the figures are medians. The result is checked against NumPy first.

Target: a Loom call costs at most 1.5x an hx.add call at every size (the
``target_ratio`` in the JSON). What the wait includes is the Loom program's
execution, so the figure depends on the executor the program runs on (the
interpreter, or native code when the project has it): the JSON records which.

Writes bench/results/loom_launch.json (+ .png when matplotlib is present).

Run: python bench/loom_launch.py [repeats=15] [calls=40]
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import hrxarray as hx
from _common import RESULTS, pyplot, save_results

SIZES = (8, 64, 512, 4096, 65_536)
TARGET_RATIO = 1.5
SOURCE = Path(__file__).resolve().parent.parent / "examples" / "loom" / "add_f32.loom"


def one_round(f, x, y, z, calls: int) -> tuple[float, float]:
    """(seconds per call with the final wait, seconds per call of the calls alone) for ``calls`` calls."""
    z.block_until_ready()
    t0 = time.perf_counter()
    for _ in range(calls):
        f(x, y, out=z)
    t1 = time.perf_counter()
    z.block_until_ready()
    t2 = time.perf_counter()
    return (t2 - t0) / calls, (t1 - t0) / calls


def measure(repeats: int, calls: int) -> tuple[dict, str]:
    """Per-size figures, and the executor the Loom program ran on (what the waited figure includes)."""
    add = hx.loom.ufunc(SOURCE.read_text(), "add_f32")
    assert isinstance(add, hx.ufunc)
    ran_on = add.artifact.executor + ("" if add.artifact.executor == "native" else f" ({add.artifact.executor_reason})")
    out = {}
    for n in SIZES:
        xs = np.arange(n, dtype=np.float32)
        ys = np.linspace(-1, 1, n, dtype=np.float32)
        x, y, z = hx.asarray(xs), hx.asarray(ys), hx.empty((n,), np.float32)
        add(x, y, out=z)
        np.testing.assert_array_equal(hx.to_numpy(z), xs + ys)
        loom_t, loom_s, hx_t, hx_s = [], [], [], []
        for _ in range(2):  # warm-up: launch cache, allocator, lane threads
            one_round(add, x, y, z, calls)
            one_round(hx.add, x, y, z, calls)
        for _ in range(repeats):
            t, s = one_round(add, x, y, z, calls)
            loom_t.append(t)
            loom_s.append(s)
            t, s = one_round(hx.add, x, y, z, calls)
            hx_t.append(t)
            hx_s.append(s)
        r = {"loom_s": statistics.median(loom_t), "hx_add_s": statistics.median(hx_t),
             "loom_calls_only_s": statistics.median(loom_s), "hx_add_calls_only_s": statistics.median(hx_s)}
        r["ratio"] = r["loom_s"] / r["hx_add_s"]
        r["calls_only_ratio"] = r["loom_calls_only_s"] / r["hx_add_calls_only_s"]
        r["meets_target"] = r["ratio"] <= TARGET_RATIO
        out[n] = r
        print(f"  n={n:>6}: loom {r['loom_s'] * 1e6:8.2f} us, hx.add {r['hx_add_s'] * 1e6:7.2f} us per call "
              f"(ratio {r['ratio']:.2f}); calls alone {r['loom_calls_only_s'] * 1e6:.2f} vs "
              f"{r['hx_add_calls_only_s'] * 1e6:.2f} us (ratio {r['calls_only_ratio']:.2f})", flush=True)
    return out, ran_on


def table(res) -> list[dict]:
    rows = []
    for n, v in res["sizes"].items():
        rows.append({"figure": f"one call of hx.loom.ufunc add_f32, {int(n):,} float32, + wait "
                               f"(median; target <= {TARGET_RATIO:g}x)",
                     "value": v["loom_s"] * 1e6, "unit": "µs", "peer": "hx.add(x, y, out=z)",
                     "peer_value": v["hx_add_s"] * 1e6, "ratio": v["ratio"], "ratio_label": "ours / peer"})
    for n, v in res["sizes"].items():
        rows.append({"figure": f"the calls alone (call path), {int(n):,} float32 (median)",
                     "value": v["loom_calls_only_s"] * 1e6, "unit": "µs", "peer": "hx.add(x, y, out=z)",
                     "peer_value": v["hx_add_calls_only_s"] * 1e6, "ratio": v["calls_only_ratio"],
                     "ratio_label": "ours / peer"})
    return rows


def plot(res) -> None:
    plt = pyplot()
    if plt is None:
        return
    sizes = [int(n) for n in res["sizes"]]
    v = list(res["sizes"].values())
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    a.plot(sizes, [r["loom_s"] * 1e6 for r in v], "o-", color="C0", label="hx.loom.ufunc + wait")
    a.plot(sizes, [r["hx_add_s"] * 1e6 for r in v], "o-", color="C1", label="hx.add(out=) + wait")
    a.plot(sizes, [r["loom_calls_only_s"] * 1e6 for r in v], "o--", color="C0", alpha=0.6, label="loom, calls alone")
    a.plot(sizes, [r["hx_add_calls_only_s"] * 1e6 for r in v], "o--", color="C1", alpha=0.6, label="hx.add, calls alone")
    a.set_xscale("log")
    a.set_yscale("log")
    a.set_xlabel("float32 elements")
    a.set_ylabel("µs per call")
    a.legend(fontsize=8)
    a.set_title("one call (medians)", fontsize=9)
    b.plot(sizes, [r["ratio"] for r in v], "o-", color="C0", label="with the wait")
    b.plot(sizes, [r["calls_only_ratio"] for r in v], "o--", color="C2", label="calls alone")
    b.axhline(TARGET_RATIO, color="C3", linestyle=":", label=f"target {TARGET_RATIO:g}x")
    b.set_xscale("log")
    b.set_yscale("log")
    b.set_xlabel("float32 elements")
    b.set_ylabel("Loom ufunc time / hx.add time")
    b.legend(fontsize=8)
    b.set_title(f"ratio ({res['executor']})", fontsize=9)
    fig.suptitle("hx.loom.ufunc launch cost against hx.add (emulated fabric)")
    fig.tight_layout()
    fig.savefig(RESULTS / "loom_launch.png", dpi=100)


def main(argv) -> int:
    repeats = int(argv[1]) if len(argv) > 1 else 15
    calls = int(argv[2]) if len(argv) > 2 else 40
    res = {"figure": "one call of hx.loom.ufunc (examples/loom/add_f32.loom) against hx.add(x, y, out=z)",
           "repeats": repeats, "calls": calls, "target_ratio": TARGET_RATIO}
    # The kernels' thread pool (HRXARRAY_NUM_THREADS; unset: every CPU): the interpreter spreads a launch's
    # workgroups over it, and so does native code.
    res["HRXARRAY_NUM_THREADS"] = os.environ.get("HRXARRAY_NUM_THREADS")
    try:
        res["load_average"] = list(os.getloadavg())
    except OSError:
        pass
    res["sizes"], res["executor"] = measure(repeats, calls)
    res["meets_target"] = all(v["meets_target"] for v in res["sizes"].values())
    res["table"] = table(res)
    path = save_results("loom_launch", res)
    plot(res)
    print(f"target <= {TARGET_RATIO:g}x at every size: {'met' if res['meets_target'] else 'not met'}")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
