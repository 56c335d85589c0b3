"""Tall reduced QR and lstsq: hx.linalg against NumPy in time and peak memory, in the same run.

For an m x n float32 matrix (default 20,000 x 20, the shape of scikit-learn's
randomized PCA range finder), the best-of-R wall time of ``hx.linalg.qr(a)``
(reduced; until both factors are ready) against ``np.linalg.qr`` of the same
data (NumPy's bundled OpenBLAS, the LAPACK hx.linalg calls), and the same for
``lstsq`` with 4 right-hand sides. Peak memory: each library factors the
matrix once in a fresh child process, which reports how far its peak resident
set grew over the call (VmHWM after resetting it through /proc/self/clear_refs;
the input already allocated). Targets
(issue 28): time and memory <= 1.2x NumPy's.

Writes bench/results/linalg_tall.json.

Run: python bench/linalg_tall.py [repeats=7] [m=20000] [n=20]
"""

from __future__ import annotations

import subprocess
import sys

from _common import blas_env_removed, drop_blas_overrides, save_results, timings_s

drop_blas_overrides()

import numpy as np  # noqa: E402

import hrxarray as hx  # noqa: E402

_CHILD = r"""
import sys
import numpy as np
lib, m, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

def status(key):
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) * 1024 for l in f if l.startswith(key))

def reset_peak():  # Linux: writing 5 to clear_refs resets VmHWM to the current RSS
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")

a = np.random.default_rng(0).standard_normal((m, n), dtype=np.float32)
if lib == "hrxarray":
    import hrxarray as hx
    x = hx.asarray(a)
    hx.linalg.qr(hx.asarray(a[:8, :4]))[0].block_until_ready()  # LAPACK loaded
    reset_peak(); before = status("VmRSS")
    q, r = hx.linalg.qr(x)
    q.block_until_ready(); r.block_until_ready()
else:
    np.linalg.qr(a[:8, :4])
    reset_peak(); before = status("VmRSS")
    q, r = np.linalg.qr(a)
print(status("VmHWM") - before)
"""


def peak_growth(lib: str, m: int, n: int) -> int:
    out = subprocess.run([sys.executable, "-c", _CHILD, lib, str(m), str(n)], capture_output=True, text=True,
                         check=True)
    return int(out.stdout.split()[-1])


def main(argv):
    repeats = int(argv[1]) if len(argv) > 1 else 7
    m = int(argv[2]) if len(argv) > 2 else 20000
    n = int(argv[3]) if len(argv) > 3 else 20
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, n)).astype(np.float32)
    b = rng.standard_normal((m, 4)).astype(np.float32)
    x, y = hx.asarray(a), hx.asarray(b)

    def hx_qr():
        q, r = hx.linalg.qr(x)
        q.block_until_ready()
        r.block_until_ready()

    def hx_lstsq():
        hx.linalg.lstsq(x, y)[0].block_until_ready()

    q, r = (hx.to_numpy(v) for v in hx.linalg.qr(x))
    assert np.allclose(q @ r, a, atol=1e-4) and np.allclose(q.T @ q, np.eye(n), atol=1e-4)
    xs = hx.to_numpy(hx.linalg.lstsq(x, y)[0])
    assert np.allclose(xs, np.linalg.lstsq(a, b, rcond=None)[0], atol=1e-4)
    t_qr = min(timings_s(hx_qr, repeats))
    t_qr_np = min(timings_s(lambda: np.linalg.qr(a), repeats))
    t_ls = min(timings_s(hx_lstsq, repeats))
    t_ls_np = min(timings_s(lambda: np.linalg.lstsq(a, b, rcond=None), repeats))
    mem, mem_np = peak_growth("hrxarray", m, n), peak_growth("numpy", m, n)
    shape = f"{m:,} x {n} float32"
    data = {
        "figure": f"tall reduced QR / lstsq of {shape} vs NumPy",
        "m": m, "n": n, "repeats": repeats, "blas_env_removed": blas_env_removed(),
        "qr_s": t_qr, "qr_numpy_s": t_qr_np, "qr_time_ratio": t_qr / t_qr_np,
        "lstsq_s": t_ls, "lstsq_numpy_s": t_ls_np, "lstsq_time_ratio": t_ls / t_ls_np,
        "qr_peak_bytes": mem, "qr_peak_numpy_bytes": mem_np, "qr_memory_ratio": mem / max(mem_np, 1),
        "table": [
            {"figure": f"qr {shape}, time", "value": t_qr * 1e3, "unit": "ms", "peer": "NumPy",
             "peer_value": t_qr_np * 1e3, "ratio": t_qr / t_qr_np, "ratio_label": "ours / peer (target <= 1.2)"},
            {"figure": f"qr {shape}, peak memory growth", "value": mem / 2**20, "unit": "MiB", "peer": "NumPy",
             "peer_value": mem_np / 2**20, "ratio": mem / max(mem_np, 1),
             "ratio_label": "ours / peer (target <= 1.2)"},
            {"figure": f"lstsq {shape}, 4 rhs, time", "value": t_ls * 1e3, "unit": "ms", "peer": "NumPy",
             "peer_value": t_ls_np * 1e3, "ratio": t_ls / t_ls_np, "ratio_label": "ours / peer"},
        ],
    }
    path = save_results("linalg_tall", data)
    for row in data["table"]:
        print(f"{row['figure']}: {row['value']:.2f} {row['unit']} vs NumPy {row['peer_value']:.2f} "
              f"-> {row['ratio']:.2f}x")
    print("wrote", path)


if __name__ == "__main__":
    main(sys.argv)
