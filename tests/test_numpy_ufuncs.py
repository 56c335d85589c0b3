"""NumPy's ufuncs beyond the array API (cbrt, exp2, fmax, fmin, fmod, heaviside, logaddexp2, gcd, lcm).

Exact ops are compared bit for bit with NumPy over every dtype NumPy has a loop for; the
transcendental ones against the float64 (or exact) value rounded to the dtype, within the 1 ulp
that hrx::fmath promises (NumPy's own float16/float32 cbrt misses it, so NumPy is not the
reference there), computed in long double.
"""

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, strategies as st

import hrxarray as hx

BF16 = np.dtype(ml_dtypes.bfloat16)
INTS = [np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64)]
FLOATS = [np.dtype(np.float16), BF16, np.dtype(np.float32), np.dtype(np.float64)]


def _operands(dtype, seed, n=64):
    rng = np.random.default_rng(seed)
    if dtype == np.dtype(bool):
        return rng.integers(0, 2, n).astype(bool), rng.integers(0, 2, n).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        a = rng.integers(info.min, info.max, n, endpoint=True, dtype=dtype)
        b = rng.integers(info.min, info.max, n, endpoint=True, dtype=dtype)
        small = rng.integers(0 if dtype.kind == "u" else -9, 10, n).astype(dtype)
        b[: n // 4] = small[: n // 4]  # zero and small divisors, common factors
        a[n // 4: n // 2] = small[n // 4: n // 2] * 6
        a[-3:] = info.min
        b[-2] = -1 if dtype.kind == "i" else 1
        b[-1] = 0
        return a, b
    a = (rng.standard_normal(n) * 5).astype(dtype)
    b = (rng.standard_normal(n) * 5).astype(dtype)
    a[:4], b[2:6] = np.nan, np.nan
    a[6], b[6], a[7], b[7], b[8] = 0.0, 0.0, np.inf, -np.inf, 0.0
    a[9], b[9] = b[9], b[9]  # equal operands
    return a, b


def _same(got, ref):
    assert got.dtype == ref.dtype
    if ref.dtype.kind in "iub":
        np.testing.assert_array_equal(got, ref)
    else:
        g, r = got.astype(np.float64), ref.astype(np.float64)
        np.testing.assert_array_equal(np.isnan(g), np.isnan(r))
        ok = ~np.isnan(r)
        np.testing.assert_array_equal(g[ok], r[ok])


@pytest.mark.parametrize("name", ["fmax", "fmin", "fmod", "gcd", "lcm", "heaviside"])
@given(seed=st.integers(0, 2**32 - 1))
def test_exact_ufuncs_match_numpy(name, seed):
    for dtype in [np.dtype(bool)] + INTS + FLOATS:
        a, b = _operands(dtype, seed)
        try:
            with np.errstate(all="ignore"):
                ref = getattr(np, name)(a, b)
        except TypeError:
            # NumPy has no loop (fmod of bools, gcd of floats, ...): hx refuses too, naming the ufunc.
            with pytest.raises(TypeError, match=name):
                getattr(hx, name)(hx.asarray(a), hx.asarray(b))
            continue
        got = hx.to_numpy(getattr(hx, name)(hx.asarray(a), hx.asarray(b)))
        if name in ("fmax", "fmin") and dtype.kind == "f":
            # Signed zeros: NumPy's scalar and vector loops disagree; hx gives the second operand.
            eq = (a == b) & (a == 0)
            np.testing.assert_array_equal(np.signbit(got[eq].astype(np.float64)),
                                          np.signbit(b[eq].astype(np.float64)))
            got, ref = np.where(eq, 0, got).astype(dtype), np.where(eq, 0, ref).astype(dtype)
        _same(got, ref)


def test_fmax_fmin_skip_nan_and_propagate_only_when_both_are():
    a = np.array([np.nan, 1.0, np.nan, 2.0], np.float32)
    b = np.array([3.0, np.nan, np.nan, -1.0], np.float32)
    np.testing.assert_array_equal(hx.to_numpy(hx.fmax(hx.asarray(a), hx.asarray(b))), [3, 1, np.nan, 2])
    np.testing.assert_array_equal(hx.to_numpy(hx.fmin(hx.asarray(a), hx.asarray(b))), [3, 1, np.nan, -1])
    # Through NumPy's dispatch, with a Python scalar.
    np.testing.assert_array_equal(hx.to_numpy(np.fmax(hx.asarray(a), 1.5)), [1.5, 1.5, 1.5, 2])


def test_integer_edges():
    i8 = np.int8
    assert hx.to_numpy(hx.gcd(hx.asarray(np.array([-128], i8)), hx.asarray(np.array([-128], i8))))[0] == -128
    assert hx.to_numpy(hx.lcm(hx.asarray(np.array([50], i8)), hx.asarray(np.array([-3], i8))))[0] == np.lcm(i8(50), i8(-3))
    got = hx.to_numpy(hx.fmod(hx.asarray(np.array([-7, 7, -128, 5], i8)), hx.asarray(np.array([2, -2, -1, 0], i8))))
    np.testing.assert_array_equal(got, [-1, 1, 0, 0])
    # gcd of two bools has no loop in NumPy; with an integer it takes the integer's.
    with pytest.raises(TypeError, match="gcd"):
        hx.gcd(hx.asarray(np.array([True])), hx.asarray(np.array([True])))
    assert hx.gcd(hx.asarray(np.array([True])), hx.asarray(np.array([4], i8))).dtype == np.int8


def _ulps(got, exact, dtype):
    """|got - exact| in units of the dtype's spacing at the exact value (both finite, exact in long double)."""
    spacing = np.spacing(np.abs(exact.astype(dtype))).astype(np.longdouble)
    return np.abs(got.astype(np.longdouble) - exact) / spacing


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
def test_cbrt_and_exp2_within_one_ulp(dtype):
    rng = np.random.default_rng(5)
    big = float((ml_dtypes.finfo(dtype) if dtype == BF16 else np.finfo(dtype)).max)
    wide = rng.uniform(-1, 1, 500) * 10.0 ** rng.integers(-30, 30, 500)
    x = np.concatenate([rng.standard_normal(2000) * 40, np.clip(wide, -big, big),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -8.0, 27.0]]).astype(dtype)
    x64 = x.astype(np.float64)
    xl = x64.astype(np.longdouble)  # x86-64's 64-bit mantissa: a reference finer than float64
    with np.errstate(over="ignore"):
        exact2 = np.exp2(xl)
    for name, exact in (("cbrt", np.cbrt(xl)), ("exp2", exact2)):
        got = hx.to_numpy(getattr(hx, name)(hx.asarray(x)))
        assert got.dtype == dtype
        finite = np.isfinite(exact) & (np.abs(exact) <= big)
        assert np.all(_ulps(got[finite], exact[finite], dtype) <= 1.0), name
        # Special values exactly as NumPy's (cbrt(-0) = -0, exp2(-inf) = 0, NaN stays NaN, ...).
        special = ~finite | (x64 == 0)
        with np.errstate(all="ignore"):
            ref = getattr(np, name)(x64[special]).astype(dtype)
        _same(got[special], ref)
    # Exact cases (glibc's double cbrt gave 3.0000000000000004 for 27).
    np.testing.assert_array_equal(hx.to_numpy(hx.cbrt(hx.asarray(np.array([-8.0, 27.0, 64.0], dtype)))),
                                  np.array([-2.0, 3.0, 4.0], dtype))
    np.testing.assert_array_equal(hx.to_numpy(hx.exp2(hx.asarray(np.array([-3.0, 0.0, 10.0], dtype)))),
                                  np.array([0.125, 1.0, 1024.0], dtype))


@given(x=st.floats(-200, 200), y=st.floats(-200, 200))
def test_logaddexp2_matches_the_exact_value(x, y):
    exact = max(x, y) + math.log2(1 + 2.0 ** -abs(x - y))
    got = float(hx.to_numpy(hx.logaddexp2(hx.asarray(np.array([x])), hx.asarray(np.array([y]))))[0])
    assert got == pytest.approx(exact, rel=1e-15, abs=1e-15)
    ref = np.logaddexp2(np.float32(x), np.float32(y))
    got32 = hx.to_numpy(hx.logaddexp2(hx.asarray(np.array([x], np.float32)), hx.asarray(np.array([y], np.float32))))
    assert got32.dtype == np.float32 and float(got32[0]) == pytest.approx(float(ref), rel=2e-7, abs=2e-7)


def test_logaddexp2_special_values_match_numpy():
    v = np.array([np.inf, -np.inf, np.nan, 0.0, 3.0])
    a, b = np.repeat(v, len(v)), np.tile(v, len(v))
    with np.errstate(all="ignore"):
        ref = np.logaddexp2(a, b)
    _same(hx.to_numpy(hx.logaddexp2(hx.asarray(a), hx.asarray(b))), ref)


def test_new_ufuncs_are_numpy_dispatch_targets():
    x = hx.asarray(np.array([1.0, 8.0, -27.0]))
    assert isinstance(np.cbrt(x), hx.DeviceArray)
    np.testing.assert_array_equal(hx.to_numpy(np.cbrt(x)), [1.0, 2.0, -3.0])
    assert isinstance(np.fmod(x, 5.0), hx.DeviceArray)
    for name in ("cbrt", "exp2", "fmax", "fmin", "fmod", "heaviside", "logaddexp2", "gcd", "lcm"):
        assert getattr(hx, name).__name__ == name and getattr(hx, name).nin == getattr(np, name).nin
        for t in getattr(hx, name).types:  # every loop hx has, NumPy has (bfloat16 aside)
            if "E" not in t:
                assert t in getattr(np, name).types or t.replace("l", "q").replace("L", "Q") in getattr(np, name).types


def test_float64_cbrt_is_within_half_an_ulp_at_every_magnitude():
    rng = np.random.default_rng(11)
    x = np.concatenate([rng.uniform(-1, 1, 50000) * 10.0 ** rng.integers(-320, 308, 50000),
                        rng.uniform(0, 1, 5000) * 2.0 ** -1022,  # subnormals
                        [5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, -1.7976931348623157e308]])
    got = hx.to_numpy(hx.cbrt(hx.asarray(x)))
    exact = np.cbrt(x.astype(np.longdouble))
    assert np.all(_ulps(got, exact, np.dtype(np.float64)) <= 0.5 + 1e-9)
    cubes = np.arange(1, 20000, dtype=np.float64)
    np.testing.assert_array_equal(hx.to_numpy(hx.cbrt(hx.asarray(-(cubes ** 3)))), -cubes)
