"""Accuracy of hx's float64 math ufuncs (fmath64.h's kernels), in ulps of the double result.

For each function, n inputs (default 10^7): random bit patterns over the function's domain (every
exponent, subnormals included), uniform values over its usual range, dense hard regions (near 0,
near 1 for the logarithms, near -1 for log1p, near multiples of pi/2 for sin/cos/tan up to 2^25
and the switch to the exact reduction at 2^20, the overflow and underflow thresholds of exp and
expm1, the boundaries between the kernels' ranges) and the special values. The reference is the
same function in np.longdouble (x86-64's 64-bit mantissa: glibc's long double functions, within an
ulp of 2^-64 relative, so the figures are good to about 0.002 double ulp); the error is
|ours - reference| / ulp(reference as a double), with an infinite or NaN result required to match
the reference exactly. NumPy's own float64 loops are measured against the same reference in the
same run (``numpy_max_ulp``). The special values (+-0, subnormals, +-inf, NaN, the thresholds)
are also compared with NumPy's results bit for bit (NaN: both NaN).

Writes bench/results/math_accuracy_f64.json. Run: python bench/math_accuracy_f64.py [n=10000000]
(``--quick``: 10^6, prints only).
"""

from __future__ import annotations

import sys
import time

import numpy as np

import hrxarray as hx
from _common import save_results

LD = np.longdouble
F64_MAX = np.finfo(np.float64).max
PIO2 = LD("1.570796326794896619231321691639751442")


def random_bits(rng, n, emax, signs=True):
    """n doubles of random sign (if signs), random mantissa and biased exponent in [0, emax]."""
    e = rng.integers(0, emax + 1, n, dtype=np.uint64)
    m = rng.integers(0, 1 << 52, n, dtype=np.uint64)
    s = rng.integers(0, 2, n, dtype=np.uint64) if signs else np.zeros(n, np.uint64)
    return ((s << np.uint64(63)) | (e << np.uint64(52)) | m).view(np.float64)


def near(rng, centres, n, ulps=1 << 20):
    """n doubles within `ulps` ulps of the given centres (random choice)."""
    c = np.asarray(centres, np.float64)[rng.integers(0, len(centres), n)]
    off = rng.integers(-ulps, ulps + 1, n)
    return (c.view(np.int64) + off).view(np.float64)


def pio2_multiples(rng, n, kmax):
    """Doubles nearest to k pi/2 for random k < kmax, and a few ulps either side."""
    k = rng.integers(1, kmax, n).astype(LD)
    x = (k * PIO2).astype(np.float64)
    return (x.view(np.int64) + rng.integers(-3, 4, n)).view(np.float64)


SPECIALS = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 10.0, 1e-300, -1e-300, 5e-324, -5e-324,
                     2.2250738585072014e-308, -2.2250738585072014e-308, 2.225073858507201e-308, np.inf, -np.inf,
                     np.nan, -np.nan, F64_MAX, -F64_MAX, 709.782712893384, 709.7827128933841, -708.3964185322641,
                     -745.1332191019411, -745.1332191019412, -746.0, 710.0, -40.0, 41.0, 20.0, 19.0, -20.0, 2.0**20,
                     -(2.0**20), 2.0**60, -(2.0**60), 1e22, 1e300, -1e300, 3.141592653589793, 1.5707963267948966,
                     0.7853981633974483, -1.5707963267948966, 1e-320, 1.0 + 2.0**-52, 1.0 - 2.0**-53, -1.0 + 2.0**-53,
                     100.0, 1000.0, 1e-5, 1e-10, 1e10])


def inputs(name, n, rng):
    q = n // 8
    if name in ("exp", "expm1"):
        hi = 710.0
        parts = [random_bits(rng, 3 * q, 1032), rng.uniform(-745.2 if name == "exp" else -40, hi, 2 * q),
                 rng.uniform(-1, 1, q) * 2.0 ** rng.integers(-60, 0, q),
                 near(rng, [709.782712893384, -745.1332191019411, -708.3964185322641, -37.42994775023705, 41.0,
                            0.34657359027997264, -0.34657359027997264, 1.0397207708399179], q)]
    elif name in ("log", "log2", "log10"):
        parts = [random_bits(rng, 3 * q, 2046, signs=False), rng.uniform(0, 100, 2 * q),
                 1.0 + rng.uniform(-1, 1, q) * 2.0 ** rng.integers(-52, -1, q),
                 near(rng, [0.7071067811865476, 1.4142135623730951, 1.0, 10.0, 100.0, 1e-300, 1e300,
                            2.2250738585072014e-308], q)]
    elif name == "log1p":
        neg = -random_bits(rng, q, 1022, signs=False)  # (-1, 0]
        parts = [random_bits(rng, 2 * q, 2046, signs=False), neg, rng.uniform(-1, 10, 2 * q),
                 rng.uniform(-1, 1, q) * 2.0 ** rng.integers(-60, 0, q),
                 near(rng, [-1.0 + 2.0**-20, 0.41421356237309503, -0.2928932188134524, 0.0, 2.0**53, 2.0**60], q)]
    elif name == "tanh":
        parts = [random_bits(rng, 3 * q, 1030), rng.uniform(-20, 20, 2 * q),
                 rng.uniform(-1, 1, q) * 2.0 ** rng.integers(-60, 0, q),
                 near(rng, [0.55, -0.55, 0.1733867329, 19.06, 20.0, -20.0, 0.3465735902799726], q)]
    elif name == "arctan":
        b = np.arange(1, 17, 2) / 16.0
        parts = [random_bits(rng, 3 * q, 2046), rng.uniform(-20, 20, 2 * q),
                 rng.uniform(-1, 1, q) * 2.0 ** rng.integers(-60, 0, q),
                 near(rng, list(b) + list(1 / b) + [1.0, -1.0, 2.0**60, 2.0**27], q)]
    elif name in ("arcsin", "arccos"):
        parts = [-random_bits(rng, q, 1022) , random_bits(rng, 2 * q, 1023), rng.uniform(-1, 1, 2 * q),
                 rng.uniform(-1, 1, q) * 2.0 ** rng.integers(-60, 0, q),
                 near(rng, [0.5, -0.5, 1.0, -1.0, 0.0], q), near(rng, [0.5, -0.5, 1.0, -1.0], q, 1 << 40)]
    elif name in ("sinh", "cosh"):
        parts = [random_bits(rng, 3 * q, 1032), rng.uniform(-711, 711, q), rng.uniform(-25, 25, q),
                 rng.uniform(-1, 1, q) * 2.0 ** rng.integers(-60, 0, q),
                 near(rng, [1.0, -1.0, 22.0, -22.0, 710.4758600739439, -710.4758600739439, 0.5], 2 * q)]
    elif name == "erf":
        parts = [random_bits(rng, 3 * q, 1026), rng.uniform(-6.5, 6.5, 3 * q), rng.uniform(-0.6, 0.6, q),
                 near(rng, [0.5, -0.5, 5.921, -5.921, 0.5625, 1.0], q)]
    elif name == "power":  # the base; the exponent: arctan2_x's draw, scaled (see measure)
        parts = [random_bits(rng, 2 * q, 2046), rng.uniform(0, 10, 2 * q), -rng.uniform(0, 10, q),
                 1 + rng.uniform(-1, 1, 2 * q) * 2.0 ** rng.integers(-50, -1, 2 * q), rng.uniform(0, 2, q)]
    elif name == "arctan2":  # the y operand; x: arctan2_x
        parts = [random_bits(rng, 3 * q, 2046), rng.uniform(-5, 5, 3 * q), rng.uniform(-1, 1, 2 * q)]
    else:  # sin, cos, tan
        parts = [random_bits(rng, 2 * q, 2046), rng.uniform(-10, 10, q), rng.uniform(-2.0**20, 2.0**20, q),
                 pio2_multiples(rng, q, 1 << 20), pio2_multiples(rng, q, 1 << 24),
                 rng.uniform(-1, 1, q) * 2.0 ** rng.integers(-60, 0, q), near(rng, [2.0**20, -(2.0**20)], q)]
    x = np.concatenate(parts + [SPECIALS])
    x = np.concatenate([x, rng.uniform(-1, 1, max(0, n - len(x)))])[: max(n, len(SPECIALS))]
    x[: len(SPECIALS)] = SPECIALS
    return x


def ulp_error(got, ref):
    """|got - ref| / ulp(ref rounded to double); a non-finite result must equal the reference's."""
    ref_d = ref.astype(np.float64)
    fin = np.isfinite(ref_d) & np.isfinite(got)
    _, e = np.frexp(np.where(fin, ref, LD(1)))  # |ref| = m 2^e, m in [0.5, 1)
    ulp = np.ldexp(LD(1), np.maximum(e.astype(np.int64) - 53, -1074))
    err = np.abs(got.astype(LD) - np.where(fin, ref, LD(0))) / ulp
    same = (got == ref_d) | (np.isnan(got) & np.isnan(ref_d))
    # A zero of the wrong sign is wrong.
    same &= ~((got == 0) & (ref_d == 0) & (np.signbit(got) != np.signbit(ref_d)))
    return np.where(fin, err.astype(np.float64), np.where(same, 0.0, np.inf))


FUNCS = {"exp": (hx.exp, np.exp), "expm1": (hx.expm1, np.expm1), "log": (hx.log, np.log),
         "log2": (hx.log2, np.log2), "log10": (hx.log10, np.log10), "log1p": (hx.log1p, np.log1p),
         "tanh": (hx.tanh, np.tanh), "arctan": (hx.arctan, np.arctan), "sin": (hx.sin, np.sin),
         "cos": (hx.cos, np.cos), "tan": (hx.tan, np.tan), "arcsin": (hx.arcsin, np.arcsin),
         "arccos": (hx.arccos, np.arccos), "sinh": (hx.sinh, np.sinh), "cosh": (hx.cosh, np.cosh),
         "arctan2": (hx.arctan2, np.arctan2), "power": (hx.power, np.power)}


def _erf_loom(x):
    """erf of doubles: no ufunc (NumPy has none); the Loom op erff on f64 (the interpreter or native
    code: the same kernel, fmath64.h's erf64)."""
    import os
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
    from test_loom_math import run_op
    return hx.asarray(run_op("erff", "f64", hx.to_numpy(x)))


def _erf_ref(x):
    """erf in np.longdouble (tests/test_loom_math.py's erf_reference: Taylor series about every
    eighth from coefficients computed in Python's decimal, good to a few 2^-64); NumPy has no erf,
    so the "numpy" column is Python's math.erf (the C library's double erf)."""
    import math
    import os
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
    from test_loom_math import erf_reference
    return erf_reference(x) if x.dtype == LD else np.vectorize(math.erf)(x)


FUNCS["erf"] = (_erf_loom, _erf_ref)


def arctan2_x(y, rng):
    """The x operand of arctan2 for the y inputs: random bit patterns, uniform values, near |y|
    (the switch between atan t and pi/2 - atan(1/t)) and every special value against every y."""
    n = len(y)
    q = n // 4
    x = np.concatenate([random_bits(rng, q, 2046), rng.uniform(-5, 5, q),
                        y[2 * q:3 * q] * (1 + rng.uniform(-1e-3, 1e-3, q)) * np.where(rng.integers(0, 2, q), 1, -1),
                        rng.uniform(-1, 1, n - 3 * q) * 2.0 ** rng.integers(-60, 60, n - 3 * q)])
    x[: len(SPECIALS) ** 2] = np.repeat(SPECIALS, len(SPECIALS))[:n]
    y[: len(SPECIALS) ** 2] = np.tile(SPECIALS, len(SPECIALS))[:n]
    return x


def measure(name, n, chunk=1 << 20):
    ours_f, np_f = FUNCS[name]
    rng = np.random.default_rng(zlib_seed(name))
    x_all = inputs(name, n, rng)
    if name in ("arctan2", "power"):  # x_all holds the first operand
        x2_all = arctan2_x(x_all, rng)
        if name == "power":  # exponents: a fifth integers (signs of negative bases), the rest scaled to
            # keep |y log x| mostly below 800 (over- and underflow are covered by the bit patterns)
            lx = np.abs(np.log(np.abs(np.where(np.isfinite(x_all) & (x_all != 0), x_all, 2.0))))
            y = rng.uniform(-1, 1, len(x_all)) * np.minimum(800 / np.maximum(lx, 1e-300), 1e15)
            k = rng.integers(0, 5, len(x_all)) == 0
            y[k] = np.round(rng.uniform(-60, 60, int(k.sum())))
            x2_all = np.where(np.arange(len(x_all)) < len(x_all) // 4, x2_all, y)
            x2_all[: len(SPECIALS) ** 2] = np.repeat(SPECIALS, len(SPECIALS))
        ours_1, np_1 = ours_f, np_f
        ours_f = lambda yv, _x2=None: ours_1(yv, hx.asarray(x2_cur[0]))  # noqa: E731
        np_f = lambda yv: np_1(yv, x2_cur[0].astype(yv.dtype))  # noqa: E731
    x2_cur = [None]
    worst, worst_x, np_worst, np_worst_x, over_half = 0.0, 0.0, 0.0, 0.0, 0
    with np.errstate(all="ignore"):
        for i in range(0, len(x_all), chunk):
            x = x_all[i:i + chunk]
            if name in ("arctan2", "power"):
                x2_cur[0] = x2_all[i:i + chunk]
            got = hx.to_numpy(ours_f(hx.asarray(x)))
            ref = np_f(x.astype(LD))
            err = ulp_error(got, ref)
            np_err = ulp_error(np_f(x), ref)
            j, k = int(np.argmax(err)), int(np.argmax(np_err))
            if err[j] > worst:
                worst, worst_x = float(err[j]), float(x[j])
            if np_err[k] > np_worst:
                np_worst, np_worst_x = float(np_err[k]), float(x[k])
            over_half += int(np.count_nonzero(err > 0.5))
        # The special values against NumPy's results, bit for bit (NaN: both NaN).
        sp = SPECIALS
        if name in ("arctan2", "power"):
            sp = x_all[: len(SPECIALS) ** 2]
            x2_cur[0] = x2_all[: len(sp)]
        got, want = hx.to_numpy(ours_f(hx.asarray(sp))), np_f(sp)
        bad = ~((got.view(np.int64) == want.view(np.int64)) | (np.isnan(got) & np.isnan(want)))
    return {"op": name, "inputs": len(x_all), "max_ulp": worst, "at": worst_x.hex(),
            "not_correctly_rounded": over_half, "numpy_max_ulp": np_worst, "numpy_at": np_worst_x.hex(),
            "specials_differing_from_numpy": {float(a).hex(): [float(g).hex(), float(w).hex()]
                                              for a, g, w in zip(sp[bad], got[bad], want[bad])}}


def zlib_seed(name):
    import zlib

    return zlib.crc32(name.encode())


def main(n: int = 10_000_000, quick: bool = False) -> None:
    rows = []
    for name in FUNCS:
        t0 = time.perf_counter()
        r = measure(name, n)
        rows.append(r)
        print(f"{name:7s} {r['inputs']:>10,} inputs  max {r['max_ulp']:.3f} ulp at {r['at']}  "
              f"(> 0.5 ulp: {r['not_correctly_rounded']})   numpy max {r['numpy_max_ulp']:.3f} ulp   "
              f"specials != numpy: {len(r['specials_differing_from_numpy'])}  [{time.perf_counter() - t0:.0f} s]",
              flush=True)
    if quick:
        print("--quick: nothing written")
        return
    save_results("math_accuracy_f64", {"figure": "hx float64 math ufuncs: max error in ulps (vs np.longdouble)",
                                       "n": n, "numpy": np.__version__, "table": rows})


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    quick = "--quick" in sys.argv
    main(*(int(a) for a in args[:1]), **({"n": 1_000_000} if quick and not args else {}), quick=quick)
