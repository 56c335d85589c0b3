"""bfp16ebs8 encode (floor, even) and decode throughput: hrxarray.numerics against a vectorised NumPy codec.

On MIB MiB of float32 (standard normal values with per-block scales spread over
2^-20..2^20), the best-of-R time of ``bfp16_encode(x, rounding)`` for both
roundings and of ``bfp16_decode(blocks)``, in GB/s counting the float32 bytes
plus the block bytes (4 + 9/8 B per value), against the NumPy implementation of
the same format in this script (whole-array operations, no Python loops: the
honest peer a user would write), checked equal to hrxarray byte for byte.
Target (issue 4): >= 30x the NumPy codec.

Writes bench/results/bfp16.json (+ .png when matplotlib is present).

Run: python bench/bfp16.py [repeats=5] [mib=64]
"""

from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

from hrxarray import numerics as hn
from hrxarray._core import numerics as raw
from _common import RESULTS, pyplot, save_results


def numpy_encode(x, rounding):
    """bfp16ebs8 blocks of float32 x (n multiple of 8) in NumPy: E = max biased exponent,
    m = x / 2^(E-133) rounded down or half to even (E bumped on overflow), subnormals flushed."""
    v = x.reshape(-1, 8)
    bits = v.view(np.uint32)
    e = ((bits >> 23) & 0xFF).astype(np.int32)
    v = np.where(e == 0, np.float32(0), v).astype(np.float64)
    big = e.max(axis=1)
    sat = big == 254

    def mant(ex):
        s = np.ldexp(v, (133 - ex)[:, None])
        return np.floor(s) if rounding == "floor" else np.rint(s)

    m = mant(big)
    if rounding == "even":
        bump = (m.max(axis=1) > 127) & ~sat
        big = np.where(bump, big + 1, big)
        m = np.where(bump[:, None], mant(big), m)
    lo = np.where(sat, -127, -128)[:, None]
    m = np.clip(m, lo, 127)
    m = np.where((big == 0)[:, None], 0, m)
    out = np.empty((v.shape[0], 9), np.uint8)
    out[:, 0] = big
    out[:, 1:] = m.astype(np.int8).view(np.uint8)
    return out


def numpy_decode(blocks):
    e = blocks[:, 0].astype(np.int32)
    m = blocks[:, 1:].view(np.int8).astype(np.float64)
    return np.ldexp(m, (e - 133)[:, None]).astype(np.float32).reshape(-1)


def best_s(fn, repeats, warmup=1):
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return min(ts)


def main(argv):
    repeats = int(argv[1]) if len(argv) > 1 else 5
    mib = int(argv[2]) if len(argv) > 2 else 64
    n = mib * (1 << 20) // 4
    rng = np.random.default_rng(0)
    scale = np.exp2(rng.integers(-20, 21, n // 8)).astype(np.float32)
    x = (rng.standard_normal((n // 8, 8), dtype=np.float32) * scale[:, None]).reshape(-1)
    nbytes = n * 4 + n // 8 * 9
    gbs = lambda t: nbytes / t / 1e9  # noqa: E731
    rows, measured = [], {}
    for rounding in ("floor", "even"):
        ours_blocks = hn.bfp16_encode(x, rounding)
        ref_blocks = numpy_encode(x, rounding)
        assert np.array_equal(ours_blocks, ref_blocks), rounding
        time.sleep(0.3)
        ours = gbs(best_s(lambda: hn.bfp16_encode(x, rounding), repeats))
        peer = gbs(best_s(lambda: numpy_encode(x, rounding), max(2, repeats // 2)))
        measured[f"encode_{rounding}"] = {"hrxarray": ours, "numpy": peer}
        rows.append({"figure": f"bfp16_encode rounding={rounding}, {mib} MiB", "ours": ours,
                     "peers": {"NumPy codec (this script)": peer}, "ratio": ours / peer})
        print(f"encode {rounding}: {ours:.2f} GB/s vs NumPy {peer:.3f} GB/s = {ours / peer:.1f}x", flush=True)
    blocks = hn.bfp16_encode(x, "floor")
    assert np.array_equal(hn.bfp16_decode(blocks), numpy_decode(blocks))
    time.sleep(0.3)
    ours = gbs(best_s(lambda: hn.bfp16_decode(blocks), repeats))
    peer = gbs(best_s(lambda: numpy_decode(blocks), max(2, repeats // 2)))
    measured["decode"] = {"hrxarray": ours, "numpy": peer}
    rows.append({"figure": f"bfp16_decode, {mib} MiB", "ours": ours, "peers": {"NumPy codec (this script)": peer},
                 "ratio": ours / peer})
    print(f"decode: {ours:.2f} GB/s vs NumPy {peer:.3f} GB/s = {ours / peer:.1f}x", flush=True)
    res = {
        "figure": "bfp16ebs8 encode/decode, GB/s (float32 + block bytes)",
        "peer": "vectorised NumPy codec in bench/bfp16.py (checked equal)",
        "ratio": min(r["ratio"] for r in rows),
        "ratio_note": "smallest hrxarray / NumPy over encode floor, encode even, decode (target >= 30)",
        "targets": {"ratio_vs_numpy": 30.0},
        "mib": mib,
        "kernel_path": raw.kernel_paths()["bfp16"],
        "HRXARRAY_NUM_THREADS": os.environ.get("HRXARRAY_NUM_THREADS"),
        "numpy": np.__version__,
        "repeats": repeats,
        "measured_gb_per_s": measured,
        "rows": rows,
    }
    save_results("bfp16", res)
    print(json.dumps({k: v for k, v in res.items() if k != "rows"}, indent=2))
    plt = pyplot()
    if plt is None:
        return 0
    fig, ax = plt.subplots(figsize=(7, 4))
    names = list(measured)
    ax.bar([i - 0.2 for i in range(len(names))], [measured[k]["hrxarray"] for k in names], 0.4, label="hrxarray")
    ax.bar([i + 0.2 for i in range(len(names))], [measured[k]["numpy"] for k in names], 0.4, label="NumPy codec")
    ax.set_xticks(range(len(names)), names)
    ax.set_ylabel("GB/s")
    ax.set_yscale("log")
    ax.set_title(f"bfp16ebs8 on {mib} MiB: min {res['ratio']:.0f}x NumPy")
    ax.legend()
    fig.tight_layout()
    fig.savefig(RESULTS / "bfp16.png", dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
