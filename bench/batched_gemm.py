"""Batched 8x8 BF16 x BF16 -> FP32 matmul: hrxarray.numerics.matmul against its peers.

For N = 1,024 / 16,384 / 1,048,576 dense 8x8 matrices, the median time of
``hrxarray.numerics.matmul(a, b, out=c)`` (bf16 in, float32 out, preallocated
output) against, in the same run: ``np.matmul`` on float32 copies of the
operands, ``np.matmul`` on the ml_dtypes bf16 operands, and ``torch.bmm`` on
bf16 tensors (when torch is installed). At the largest N the kernel's memory
traffic (2 x 128 B read + 256 B written per matrix) is also compared with this
machine's copy bandwidth, measured in the same run with ``np.copyto`` on a
256 MiB float32 array (bytes read + bytes written, as STREAM counts).
Targets (issue 4): >= 5x NumPy float32 at N = 16,384; >= 60 % of the copy
bandwidth at N = 1,048,576.

OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE, when inherited, make OpenBLAS pick a
slower kernel (numerics.md, section 0); this script re-executes itself once
without both (this process only) and records what it removed in the JSON.

Writes bench/results/batched_gemm.json (+ .png when matplotlib is present).

Run: python bench/batched_gemm.py [repeats=15]
"""

from __future__ import annotations

import os
import sys

from _common import RESULTS, blas_env_removed, drop_blas_overrides, pyplot, save_results, timings_s

drop_blas_overrides()

import json  # noqa: E402

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

from hrxarray import numerics as hn  # noqa: E402
from hrxarray._core import numerics as raw  # noqa: E402

SIZES = (1024, 16384, 1048576)
BYTES_PER_MATRIX = 128 + 128 + 256


def median_s(fn, repeats):
    return float(np.median(timings_s(fn, repeats)))


def copy_bandwidth(repeats):
    src = np.ones(64 << 20, np.float32)  # 256 MiB
    dst = np.empty_like(src)
    t = median_s(lambda: np.copyto(dst, src), repeats)
    return 2 * src.nbytes / t / 1e9


def main(argv):
    repeats = int(argv[1]) if len(argv) > 1 else 15
    try:
        import torch

        torch_version = torch.__version__
    except ImportError:
        torch, torch_version = None, None
    rng = np.random.default_rng(0)
    rows = []
    copy_gbs = copy_bandwidth(repeats)
    for n in SIZES:
        reps = repeats if n < 1 << 20 else max(5, repeats // 3)
        inner = max(1, 16384 // n)  # batch tiny calls so timer resolution does not matter
        a = rng.standard_normal((n, 8, 8), dtype=np.float32).astype(ml_dtypes.bfloat16)
        b = rng.standard_normal((n, 8, 8), dtype=np.float32).astype(ml_dtypes.bfloat16)
        a32, b32 = a.astype(np.float32), b.astype(np.float32)
        c = np.empty((n, 8, 8), np.float32)
        c32 = np.empty_like(c)
        hn.matmul(a, b, out=c)
        np.matmul(a32, b32, out=c32)
        assert np.allclose(c, c32, rtol=1e-5, atol=1e-5)

        def many(fn):
            def run():
                for _ in range(inner):
                    fn()
            return run

        times = {
            "hrxarray": median_s(many(lambda: hn.matmul(a, b, out=c)), reps) / inner,
            "numpy_f32": median_s(many(lambda: np.matmul(a32, b32, out=c32)), reps) / inner,
            "numpy_ml_dtypes_bf16": median_s(many(lambda: np.matmul(a, b)), max(3, reps // 3)) / inner,
        }
        if torch is not None:
            ta = torch.from_numpy(a.view(np.uint16)).view(torch.bfloat16)
            tb = torch.from_numpy(b.view(np.uint16)).view(torch.bfloat16)
            tc = torch.empty((n, 8, 8), dtype=torch.bfloat16)
            times["torch_bf16_bmm"] = median_s(many(lambda: torch.bmm(ta, tb, out=tc)), reps) / inner
        row = {"n": n, "median_s": times, "mat_per_s": {k: n / t for k, t in times.items()}}
        row["ratio_vs"] = {k: t / times["hrxarray"] for k, t in times.items() if k != "hrxarray"}
        row["hrxarray_gb_per_s"] = n * BYTES_PER_MATRIX / times["hrxarray"] / 1e9
        row["fraction_of_copy_bandwidth"] = row["hrxarray_gb_per_s"] / copy_gbs
        rows.append(row)
        print(f"N={n:>8}: hrxarray {n / times['hrxarray'] / 1e6:7.1f} M mat/s  "
              + "  ".join(f"{k} x{v:.2f}" for k, v in row["ratio_vs"].items())
              + f"  {row['hrxarray_gb_per_s']:.1f} GB/s", flush=True)

    by_n = {r["n"]: r for r in rows}
    res = {
        "figure": "batched 8x8 bf16 x bf16 -> f32 matmul, matrices/s",
        "peer": "np.matmul float32 (also ml_dtypes bf16 np.matmul, torch.bmm bf16)",
        "ratio": by_n[16384]["ratio_vs"]["numpy_f32"],
        "ratio_note": "hrxarray / numpy float32 at N = 16,384 (target >= 5)",
        "fraction_of_copy_bandwidth_at_1M": by_n[1048576]["fraction_of_copy_bandwidth"],
        "copy_bandwidth_gb_per_s": copy_gbs,
        "copy_bandwidth_method": "np.copyto 256 MiB float32, (read + write bytes) / median time",
        "targets": {"ratio_vs_numpy_f32_at_16384": 5.0, "fraction_of_copy_bandwidth_at_1M": 0.6},
        "kernel_path": raw.kernel_paths()["matmul"],
        "threads": raw.matmul_num_threads(),
        "HRXARRAY_NUM_THREADS": os.environ.get("HRXARRAY_NUM_THREADS"),
        "blas_env_removed": blas_env_removed(),
        "blas_env_note": "OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are unset for this benchmark process only",
        "numpy": np.__version__,
        "ml_dtypes": ml_dtypes.__version__,
        "torch": torch_version,
        "repeats": repeats,
        "rows": rows,
    }
    save_results("batched_gemm", res)
    print(json.dumps({k: v for k, v in res.items() if k != "rows"}, indent=2))
    plt = pyplot()
    if plt is None:
        return 0
    fig, ax = plt.subplots(figsize=(7, 4))
    names = list(rows[0]["mat_per_s"])
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        ax.bar([j + i * width for j in range(len(rows))], [r["mat_per_s"][name] / 1e6 for r in rows],
               width, label=name)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(rows))], [f"N={r['n']:,}" for r in rows])
    ax.set_ylabel("M matrices/s")
    ax.set_title(f"batched 8x8 bf16->f32: {res['ratio']:.1f}x numpy f32 at 16,384; "
                 f"{res['fraction_of_copy_bandwidth_at_1M']:.0%} of copy BW at 1M")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(RESULTS / "batched_gemm.png", dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
