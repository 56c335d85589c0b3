"""DeviceArray per-operation costs (issue 5's speed figures), with peers measured in the same run.

1. Per-op overhead of ``hx.add(x, y, out=z)`` on 1-element float32 arrays:
   "submit" is the time the call takes (the result is a future; 50 calls are
   issued back to back, below the runtime's capacity), "submit + wait" adds the
   drain of those 50. Peers: ``np.add(a, b, out=c)`` and ``torch.add(a, b,
   out=c)`` (CPU, when torch is installed), which compute synchronously.
2. ``np.from_dlpack(x)`` and ``torch.from_dlpack(x)`` at 1 KiB and 1 GiB: the
   export costs the same whatever the size (no copy), target <= 1 µs.
3. Elementwise add of 16 M float32 (``out=`` given) in GB/s (3 x 64 MiB moved)
   vs ``np.add(a, b, out=c)``.
4. A transcendental ufunc: ``hx.log2`` of 16 M positive float32 (``out=``
   given; the C library's log2f per element, split over the kernel pool) vs
   ``np.log2(a, out=c)`` (NumPy's own SIMD loop), in M elements/s.

Every timing is the median of many repetitions (the best is recorded too);
the machine is shared, so run through ``python bench/run.py``, which waits
for a quiet moment. Writes bench/results/array_ops.json (+ .png).

Run: python bench/array_ops.py [repeats=300]
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np

import hrxarray as hx
from _common import RESULTS, pyplot, save_results

try:
    import torch
except ImportError:  # torch is an optional peer
    torch = None


def per_op(repeats):
    x = hx.asarray(np.ones(1, np.float32))
    y = hx.asarray(np.ones(1, np.float32))
    z = hx.empty(1, np.float32)
    add = hx.add
    batch = 50
    submit, total = [], []
    for _ in range(repeats):
        z.block_until_ready()
        t0 = time.perf_counter()
        for _ in range(batch):
            add(x, y, out=z)
        t1 = time.perf_counter()
        z.block_until_ready()
        t2 = time.perf_counter()
        submit.append((t1 - t0) / batch * 1e6)
        total.append((t2 - t0) / batch * 1e6)
    assert float(z[0]) == 2.0
    out = {"hx_submit_us": summary(submit), "hx_submit_wait_us": summary(total)}
    a, b, c = np.ones(1, np.float32), np.ones(1, np.float32), np.empty(1, np.float32)
    out["np_add_us"] = summary(timed(lambda: np.add(a, b, out=c), repeats, batch))
    if torch is not None:
        ta, tb, tc = torch.ones(1), torch.ones(1), torch.empty(1)
        out["torch_add_us"] = summary(timed(lambda: torch.add(ta, tb, out=tc), repeats, batch))
    return out


def timed(fn, repeats, batch):
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(batch):
            fn()
        samples.append((time.perf_counter() - t0) / batch * 1e6)
    return samples


def summary(samples):
    return {"median": statistics.median(samples), "best": min(samples)}


def dlpack(repeats):
    res = {}
    for label, nbytes in (("1KiB", 1024), ("1GiB", 1 << 30)):
        x = hx.zeros(nbytes // 4, np.float32)  # fresh allocations are zero pages: nothing is touched

        def np_import():
            n = np.from_dlpack(x)
            del n

        res[f"np_from_dlpack_{label}_us"] = summary(timed(np_import, repeats, 20))
        if torch is not None:

            def torch_import():
                t = torch.from_dlpack(x)
                del t

            res[f"torch_from_dlpack_{label}_us"] = summary(timed(torch_import, repeats, 20))
        del x
    # The consumers' own floor: the same imports of a NumPy array of 1 KiB.
    a = np.zeros(256, np.float32)
    res["floor_np_from_numpy_us"] = summary(timed(lambda: np.from_dlpack(a), repeats, 20))
    if torch is not None:
        res["floor_torch_from_numpy_us"] = summary(timed(lambda: torch.from_dlpack(a), repeats, 20))
    return res


def bandwidth(repeats):
    n = 16 * 1024 * 1024
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    x, y, z = hx.asarray(a), hx.asarray(b), hx.empty(n, np.float32)
    c = np.empty(n, np.float32)
    moved = 3 * n * 4 / 1e9
    ours, peer = [], []
    for _ in range(max(repeats // 10, 10)):
        z.block_until_ready()
        t0 = time.perf_counter()
        hx.add(x, y, out=z).block_until_ready()
        ours.append(moved / (time.perf_counter() - t0))
        t0 = time.perf_counter()
        np.add(a, b, out=c)
        peer.append(moved / (time.perf_counter() - t0))
    np.testing.assert_array_equal(hx.to_numpy(z), c)
    return {"hx_add_16M_f32_gb_s": statistics.median(ours), "np_add_16M_f32_gb_s": statistics.median(peer),
            "hx_best_gb_s": max(ours), "np_best_gb_s": max(peer)}


def transcendental(repeats):
    n = 16 * 1024 * 1024
    a = np.random.default_rng(1).random(n, dtype=np.float32) * 1000 + 1e-3
    x, z = hx.asarray(a), hx.empty(n, np.float32)
    c = np.empty(n, np.float32)
    ours, peer = [], []
    for _ in range(max(repeats // 30, 5)):
        z.block_until_ready()
        t0 = time.perf_counter()
        hx.log2(x, out=z).block_until_ready()
        ours.append(n / 1e6 / (time.perf_counter() - t0))
        t0 = time.perf_counter()
        np.log2(a, out=c)
        peer.append(n / 1e6 / (time.perf_counter() - t0))
    # The C library and NumPy's SIMD loop may differ by a few ULP (Note [Elementwise numerics]).
    np.testing.assert_allclose(hx.to_numpy(z), c, rtol=1e-6)
    return {"hx_log2_16M_f32_melem_s": statistics.median(ours), "np_log2_16M_f32_melem_s": statistics.median(peer),
            "hx_best_melem_s": max(ours), "np_best_melem_s": max(peer)}


def table(res):
    rows = []
    p = res["per_op"]
    for key, label in (("hx_submit_us", "hx.add(x, y, out=z) submit, 1 element"),
                       ("hx_submit_wait_us", "hx.add(x, y, out=z) submit + wait, 1 element")):
        rows.append({"figure": label + " (median; target submit <= 2 µs)", "value": p[key]["median"], "unit": "µs",
                     "peer": "np.add(a, b, out=c)", "peer_value": p["np_add_us"]["median"],
                     "ratio": p[key]["median"] / p["np_add_us"]["median"], "ratio_label": "ours / peer"})
        if "torch_add_us" in p:
            rows.append({"figure": label + " (median)", "value": p[key]["median"], "unit": "µs",
                         "peer": "torch.add(a, b, out=c) (CPU)", "peer_value": p["torch_add_us"]["median"],
                         "ratio": p[key]["median"] / p["torch_add_us"]["median"], "ratio_label": "ours / peer"})
    d = res["dlpack"]
    for who in ("np", "torch"):
        small, big = d.get(f"{who}_from_dlpack_1KiB_us"), d.get(f"{who}_from_dlpack_1GiB_us")
        if small is None:
            continue
        rows.append({"figure": f"{who}.from_dlpack(x), 1 GiB vs 1 KiB (median; target <= 1 µs, size-independent)",
                     "value": big["median"], "unit": "µs", "peer": "the same at 1 KiB", "peer_value": small["median"],
                     "ratio": big["median"] / small["median"], "ratio_label": "1 GiB / 1 KiB"})
        floor = d[f"floor_{who}_from_numpy_us"]
        rows.append({"figure": f"{who}.from_dlpack(x), 1 KiB (median)", "value": small["median"], "unit": "µs",
                     "peer": f"{who}.from_dlpack(numpy array), the consumer's floor", "peer_value": floor["median"],
                     "ratio": small["median"] / floor["median"], "ratio_label": "ours / peer"})
    b = res["bandwidth"]
    rows.append({"figure": "elementwise add, 16 M float32 (median; target >= 1x NumPy)",
                 "value": b["hx_add_16M_f32_gb_s"], "unit": "GB/s", "peer": "np.add(a, b, out=c)",
                 "peer_value": b["np_add_16M_f32_gb_s"],
                 "ratio": b["hx_add_16M_f32_gb_s"] / b["np_add_16M_f32_gb_s"], "ratio_label": "ours / peer"})
    t = res.get("transcendental")
    if t is not None:
        rows.append({"figure": "elementwise log2, 16 M float32 (median)", "value": t["hx_log2_16M_f32_melem_s"],
                     "unit": "M elem/s", "peer": "np.log2(a, out=c)", "peer_value": t["np_log2_16M_f32_melem_s"],
                     "ratio": t["hx_log2_16M_f32_melem_s"] / t["np_log2_16M_f32_melem_s"],
                     "ratio_label": "ours / peer"})
    return rows


def plot(res):
    plt = pyplot()
    if plt is None:
        return
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    p = res["per_op"]
    names = ["hx submit", "hx submit+wait", "np.add"] + (["torch.add"] if "torch_add_us" in p else [])
    vals = [p["hx_submit_us"]["median"], p["hx_submit_wait_us"]["median"], p["np_add_us"]["median"]]
    if "torch_add_us" in p:
        vals.append(p["torch_add_us"]["median"])
    axes[0].bar(names, vals, color=["C0", "C0", "C1", "C2"][: len(vals)])
    axes[0].axhline(2.0, color="k", ls="--", lw=1, label="target 2 µs")
    axes[0].set_ylabel("µs per op (1 element)")
    axes[0].legend()
    d = res["dlpack"]
    keys = [k for k in d if not k.startswith("floor_")]
    axes[1].bar([k.replace("_from_dlpack_", "\n").replace("_us", "") for k in keys], [d[k]["median"] for k in keys])
    axes[1].axhline(1.0, color="k", ls="--", lw=1)
    axes[1].set_ylabel("µs per import")
    b = res["bandwidth"]
    axes[2].bar(["hx.add", "np.add"], [b["hx_add_16M_f32_gb_s"], b["np_add_16M_f32_gb_s"]], color=["C0", "C1"])
    axes[2].set_ylabel("GB/s (16 M float32)")
    fig.suptitle("DeviceArray per-operation costs (medians)")
    fig.tight_layout()
    fig.savefig(RESULTS / "array_ops.png", dpi=100)


def main(argv):
    repeats = int(argv[1]) if len(argv) > 1 else 300
    res = {"figure": "DeviceArray per-operation costs", "repeats": repeats,
           "torch": None if torch is None else torch.__version__}
    print("per-op overhead ...", flush=True)
    res["per_op"] = per_op(repeats)
    print("DLPack exports ...", flush=True)
    res["dlpack"] = dlpack(repeats)
    print("16 M float32 add ...", flush=True)
    res["bandwidth"] = bandwidth(repeats)
    print("16 M float32 log2 ...", flush=True)
    res["transcendental"] = transcendental(repeats)
    res["table"] = table(res)
    path = save_results("array_ops", res)
    plot(res)
    for row in res["table"]:
        print(f"{row['figure']}: {row['value']:.3f} {row['unit']} vs {row['peer']} {row['peer_value']:.3f} "
              f"({row['ratio_label']} {row['ratio']:.2f})")
    print(f"wrote {path}")


if __name__ == "__main__":
    main(sys.argv)
