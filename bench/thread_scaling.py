"""Thread scaling of the main per-op and GEMM figures: 1, 2, 4, 8 and 16 threads where the host has them.

For each thread count T up to the CPUs this process may use, one child process
runs with ``HRXARRAY_NUM_THREADS=T`` (the kernels' pool, read once per process)
and ``OPENBLAS_NUM_THREADS=T`` / ``OMP_NUM_THREADS=T`` (the peers' pools), and
measures, with its peer in the same child:

* the sustained cost of a tiny operation: 2,000 back-to-back
  ``hx.add(x, y, out=z)`` on 1-element float32 arrays then one wait, per call,
  against ``np.add(a, b, out=c)`` (median of alternating rounds; target
  <= 2 us and <= 5x np.add). The lanes are not the kernels' pool, so T only
  changes what else competes for the CPUs;
* the pair-order bf16 GEMM (``hx.numerics.matmul``, the devices' order) at
  n = 256 and 1,024 in GFLOP/s against ``np.matmul`` on float32 copies
  (OpenBLAS with T threads), best of the repetitions.

The table gives each figure per T with its ratio to the peer, and each
figure's scaling from 1 thread (ours and the peer's). Writes
bench/results/thread_scaling.json; the host (CPU model, CPUs, ISA) is recorded
by _common.save_results as for every figure file.

Run: python bench/thread_scaling.py [repeats=5]
     (the child: python bench/thread_scaling.py --child REPEATS)
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from _common import (alternating_timings_s, blas_env_removed, drop_blas_overrides, save_results, timings_s,
                     tiny_add_loops)

THREADS = (1, 2, 4, 8, 16)
GEMM_SIZES = (256, 1024)
TINY_CALLS = 2000


def thread_counts(cpus: int) -> list[int]:
    """The counts of THREADS this host has CPUs for (at least [1])."""
    return [t for t in THREADS if t <= max(1, cpus)]


def child(repeats: int) -> dict:
    """The figures of this process (its thread count comes from the environment)."""
    import ml_dtypes
    import numpy as np

    import hrxarray as hx
    from hrxarray import numerics as hn

    out = {"threads": hx._core.numerics.matmul_num_threads()}
    ours, peer, check = tiny_add_loops(TINY_CALLS)
    t_ours, t_peer = alternating_timings_s(ours, peer, max(repeats, 9))
    check()
    out["tiny_add_us"] = {"ours": statistics.median(t_ours) / TINY_CALLS * 1e6,
                          "numpy": statistics.median(t_peer) / TINY_CALLS * 1e6}
    rng = np.random.default_rng(0)
    for n in GEMM_SIZES:
        ab = rng.standard_normal((n, n), dtype=np.float32).astype(ml_dtypes.bfloat16)
        bb = rng.standard_normal((n, n), dtype=np.float32).astype(ml_dtypes.bfloat16)
        a32, b32 = ab.astype(np.float32), bb.astype(np.float32)
        cc, c32 = np.empty((n, n), np.float32), np.empty((n, n), np.float32)
        inner = max(1, (512 // n) ** 3)

        def many(fn):
            def run():
                for _ in range(inner):
                    fn()
            return run

        ht = min(timings_s(many(lambda: hn.matmul(ab, bb, out=cc)), repeats)) / inner
        nt = min(timings_s(many(lambda: np.matmul(a32, b32, out=c32)), repeats)) / inner
        assert np.allclose(cc, c32, rtol=1e-4, atol=1e-3 * np.sqrt(n))
        out[f"gemm_{n}_gflops"] = {"ours": 2.0 * n**3 / ht / 1e9, "numpy": 2.0 * n**3 / nt / 1e9}
    return out


def table(res: dict) -> list[dict]:
    """bench/run.py's rows from {"runs": {T: child figures}}: per T the figure against its peer, then the
    scaling from the smallest T (ours and the peer's, as speedups)."""
    runs = {int(t): v for t, v in res["runs"].items()}
    ts = sorted(runs)
    rows = []
    for t in ts:
        f = runs[t]["tiny_add_us"]
        rows.append({"figure": f"tiny hx.add(out=) per call, {t} thread(s) (target ≤ 2 µs, ≤ 5x np.add)",
                     "value": f["ours"], "unit": "µs", "peer": "np.add(out=), same child",
                     "peer_value": f["numpy"], "ratio": f["ours"] / f["numpy"], "ratio_label": "ours / peer"})
    for n in GEMM_SIZES:
        key = f"gemm_{n}_gflops"
        for t in ts:
            f = runs[t][key]
            rows.append({"figure": f"pair-order bf16 matmul n = {n:,}, {t} thread(s)", "value": f["ours"],
                         "unit": "GFLOP/s", "peer": "np.matmul float32, same threads", "peer_value": f["numpy"],
                         "ratio": f["ours"] / f["numpy"], "ratio_label": "ours / peer"})
    base = ts[0]
    for t in ts[1:]:
        for n in GEMM_SIZES:
            key = f"gemm_{n}_gflops"
            ours = runs[t][key]["ours"] / runs[base][key]["ours"]
            peer = runs[t][key]["numpy"] / runs[base][key]["numpy"]
            rows.append({"figure": f"matmul n = {n:,} scaling {base} → {t} threads (ideal {t / base:g}x)",
                         "value": ours, "unit": "x", "peer": "np.matmul float32 scaling", "peer_value": peer,
                         "ratio": ours / (t / base), "ratio_label": "ours / ideal"})
    return rows


def main(argv) -> int:
    if len(argv) > 2 and argv[1] == "--child":
        print(json.dumps(child(int(argv[2]))))
        return 0
    repeats = int(argv[1]) if len(argv) > 1 else 5
    drop_blas_overrides()
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    runs = {}
    for t in thread_counts(cpus):
        env = {**os.environ, "HRXARRAY_NUM_THREADS": str(t), "OPENBLAS_NUM_THREADS": str(t),
               "OMP_NUM_THREADS": str(t)}
        proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", str(repeats)], env=env,
                              capture_output=True, text=True, check=True)
        runs[t] = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"{t:>2} thread(s): {json.dumps(runs[t])}", flush=True)
    res = {"figure": "thread scaling of the tiny-op and pair-order GEMM figures", "cpus": cpus,
           "thread_counts": list(runs), "repeats": repeats, "blas_env_removed": blas_env_removed(),
           "runs": runs}
    res["table"] = table(res)
    path = save_results("thread_scaling", res)
    for r in res["table"]:
        print(f"{r['figure']:70s} {r['value']:10.3f} {r['unit']:8s} peer {r['peer_value']:10.3f}  "
              f"ratio {r['ratio']:.2f}")
    print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
