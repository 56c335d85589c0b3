"""Overlap of a GPU region and an NPU region on the emulated fabric.

One graph with two independent branches (GPU transform_i32 over E int32
elements, NPU batched_gemm over M 8x8 BF16 matrices) is replayed with tracing
on; the figure is the host-observed overlap of the two regions in each replay
and the speedup of the one-graph (parallel) run over running the two branches
one after the other (sequential, the peer measured in the same run).
Writes bench/results/gpu_npu_overlap.json (+ .png when matplotlib is present).

Run: python bench/gpu_npu_overlap.py [elements=20971520] [matrices=16384] [samples=21]
"""

from __future__ import annotations

import json
import sys
import time

import ml_dtypes
import numpy as np

import hrxarray as hx
from _common import RESULTS, pyplot, save_results



def build(rt, elements, matrices):
    npu = rt.npu()
    x = rt.allocate(4 * elements, hx.Shared(npu))
    y = rt.allocate(4 * elements, hx.Shared(npu))
    with x.map_write() as v:
        v.view(np.int32)[:] = np.arange(elements, dtype=np.int32)
    batch = min(matrices, 16384)
    art = hx.kernels.npu("batched_gemm", **{"gemm.batch": batch})
    k = npu.load_artifact(art, 8, art.contract)
    a = rt.allocate(128 * batch, hx.Shared(npu))
    b = rt.allocate(128 * batch, hx.Shared(npu))
    c = rt.allocate(256 * batch, hx.Shared(npu))
    ones = np.ones(64 * batch, dtype=ml_dtypes.bfloat16).view(np.uint8)
    for buf in (a, b):
        with buf.map_write() as v:
            v[:] = ones
    gk = hx.kernels.gpu("transform_i32", elements=elements, runtime=rt)
    g_gpu, g_npu, g_both = rt.graph(), rt.graph(), rt.graph()
    g_gpu.gpu(gk, [x, y])
    g_npu.npu(k, [a, b, c])
    g_both.gpu(gk, [x, y])
    g_both.npu(k, [a, b, c])
    return g_gpu.prepare(), g_npu.prepare(), g_both.prepare(), (y, c, elements, batch)


def check(outputs):
    y, c, elements, batch = outputs
    with y.map_read() as v:
        assert (v.view(np.int32) == np.arange(elements, dtype=np.int32) * 3 + 7).all()
    with c.map_read() as v:
        assert (v.view(np.float32) == 8.0).all()


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1e3


def main(argv):
    elements = int(argv[1]) if len(argv) > 1 else 20971520
    matrices = int(argv[2]) if len(argv) > 2 else 16384
    samples = int(argv[3]) if len(argv) > 3 else 21
    rt = hx.Runtime()
    gpu_only, npu_only, both, outputs = build(rt, elements, matrices)
    for eg in (gpu_only, npu_only, both):
        assert eg.submit().wait(60)
    check(outputs)

    def sequential():
        assert gpu_only.submit().wait(60)
        assert npu_only.submit().wait(60)

    def parallel():
        assert both.submit().wait(60)

    seq, par = [], []
    rt.start_trace(4 * samples)
    for _ in range(samples):
        seq.append(timed(sequential))
        par.append(timed(parallel))
    trace = rt.finish_trace()
    check(outputs)
    # Overlap of the two regions in each parallel replay.
    by_sub = {}
    for e in trace.events:
        by_sub.setdefault(e["submission"], []).append(e)
    overlaps = []
    for events in by_sub.values():
        lanes = {e["lane"]: e for e in events}
        if set(lanes) == {"compute", "npu"}:
            g, n = lanes["compute"], lanes["npu"]
            inter = min(g["start_us"] + g["duration_us"], n["start_us"] + n["duration_us"]) - max(
                g["start_us"], n["start_us"]
            )
            overlaps.append(max(0.0, inter) / min(g["duration_us"], n["duration_us"]))
    gpu_us = [e["duration_us"] for e in trace.events if e["lane"] == "compute"]
    npu_us = [e["duration_us"] for e in trace.events if e["lane"] == "npu"]
    res = {
        "figure": "GPU/NPU region overlap (host-observed, emulated fabric)",
        "elements": elements,
        "matrices": matrices,
        "samples": samples,
        "sequential_median_ms": float(np.median(seq)),
        "parallel_median_ms": float(np.median(par)),
        "speedup_parallel_vs_sequential": float(np.median(seq) / np.median(par)),
        "gpu_region_median_us": float(np.median(gpu_us)),
        "npu_region_median_us": float(np.median(npu_us)),
        "overlap_fraction_median": float(np.median(overlaps)) if overlaps else 0.0,
        "overlap_fraction_min": float(np.min(overlaps)) if overlaps else 0.0,
    }
    save_results("gpu_npu_overlap", res)
    trace.save(RESULTS / "gpu_npu_overlap_trace.json")
    print(json.dumps(res, indent=2))
    plt = pyplot()
    if plt is None:
        return 0
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.bar(["sequential", "parallel (one graph)"], [res["sequential_median_ms"], res["parallel_median_ms"]])
    ax.set_ylabel("median ms per pair")
    ax.set_title(f"GPU {elements} int32 + NPU {matrices} 8x8 GEMMs: {res['speedup_parallel_vs_sequential']:.2f}x")
    fig.tight_layout()
    fig.savefig(RESULTS / "gpu_npu_overlap.png", dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
