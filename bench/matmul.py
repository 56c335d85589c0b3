"""General BF16 x BF16 -> FP32 matmul: hrxarray.numerics.matmul in GFLOP/s against its peers.

For square n x n x n products with n = 256 / 1,024 / 4,096, the best-of-R time of
``hrxarray.numerics.matmul(a, b, out=c)`` (bf16 in, float32 out, preallocated output;
the devices' pair order) and of the same call with ``order="tile"`` (AMX's order: on
the AMX tiles where the host has them, fp32 FMAs elsewhere) against, in the same
run: ``np.matmul`` on float32 copies of the operands (OpenBLAS, all its threads)
and ``torch.matmul`` on bf16 tensors (when torch is installed; oneDNN, bf16 out).
GFLOP/s = 2 n^3 / time. Target (issue 4): >= 1x NumPy float32 at every size, for
the default order. torch bf16 is a peer for scale; its ">= 0.8x torch bf16 with
AMX" target can only apply to ``order="tile"`` on a host whose tiles run it
(``tile_path`` in the JSON is "amx_bf16").

Each library is measured in its own block, after a pause of PAUSE_S seconds:
OpenBLAS and OpenMP worker threads keep spinning for a while after a call, and on
a 2-core machine they would take a core from whichever library runs next. Best
of R (not the median) because the machine is shared; the JSON keeps every time.

OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE, when inherited, make OpenBLAS pick a
slower kernel (numerics.md, section 0); this script re-executes itself once
without both (this process only) and records what it removed.

Writes bench/results/matmul.json (+ .png when matplotlib is present).

On this project's Intel Xeon hosts (AVX512-BF16, AMX) the pair order runs as two AVX-512 FMAs per pair:
VDPBF16PS retires 0.5/cycle there against 2 FMAs/cycle (Note [bf16 kit choice] in ext/core/kernels/gemm.cpp).
``HRXARRAY_GEMM_KIT=dp python bench/matmul.py`` measures the VDPBF16PS kit instead.

Run: python bench/matmul.py [repeats=7]
"""

from __future__ import annotations

import os
import sys

from _common import RESULTS, blas_env_removed, drop_blas_overrides, pyplot, save_results, timings_s

drop_blas_overrides()

import json  # noqa: E402
import time  # noqa: E402

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

from hrxarray import numerics as hn  # noqa: E402
from hrxarray._core import numerics as raw  # noqa: E402

SIZES = (256, 1024, 4096)
PAUSE_S = 0.5


def main(argv):
    repeats = int(argv[1]) if len(argv) > 1 else 7
    try:
        import torch

        torch_version = torch.__version__
    except ImportError:
        torch, torch_version = None, None
    rng = np.random.default_rng(0)
    rows = []
    for n in SIZES:
        reps = repeats if n < 4096 else max(3, repeats // 2)
        inner = max(1, (512 // n) ** 3)  # batch the smallest calls so timer resolution does not matter
        a = rng.standard_normal((n, n), dtype=np.float32).astype(ml_dtypes.bfloat16)
        b = rng.standard_normal((n, n), dtype=np.float32).astype(ml_dtypes.bfloat16)
        a32, b32 = a.astype(np.float32), b.astype(np.float32)
        c = np.empty((n, n), np.float32)
        c32 = np.empty_like(c)
        hn.matmul(a, b, out=c)
        np.matmul(a32, b32, out=c32)
        assert np.allclose(c, c32, rtol=1e-4, atol=1e-3 * np.sqrt(n))

        def many(fn):
            def run():
                for _ in range(inner):
                    fn()
            return run

        ct = np.empty_like(c)
        hn.matmul(a, b, order="tile", out=ct)
        assert np.allclose(ct, c32, rtol=1e-4, atol=1e-3 * np.sqrt(n))
        calls = {
            "hrxarray": lambda: hn.matmul(a, b, out=c),
            "hrxarray_tile": lambda: hn.matmul(a, b, order="tile", out=ct),
            "numpy_f32": lambda: np.matmul(a32, b32, out=c32),
        }
        if torch is not None:
            ta = torch.from_numpy(a.view(np.uint16)).view(torch.bfloat16)
            tb = torch.from_numpy(b.view(np.uint16)).view(torch.bfloat16)
            tc = torch.empty((n, n), dtype=torch.bfloat16)
            calls["torch_bf16"] = lambda: torch.matmul(ta, tb, out=tc)
        all_times = {}
        for name, fn in calls.items():
            time.sleep(PAUSE_S)
            all_times[name] = [t / inner for t in timings_s(many(fn), reps)]
        best = {k: min(v) for k, v in all_times.items()}
        flop = 2.0 * n**3
        row = {
            "n": n,
            "best_s": best,
            "all_s": all_times,
            "gflop_per_s": {k: flop / t / 1e9 for k, t in best.items()},
        }
        peers = [k for k in best if not k.startswith("hrxarray")]
        row["ratio_vs"] = {k: best[k] / best["hrxarray"] for k in peers}
        row["tile_ratio_vs"] = {k: best[k] / best["hrxarray_tile"] for k in peers}
        rows.append(row)
        print(f"n={n:>5}: hrxarray {row['gflop_per_s']['hrxarray']:6.0f} GFLOP/s  "
              + f"order='tile' {row['gflop_per_s']['hrxarray_tile']:6.0f}  "
              + "  ".join(f"{k} {row['gflop_per_s'][k]:6.0f} (x{v:.2f})" for k, v in row["ratio_vs"].items()),
              flush=True)

    res = {
        "figure": "general bf16 x bf16 -> f32 matmul, GFLOP/s",
        "peer": "np.matmul float32 (also torch.matmul bf16)",
        "ratio": min(r["ratio_vs"]["numpy_f32"] for r in rows),
        "ratio_note": "smallest hrxarray / numpy float32 over n = 256, 1024, 4096 (target >= 1)",
        "targets": {"ratio_vs_numpy_f32_every_n": 1.0},
        "amx": ("order='tile' runs on the AMX tiles here (the default order never does)"
                if raw.kernel_paths()["matmul_tile"] == "amx_bf16" else
                "no usable AMX tiles here: order='tile' runs as fp32 FMAs, and the >= 0.8x torch-bf16-with-AMX "
                "target does not apply"),
        "kernel_path": raw.kernel_paths()["matmul"],
        "tile_path": raw.kernel_paths()["matmul_tile"],
        "threads": raw.matmul_num_threads(),
        "HRXARRAY_NUM_THREADS": os.environ.get("HRXARRAY_NUM_THREADS"),
        # "dp" / "fma" / "avx2" force a kit of the pair order (Note [bf16 kit choice] in gemm.cpp).
        "HRXARRAY_GEMM_KIT": os.environ.get("HRXARRAY_GEMM_KIT"),
        "blas_env_removed": blas_env_removed(),
        "blas_env_note": "OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are unset for this benchmark process only",
        "method": f"best of R calls per library, libraries in separate blocks after a {PAUSE_S} s pause",
        "numpy": np.__version__,
        "ml_dtypes": ml_dtypes.__version__,
        "torch": torch_version,
        "repeats": repeats,
        "rows": rows,
    }
    save_results("matmul", res)
    print(json.dumps({k: v for k, v in res.items() if k != "rows"}, indent=2))
    plt = pyplot()
    if plt is None:
        return 0
    fig, ax = plt.subplots(figsize=(7, 4))
    names = list(rows[0]["gflop_per_s"])
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        ax.bar([j + i * width for j in range(len(rows))], [r["gflop_per_s"][name] for r in rows], width, label=name)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(rows))], [f"n={r['n']:,}" for r in rows])
    ax.set_ylabel("GFLOP/s")
    ax.set_title(f"bf16 matmul -> f32: min {res['ratio']:.2f}x numpy f32 over the sizes")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(RESULTS / "matmul.png", dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
