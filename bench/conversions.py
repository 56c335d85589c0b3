"""float32 <-> bfloat16 conversion bandwidth: hrxarray.numerics against ml_dtypes, torch and a memory copy.

On a float32 array of MIB MiB (and its bf16 image), the best-of-R time of
``to_bfloat16(x, out=h)`` and ``from_bfloat16(h, out=x)`` (preallocated outputs),
in GB/s counting bytes read + written (6 B per element), against, in the same run:
ml_dtypes ``x.astype(bfloat16)`` / ``h.astype(float32)``, torch
``t.to(torch.bfloat16)`` / ``t16.float()`` (when torch is installed) and a plain
``np.copyto`` of the float32 array into another float32 array (8 B per element),
the machine's copy bandwidth. Target (issue 4): >= 0.8x copy bandwidth.
Results are checked equal to ml_dtypes bit for bit.

Writes bench/results/conversions.json (+ .png when matplotlib is present).

Run: python bench/conversions.py [repeats=9] [mib=64]
"""

from __future__ import annotations

import json
import os
import sys
import time

import ml_dtypes
import numpy as np

from hrxarray import numerics as hn
from hrxarray._core import numerics as raw
from _common import RESULTS, pyplot, save_results, timings_s

PAUSE_S = 0.3


def best_s(fn, repeats):
    return min(timings_s(fn, repeats, warmup=2))


def main(argv):
    repeats = int(argv[1]) if len(argv) > 1 else 9
    mib = int(argv[2]) if len(argv) > 2 else 64
    try:
        import torch

        torch_version = torch.__version__
    except ImportError:
        torch, torch_version = None, None
    n = mib * (1 << 20) // 4
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n, dtype=np.float32)
    h = np.empty(n, ml_dtypes.bfloat16)
    x2 = np.empty_like(x)
    hn.to_bfloat16(x, out=h)
    assert np.array_equal(h.view(np.uint16), x.astype(ml_dtypes.bfloat16).view(np.uint16))
    hn.from_bfloat16(h, out=x2)
    assert np.array_equal(x2, h.astype(np.float32))
    conv_bytes = 6 * n

    def gbs(t, nbytes=conv_bytes):
        return nbytes / t / 1e9

    time.sleep(PAUSE_S)
    copy = gbs(best_s(lambda: np.copyto(x2, x), repeats), 8 * n)
    measured = {}
    for name, fn in (
        ("to_bfloat16", lambda: hn.to_bfloat16(x, out=h)),
        ("from_bfloat16", lambda: hn.from_bfloat16(h, out=x2)),
        ("ml_dtypes astype(bfloat16)", lambda: x.astype(ml_dtypes.bfloat16)),
        ("ml_dtypes astype(float32)", lambda: h.astype(np.float32)),
    ):
        time.sleep(PAUSE_S)
        measured[name] = gbs(best_s(fn, repeats if "ml_dtypes" not in name else max(3, repeats // 3)))
    if torch is not None:
        tx = torch.from_numpy(x)
        th = torch.from_numpy(h.view(np.uint16)).view(torch.bfloat16)
        time.sleep(PAUSE_S)
        measured["torch .to(bfloat16)"] = gbs(best_s(lambda: tx.to(torch.bfloat16), repeats))
        time.sleep(PAUSE_S)
        measured["torch .float()"] = gbs(best_s(lambda: th.float(), repeats))
    rows = []
    for ours, peers in (("to_bfloat16", ("ml_dtypes astype(bfloat16)", "torch .to(bfloat16)")),
                        ("from_bfloat16", ("ml_dtypes astype(float32)", "torch .float()"))):
        p = {"np.copyto float32 (copy bandwidth)": copy}
        p.update({k: measured[k] for k in peers if k in measured})
        rows.append({"figure": f"{ours}, {mib} MiB float32", "ours": measured[ours], "peers": p,
                     "fraction_of_copy": measured[ours] / copy})
        print(f"{ours}: {measured[ours]:.1f} GB/s = {measured[ours] / copy:.2f}x copy ({copy:.1f} GB/s); "
              + ", ".join(f"{k} {v:.1f}" for k, v in p.items()), flush=True)
    res = {
        "figure": "f32 <-> bf16 conversion, GB/s (bytes read + written)",
        "peer": "np.copyto float32 copy bandwidth (also ml_dtypes, torch)",
        "ratio": min(r["fraction_of_copy"] for r in rows),
        "ratio_note": "smaller of to/from_bfloat16 GB/s over np.copyto GB/s (target >= 0.8)",
        "targets": {"fraction_of_copy": 0.8},
        "mib": mib,
        "kernel_path": raw.kernel_paths()["bf16"],
        "threads": raw.matmul_num_threads(),
        "HRXARRAY_NUM_THREADS": os.environ.get("HRXARRAY_NUM_THREADS"),
        "method": f"best of {repeats}; each measurement after a {PAUSE_S} s pause; peers allocate (as users call them)",
        "numpy": np.__version__,
        "ml_dtypes": ml_dtypes.__version__,
        "torch": torch_version,
        "repeats": repeats,
        "measured_gb_per_s": {"copy": copy, **measured},
        "rows": rows,
    }
    save_results("conversions", res)
    print(json.dumps({k: v for k, v in res.items() if k != "rows"}, indent=2))
    plt = pyplot()
    if plt is None:
        return 0
    fig, ax = plt.subplots(figsize=(8, 4))
    names = list(res["measured_gb_per_s"])
    ax.barh(names, [res["measured_gb_per_s"][k] for k in names])
    ax.set_xlabel("GB/s (read + written)")
    ax.set_title(f"f32<->bf16 on {mib} MiB: min {res['ratio']:.2f}x copy bandwidth")
    fig.tight_layout()
    fig.savefig(RESULTS / "conversions.png", dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
