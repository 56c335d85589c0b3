"""Accuracy and host independence of hx's float32 transcendental ufuncs (hrx::fmath's float kernels).

For each function: 10^7 random float32 bit patterns (every class: normal, subnormal, +-0, +-inf,
NaN, huge trigonometric arguments), the special values, and a dense sweep of its hard region (2^21
consecutive-ish floats). Reference: NumPy's np.longdouble function (x87 80-bit: the C library's
long double functions, 64-bit significand) of the float input. The error of a result is measured
against that reference itself, in ulps of the float32 nearest it: below 1 means the result is the
correctly rounded float or its neighbour (the <= 1 ulp bound of Note [Loom math accuracy]); the
reference's own error (~2^-40 float ulp) cannot move it across. ``correctly_rounded`` counts the
results equal to the reference rounded to float32 (long double -> float rounds once more; its
double-rounding error, ~2^-40 ulp, only matters within that distance of a tie).

Host independence: bench/fmath_clones.cpp is built here (g++, the project's -O3 -ffp-contract=off)
from kernels/fmath.h and runs each float kernel as the array forms' clones do (4 float lanes on
the baseline SSE2, 8 with AVX2, 16 with AVX-512) and as the scalar function (the Loom
interpreter's); the four must give the same bits as each other and as hx's ufunc (which runs this
host's widest clone). A subset (2^18 inputs) also runs through a Loom kernel on the interpreter
(HRXARRAY_LOOM_NATIVE=0, the scalar functions) and must give the ufunc's bits. There is no switch
to force the extension's own clones from Python: the harness compiles the same kernels instead.

Writes bench/results/math_accuracy.json. Run: python bench/math_accuracy.py [n=10000000] [names...]
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ["HRXARRAY_LOOM_NATIVE"] = "0"  # Loom kernels below run on the interpreter: the scalar functions

import numpy as np

import hrxarray as hx
from _common import save_results

ROOT = Path(__file__).resolve().parent.parent
LD = np.longdouble

# name: (hx ufunc, reference on long doubles, Loom op, hard region swept densely)
FUNCS = {
    "exp": (hx.exp, np.exp, "expf", (-104.0, 89.0)),
    "expm1": (hx.expm1, np.expm1, "expm1f", (-2.0, 2.0)),
    "log": (hx.log, np.log, "logf", (0.5, 2.0)),
    "log2": (hx.log2, np.log2, "log2f", (0.5, 2.0)),
    "log10": (hx.log10, np.log10, "log10f", (0.5, 2.0)),
    "log1p": (hx.log1p, np.log1p, "log1pf", (-0.75, 1.0)),
    "sin": (hx.sin, np.sin, "sinf", (-100.0, 100.0)),
    "cos": (hx.cos, np.cos, "cosf", (-100.0, 100.0)),
    "tan": (hx.tan, np.tan, "tanf", (-100.0, 100.0)),
    "tanh": (hx.tanh, np.tanh, "tanhf", (-10.0, 10.0)),
    "arctan": (hx.arctan, np.arctan, "atanf", (-20.0, 20.0)),
    "arcsin": (hx.arcsin, np.arcsin, "asinf", (-1.0, 1.0)),
    "arccos": (hx.arccos, np.arccos, "acosf", (-1.0, 1.0)),
    "sinh": (hx.sinh, np.sinh, "sinhf", (-90.0, 90.0)),
    "cosh": (hx.cosh, np.cosh, "coshf", (-90.0, 90.0)),
    # erf has no ufunc (NumPy has none): the Loom op runs it (interpreter); the reference is
    # float64 math.erf (within an ulp of double: 2^-29 float ulp, as long double's own error is
    # negligible here).
    "erf": (None, None, "erff", (-4.5, 4.5)),
}
# Binary functions (ufunc, Loom op, x range, y range of the uniform part): 10^7 pairs of random
# bit patterns, uniform pairs over the ranges, and every pair of the special values.
FUNCS2 = {
    "arctan2": (hx.arctan2, "atan2f", (-5.0, 5.0), (-5.0, 5.0)),
    "power": (hx.power, "powf", (-10.0, 10.0), (-40.0, 40.0)),
}


def erf_ref(x):
    import math
    f = np.vectorize(lambda v: math.erf(v), otypes=[np.float64])
    return f(x.astype(np.float64)).astype(LD)

SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0**-149, -(2.0**-149), 2.0**-126,
                     -(2.0**-126), 3.4028235e38, -3.4028235e38, 0.5, -0.5, 2.0**-24, -(2.0**-24), 88.72283,
                     -87.33655, -103.97208, 89.0, -17.328679, 2.0**19, -(2.0**19), 1.5707964, 3.1415927,
                     -0.99999994, -1.0000001], np.float32)


def sweep(lo: float, hi: float, count: int) -> np.ndarray:
    """count floats of [lo, hi] evenly spaced in their bit patterns (each sign side by its share)."""
    def side(a, b, k):  # 0 <= a < b
        ia, ib = np.array([a, b], np.float32).view(np.int32).astype(np.int64)
        return np.unique(np.linspace(ia, ib, k).astype(np.int64)).astype(np.int32).view(np.float32)
    if lo >= 0:
        return side(lo, hi, count)
    if hi <= 0:
        return -side(-hi, -lo, count)
    kn = int(count * -lo / (hi - lo))
    return np.concatenate([-side(0.0, -lo, kn), side(0.0, hi, count - kn)])


def inputs(name: str, n: int, rng) -> np.ndarray:
    bits = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    return np.concatenate([bits.view(np.float32), SPECIALS, sweep(*FUNCS[name][3], 1 << 21)])


def ulp_of(r32: np.ndarray) -> np.ndarray:
    """ulp of float32 values (finite; max float for infinities), as long doubles."""
    a = np.where(np.isfinite(r32), np.abs(r32), np.float32(3.4028235e38)).astype(np.float32)
    _, e = np.frexp(a)
    return np.ldexp(LD(1), np.maximum(e.astype(np.int64) - 24, -149))


def errors(x: np.ndarray, got: np.ndarray, ref_f) -> dict:
    with np.errstate(all="ignore"):
        ref = ref_f(x.astype(LD))
        r32 = ref.astype(np.float32)
        nan_ref, nan_got = np.isnan(ref), np.isnan(got)
        finite = np.isfinite(ref) & np.isfinite(got) & ~nan_ref
        err = np.zeros(len(x), LD)
        err[finite] = np.abs(got[finite].astype(LD) - ref[finite]) / ulp_of(r32[finite])
        # ref finite but beyond float's range (rounds to +-inf): an infinite result is the
        # correctly rounded one; a finite one is measured from the reference as above.
        over = np.isfinite(ref) & ~np.isfinite(r32) & np.isfinite(got)
        err[over] = np.abs(got[over].astype(LD) - ref[over]) / ulp_of(r32[over])
        special_bad = (nan_ref != nan_got) | (np.isinf(got) & ~np.isnan(ref) & (got.astype(LD) != ref)
                                              & (got != r32))
        zero_sign_bad = (r32 == 0) & (got == 0) & (np.signbit(r32) != np.signbit(got))
        i = int(np.argmax(err))
        cr = (got.view(np.uint32) == r32.view(np.uint32)) | (nan_ref & nan_got)
    return {"inputs": len(x), "max_ulp_error": float(err[i]), "worst_index": i, "worst_input": float(x[i]),
            "worst_input_hex": float(x[i]).hex(), "results_at_or_above_1_ulp": int((err >= 1).sum()),
            "correctly_rounded_fraction": float(cr.mean()), "special_value_mismatches": int(special_bad.sum()),
            "zero_sign_mismatches": int(zero_sign_bad.sum())}


def build_clones(tmp: Path) -> Path | None:
    gxx = shutil.which("g++")
    if gxx is None:
        return None
    exe = tmp / "fmath_clones"
    subprocess.run([gxx, "-std=c++20", "-O3", "-ffp-contract=off", "-Wno-psabi", f"-I{ROOT / 'ext/core'}",
                    str(ROOT / "bench/fmath_clones.cpp"), str(ROOT / "ext/core/kernels/fmath.cpp"),
                    str(ROOT / "ext/core/kernels/fmath64.cpp"), "-o", str(exe)],
                   check=True)
    return exe


# The harness's names (fmath's) where they differ from the ufunc's.
CLONE_NAME = {"arcsin": "asin", "arccos": "acos", "arctan": "atan", "arctan2": "atan2", "power": "pow"}


def quiet(b: np.ndarray) -> np.ndarray:
    """float32 bits with a NaN's quiet bit set: the Loom interpreter quiets a signalling NaN as it
    loads it, the array forms return it as it came."""
    return np.where(np.isnan(b.view(np.float32)), b | 0x400000, b)


def clones(exe: Path, name: str, x: np.ndarray, tmp: Path) -> tuple[np.ndarray, str] | None:
    """The scalar, base, AVX2 and AVX-512 results, or None for a function without a float kernel."""
    src, dst = tmp / "in.bin", tmp / "out.bin"
    x.tofile(src)
    r = subprocess.run([str(exe), CLONE_NAME.get(name, name), str(src), str(dst)], capture_output=True, text=True)
    if r.returncode == 3:
        return None
    r.check_returncode()
    return np.fromfile(dst, np.float32).reshape(4, len(x)), r.stdout.strip()


def loom_interpreter(op: str, x: np.ndarray) -> np.ndarray:
    sys.path.insert(0, str(ROOT / "tests"))
    from test_loom_math import run_op  # the Loom kernel the math tests run (interpreter: HRXARRAY_LOOM_NATIVE=0)
    return run_op(op, "f32", x)


def binary_row(name: str, n: int, rng, exe, tmp: Path) -> dict:
    ufunc, op, (xlo, xhi), (ylo, yhi) = FUNCS2[name]
    bits = lambda: rng.integers(0, 1 << 32, n // 2, dtype=np.uint64).astype(np.uint32).view(np.float32)  # noqa: E731
    sx, sy = np.meshgrid(SPECIALS, SPECIALS)
    a = np.concatenate([bits(), rng.uniform(xlo, xhi, n // 2).astype(np.float32), sx.ravel()])
    b = np.concatenate([bits(), rng.uniform(ylo, yhi, n // 2).astype(np.float32), sy.ravel()])
    if name == "power":  # half of the negative bases with integer exponents (a sign, not NaN)
        k = n // 2 + np.arange(0, n // 2, 2)
        b[k] = np.round(b[k])
    got = hx.to_numpy(ufunc(hx.asarray(a), hx.asarray(b)))
    ref_np = getattr(np, name)
    row = {"function": name, **errors(a, got, lambda _: ref_np(a.astype(LD), b.astype(LD)))}
    row["worst_input_y_hex"] = float(b[row["worst_index"]]).hex()
    with np.errstate(all="ignore"):
        want = ref_np(a, b)  # NumPy's special values
    row["nan_mismatches_vs_numpy"] = int((np.isnan(want) != np.isnan(got)).sum())
    gb = got.view(np.uint32)
    if exe is not None:
        src, dst = tmp / "in.bin", tmp / "out.bin"
        np.concatenate([a, b]).tofile(src)
        r = subprocess.run([str(exe), CLONE_NAME[name], str(src), str(dst)], capture_output=True, text=True,
                           check=True)
        ys = np.fromfile(dst, np.float32).reshape(4, len(a))
        flags = r.stdout.split()
        row["clones_checked"] = {"scalar": True, "base": True, "avx2": flags[0] == "1", "avx512": flags[1] == "1"}
        row["clone_bit_mismatches_vs_ufunc"] = {
            k: int((ys[j].view(np.uint32) != gb).sum()) for j, k in enumerate(["scalar", "base", "avx2", "avx512"])}
    sys.path.insert(0, str(ROOT / "tests"))
    from test_loom_math import run_op
    m = 1 << 18
    row["loom_interpreter_inputs"] = m
    row["loom_interpreter_bit_mismatches_vs_ufunc"] = int(
        (quiet(run_op(op, "f32", a[:m], b[:m]).view(np.uint32)) != quiet(gb[:m])).sum())
    print(f"{name:6s} n={row['inputs']:,}  max err {row['max_ulp_error']:.4f} ulp  >=1ulp: "
          f"{row['results_at_or_above_1_ulp']}  CR {row['correctly_rounded_fraction']:.6f}  NaN vs NumPy "
          f"{row['nan_mismatches_vs_numpy']}  -0 bad {row['zero_sign_mismatches']}  clones "
          f"{row.get('clone_bit_mismatches_vs_ufunc')}  loom {row['loom_interpreter_bit_mismatches_vs_ufunc']}",
          flush=True)
    return row


def main(n: int = 10_000_000, names: list[str] | None = None) -> None:
    rng = np.random.default_rng(2026)
    rows = []
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        exe = build_clones(tmp)
        for name in names or list(FUNCS) + list(FUNCS2):
            if name in FUNCS2:
                rows.append(binary_row(name, n, rng, exe, tmp))
                continue
            ufunc, ref_f, op, _ = FUNCS[name]
            x = inputs(name, n, rng)
            if ufunc is None:  # erf: the Loom op
                got, ref_f = loom_interpreter(op, x), erf_ref
            else:
                got = hx.to_numpy(ufunc(hx.asarray(x)))
            row = {"function": name, **errors(x, got, ref_f)}
            gb = got.view(np.uint32)
            res = clones(exe, name, x, tmp) if exe is not None else None
            if res is None:
                row["clones_checked"] = "not run: no g++ here"
            else:
                ys, flags = res
                row["clones_checked"] = {"scalar": True, "base": True, "avx2": flags.split()[0] == "1",
                                         "avx512": flags.split()[1] == "1"}
                # erf's "ufunc" is the Loom interpreter: NaNs compared with the quiet bit set.
                q = quiet if ufunc is None else (lambda b: b)  # noqa: E731
                row["clone_bit_mismatches_vs_ufunc"] = {
                    k: int((q(ys[j].view(np.uint32)) != q(gb)).sum()) for j, k in enumerate(["scalar", "base", "avx2",
                                                                                             "avx512"])}
            sub = x[: 1 << 18]
            row["loom_interpreter_inputs"] = len(sub)
            # The interpreter quiets signalling NaNs as it loads them; the array forms return them
            # as they came: NaNs compared with the quiet bit set.
            row["loom_interpreter_bit_mismatches_vs_ufunc"] = int(
                (quiet(loom_interpreter(op, sub).view(np.uint32)) != quiet(gb[: len(sub)])).sum())
            rows.append(row)
            print(f"{name:6s} n={row['inputs']:,}  max err {row['max_ulp_error']:.4f} ulp at {row['worst_input_hex']}"
                  f"  >=1ulp: {row['results_at_or_above_1_ulp']}  CR {row['correctly_rounded_fraction']:.6f}"
                  f"  specials bad {row['special_value_mismatches']}  -0 bad {row['zero_sign_mismatches']}"
                  f"  clones {row.get('clone_bit_mismatches_vs_ufunc')}"
                  f"  loom {row['loom_interpreter_bit_mismatches_vs_ufunc']}", flush=True)
    if names:  # a partial run keeps the other functions' rows of the last full run
        import json
        from _common import RESULTS
        old = RESULTS / "math_accuracy.json"
        if old.exists():
            done = {r["function"] for r in rows}
            kept = [r for r in json.loads(old.read_text()).get("table", []) if r["function"] not in done]
            rows = kept + rows
    path = save_results("math_accuracy", {
        "figure": "hx float32 math ufuncs: max error vs a long double reference, and bit agreement of the "
                  "scalar / baseline / AVX2 / AVX-512 kernels and the Loom interpreter",
        "reference": "numpy longdouble (x87 80-bit) function of the float input; error in ulps of the "
                     "float32 nearest the reference", "n_random_bit_patterns": n, "numpy": np.__version__,
        "table": rows})
    print("wrote", path)


if __name__ == "__main__":
    args = sys.argv[1:]
    nums = [a for a in args if a.isdigit()]
    main(int(nums[0]) if nums else 10_000_000, [a for a in args if not a.isdigit()] or None)
