"""float32 matrix-vector products and long-K accuracy: hx.matmul against NumPy in the same run.

Time: best-of-R of ``hx.matmul(A, v)`` (until the result is ready) for a
4,096 x 4,096 float32 A, row-major and as a transposed view (``A.mT``), and
``v @ A``, against NumPy's ``A @ v`` / ``A.T @ v`` / ``v @ A`` on the same data
(OpenBLAS sgemv), each pair timed alternately. Target (issue 28): >= 1x NumPy
(ratio = NumPy's time / ours, so >= 1 is the target). Accuracy: ``X.T @ X``
for a 1,048,576 x 8 float32 X of uniform [0, 1) values, the largest relative
error against float64, for hrxarray and for NumPy (target: within 2x of
NumPy's; Note [Blocked accumulation]).

Writes bench/results/matvec.json.

Run: python bench/matvec.py [repeats=9] [n=4096]
"""

from __future__ import annotations

import sys

from _common import alternating_timings_s, blas_env_removed, drop_blas_overrides, save_results

drop_blas_overrides()

import numpy as np  # noqa: E402

import hrxarray as hx  # noqa: E402


def main(argv):
    repeats = int(argv[1]) if len(argv) > 1 else 9
    n = int(argv[2]) if len(argv) > 2 else 4096
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(np.float32)
    v = rng.standard_normal(n).astype(np.float32)
    x, w = hx.asarray(a), hx.asarray(v)
    cases = {
        "A @ v": (lambda: hx.matmul(x, w), lambda: a @ v),
        "A.T @ v (transposed view)": (lambda: hx.matmul(x.mT, w), lambda: a.T @ v),
        "v @ A": (lambda: hx.matmul(w, x), lambda: v @ a),
    }
    table, raw = [], {}
    for name, (ours, peer) in cases.items():
        exact = peer().astype(np.float64)
        got = hx.to_numpy(ours())
        assert np.allclose(got, exact, rtol=1e-3, atol=1e-3 * np.sqrt(n)), name
        t_ours, t_peer = alternating_timings_s(lambda: ours().block_until_ready(), peer, repeats)
        best, best_peer = min(t_ours), min(t_peer)
        raw[name] = {"ours_s": t_ours, "numpy_s": t_peer}
        table.append({"figure": f"float32 {name}, n = {n:,}", "value": best * 1e3, "unit": "ms", "peer": "NumPy",
                      "peer_value": best_peer * 1e3, "ratio": best_peer / best,
                      "ratio_label": "peer time / ours (target >= 1)"})
    xs = rng.random((1 << 20, 8), dtype=np.float32)
    exact = xs.T.astype(np.float64) @ xs.astype(np.float64)
    ours = hx.to_numpy(hx.matmul(hx.asarray(xs).mT, hx.asarray(xs)))
    err = float(np.max(np.abs(ours - exact) / np.abs(exact)))
    err_np = float(np.max(np.abs(xs.T @ xs - exact) / np.abs(exact)))
    table.append({"figure": "X.T @ X, X 1,048,576 x 8 float32: max relative error", "value": err, "unit": "",
                  "peer": "NumPy", "peer_value": err_np, "ratio": err / err_np,
                  "ratio_label": "ours / peer (target <= 2)"})
    data = {"figure": "float32 matrix-vector time and long-K accuracy vs NumPy", "n": n, "repeats": repeats,
            "blas_env_removed": blas_env_removed(), "timings": raw, "table": table}
    path = save_results("matvec", data)
    for row in table:
        print(f"{row['figure']}: {row['value']:.4g} {row['unit']} vs NumPy {row['peer_value']:.4g} "
              f"-> {row['ratio']:.2f} ({row['ratio_label']})")
    print("wrote", path)


if __name__ == "__main__":
    main(sys.argv)
