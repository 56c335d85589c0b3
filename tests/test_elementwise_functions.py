"""clip, round, isclose, allclose, array_equal, the array API's newer float ufuncs through hx, and the
NumPy-style methods, against NumPy (ml_dtypes for bfloat16) and plain-Python models of the standard."""

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import hrxarray as hx

BF16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = [np.dtype(np.float16), BF16, np.dtype(np.float32), np.dtype(np.float64)]
REALS = [np.dtype(t) for t in (np.int8, np.int32, np.int64, np.uint8, np.uint64)] + FLOATS
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -2.5, 3.7, 1e-30, 5e-324, math.inf, -math.inf, math.nan, 65504.0]


def _vals(dtype, rng, n=40):
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    with np.errstate(all="ignore"):
        special = np.array(SPECIAL).astype(np.float32 if dtype == BF16 else dtype).astype(dtype)
        return np.concatenate([special, (rng.standard_normal(n) * 10).astype(dtype)])


def _same(got, want, zero_sign=True):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    if got.dtype.kind in "fc" or got.dtype == BF16:
        g, w = got.astype(np.complex128 if got.dtype.kind == "c" else np.float64), want.astype(
            np.complex128 if got.dtype.kind == "c" else np.float64)
        both_nan = np.isnan(g) & np.isnan(w)
        assert np.all(both_nan | (g == w)), (got, want)
        if zero_sign:
            assert np.all(both_nan | (np.signbit(g.real) == np.signbit(w.real))), (got, want)
    else:
        np.testing.assert_array_equal(got, want)


# --- clip ----------------------------------------------------------------------------------


@given(dtype=st.sampled_from(REALS), seed=st.integers(0, 2**32 - 1), lo=st.one_of(st.none(), st.integers(-3, 3)),
       hi=st.one_of(st.none(), st.integers(4, 9)), arrays=st.booleans())
def test_clip_matches_numpy(dtype, seed, lo, hi, arrays):
    rng = np.random.default_rng(seed)
    a = _vals(dtype, rng)
    if dtype.kind == "u" and lo is not None:
        lo = abs(lo)
    blo = None if lo is None else (np.full(a.shape, lo, dtype) if arrays else lo)
    bhi = None if hi is None else (np.full(a.shape, hi, dtype) if arrays else hi)
    got = hx.clip(hx.asarray(a), None if blo is None else (hx.asarray(blo) if arrays else blo),
                  None if bhi is None else (hx.asarray(bhi) if arrays else bhi))
    with np.errstate(all="ignore"):
        if blo is None and bhi is None:
            want = a.copy()
        elif dtype == BF16:
            # NumPy's clip of bfloat16 goes through float32 (and gives float32 for Python int
            # bounds); the array API keeps x's dtype: its formula on ml_dtypes' loops.
            want = a if blo is None else np.maximum(a, np.asarray(blo, BF16))
            want = want if bhi is None else np.minimum(want, np.asarray(bhi, BF16))
        else:
            want = np.clip(a, blo, bhi)
    # Which zero comes out where -0 meets a bound of 0 is unspecified (the array API); hrxarray's is
    # maximum/minimum's (Note [Elementwise numerics]), NumPy's SIMD clip keeps x.
    _same(got, want, zero_sign=False)


def test_clip_nan_bounds_spellings_and_dispatch():
    x = hx.asarray([1.0, math.nan, 5.0, -3.0])
    _same(hx.clip(x, 0.0, 2.0), np.array([1.0, math.nan, 2.0, 0.0]))
    _same(hx.clip(x, hx.asarray([math.nan] * 4), 2.0), np.full(4, math.nan))  # a NaN bound gives NaN
    _same(hx.clip(x, max=0.0), np.clip(np.asarray(x), None, 0.0))
    _same(hx.clip(x, a_min=-1.0, a_max=1.0), np.clip(np.asarray(x), -1.0, 1.0))
    _same(np.clip(x, -1.0, 1.0), np.clip(np.asarray(x), -1.0, 1.0))  # __array_function__
    _same(np.clip(x, min=-1.0), np.clip(np.asarray(x), min=-1.0))
    _same(x.clip(0.0, 1.0), np.asarray(x).clip(0.0, 1.0))
    both = hx.clip(x)
    _same(both, np.asarray(x))
    assert both.buffer is not x.buffer  # a copy, never the input itself
    out = hx.zeros((4,))
    assert hx.clip(x, 0.0, 1.0, out=out) is out
    _same(out, np.clip(np.asarray(x), 0.0, 1.0))
    # Python int bounds beyond an integer dtype's range are clamped to it (NumPy, array_api_strict).
    i8 = np.array([-5, 3, 100], np.int8)
    _same(hx.clip(hx.asarray(i8), -1000, 50), np.clip(i8, -1000, 50))
    _same(hx.clip(hx.asarray(i8), 0, 1000), np.clip(i8, 0, 1000))
    with pytest.raises(TypeError, match="clip: give min or a_min, not both"):
        hx.clip(x, 0.0, a_min=1.0)
    with pytest.raises(TypeError, match="clip: x must have a real-valued dtype"):
        hx.clip(hx.asarray([1j]), 0.0)


# --- round ---------------------------------------------------------------------------------


@given(dtype=st.sampled_from(REALS + [np.dtype(np.complex64), np.dtype(np.complex128)]),
       seed=st.integers(0, 2**32 - 1), decimals=st.integers(-3, 4))
def test_round_matches_numpy(dtype, seed, decimals):
    rng = np.random.default_rng(seed)
    if dtype.kind == "c":
        with np.errstate(all="ignore"):
            a = (_vals(np.dtype(np.float64), rng) + 1j * _vals(np.dtype(np.float64), rng)[::-1]).astype(dtype)
    else:
        a = _vals(dtype, rng)
    if dtype.kind in "iu" and decimals < 0:
        a = a // 8  # NumPy's integer path goes through float64: keep clear of 2**53
    got = hx.round(hx.asarray(a), decimals=decimals)
    with np.errstate(all="ignore"):
        want = np.round(a, decimals)
    _same(got, want)


def test_round_keeps_the_dtype_and_rounds_half_to_even():
    for dt in (np.int8, np.uint16, np.int64, bool):
        assert hx.round(hx.asarray(np.ones(3, dt))).dtype == np.dtype(dt)
    _same(hx.round(hx.asarray([0.5, 1.5, 2.5, -0.5, -0.0])), np.array([0.0, 2.0, 2.0, -0.0, -0.0]))
    _same(hx.round(hx.asarray([2.675]), 2), np.round(np.array([2.675]), 2))  # NumPy's formula: 2.67
    _same(np.round(hx.asarray([1.25, 3.5]), 1), np.round(np.array([1.25, 3.5]), 1))  # __array_function__
    _same(hx.asarray([1.5, 2.5]).round(), np.array([2.0, 2.0]))
    with pytest.raises(TypeError, match="round: decimals must be an integer"):
        hx.round(hx.asarray([1.0]), 1.5)


# --- isclose / allclose / array_equal ----------------------------------------------------------


@given(dtype=st.sampled_from([np.dtype(np.int32), np.dtype(np.float16), np.dtype(np.float32),
                              np.dtype(np.float64), np.dtype(np.complex128)]),
       seed=st.integers(0, 2**32 - 1), rtol=st.sampled_from([1e-5, 0.0, 0.1]),
       atol=st.sampled_from([1e-8, 0.0, 1.0]), equal_nan=st.booleans())
def test_isclose_matches_numpy(dtype, seed, rtol, atol, equal_nan):
    rng = np.random.default_rng(seed)
    base = np.array([0.0, 1.0, math.inf, -math.inf, math.nan, 1e-9, 1e6] + list(rng.standard_normal(20)))
    if dtype.kind in "iu":
        base = np.nan_to_num(base, posinf=9, neginf=-9) * 3
    with np.errstate(all="ignore"):
        a = base.astype(dtype)
        b = (base * (1 + rng.choice([0, 1e-6, 1e-3, 0.5], base.size)) + rng.choice([0, 1e-9, 0.5], base.size))
        b = np.where(rng.random(base.size) < 0.3, base, b).astype(dtype)
    got = hx.isclose(hx.asarray(a), hx.asarray(b), rtol, atol, equal_nan)
    with np.errstate(all="ignore"):
        want = np.isclose(a, b, rtol, atol, equal_nan)
    _same(got, want)
    assert hx.allclose(hx.asarray(a), hx.asarray(b), rtol, atol, equal_nan) is bool(np.all(want))


def test_allclose_array_equal_and_dispatch():
    x = hx.asarray([1.0, math.nan, 3.0])
    assert hx.allclose(x, [1.0, math.nan, 3.0 + 1e-9], equal_nan=True) is True
    assert hx.allclose(x, [1.0, math.nan, 3.0]) is False
    assert np.allclose(x, x, equal_nan=True) is True  # __array_function__ gives a Python bool
    assert isinstance(np.isclose(x, 1.0), hx.DeviceArray)
    assert hx.array_equal(x, x) is False and hx.array_equal(x, x, equal_nan=True) is True
    assert hx.array_equal(hx.asarray([1, 2]), [1, 2]) is True
    assert hx.array_equal(hx.asarray([1, 2]), hx.asarray([1, 2, 3])) is False
    assert np.array_equal(hx.asarray([[1, 2]]), hx.asarray([1, 2])) is False  # shapes differ
    assert hx.array_equal(hx.asarray([1, 2], dtype=np.int8), hx.asarray([1.0, 2.0]))
    with pytest.raises(TypeError, match="isclose: rtol must be a real number"):
        hx.isclose(x, x, rtol="1")


# --- the newer float ufuncs through hx: the standard's special cases --------------------------------


def _model_atan2(y, x):
    return math.atan2(y, x)


def _model_logaddexp(x, y):
    if math.isnan(x) or math.isnan(y):
        return math.nan
    if x == y:
        return x + math.log(2)
    m = max(x, y)
    return m + math.log1p(math.exp(-abs(x - y)))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
def test_binary_float_ufuncs_on_special_values(dtype):
    with np.errstate(all="ignore"):
        v = np.array(SPECIAL).astype(np.float32).astype(dtype)
    a, b = np.meshgrid(v, v)
    a, b = a.ravel(), b.ravel()
    xa, xb = hx.asarray(a), hx.asarray(b)
    af, bf = a.astype(np.float64), b.astype(np.float64)
    ref = {
        "copysign": [math.copysign(p, q) for p, q in zip(af, bf)],
        "arctan2": [_model_atan2(p, q) for p, q in zip(af, bf)],
        "hypot": [math.hypot(p, q) for p, q in zip(af, bf)],
        "logaddexp": [_model_logaddexp(p, q) for p, q in zip(af, bf)],
    }
    tol = {"float16": 1e-3, "bfloat16": 8e-3, "float32": 1e-6, "float64": 1e-15}[dtype.name]
    for name, want in ref.items():
        got = np.asarray(getattr(hx, name)(xa, xb)).astype(np.float64)
        assert got.dtype == np.float64 and getattr(hx, name)(xa, xb).dtype == dtype
        with np.errstate(all="ignore"):
            want = np.array(want).astype(dtype).astype(np.float64)  # the model rounded to the dtype
        both_nan = np.isnan(got) & np.isnan(want)
        close = np.isclose(got, want, rtol=tol, atol=0) | both_nan
        assert close.all(), (name, a[~close][:4], b[~close][:4], got[~close][:4], want[~close][:4])
        assert np.all(both_nan | (got != 0) | (np.signbit(got) == np.signbit(want))), name
    assert hx.atan2 is hx.arctan2


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
def test_nextafter_steps_one_unit_of_the_dtype(dtype):
    fi = ml_dtypes.finfo(dtype) if dtype == BF16 else np.finfo(dtype)
    v = np.array([0.0, -0.0, 1.0, -1.0, float(fi.max), float(fi.smallest_subnormal), 3.0]).astype(dtype)
    up = np.asarray(hx.nextafter(hx.asarray(v), hx.asarray(np.full(v.shape, np.inf, dtype))))
    bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[v.itemsize]
    vb, ub = v.view(bits), up.view(bits)
    for x, xb, u, uw in zip(v, vb, up, ub):
        x = float(x)
        if x == 0:
            assert float(u) == float(fi.smallest_subnormal)
        elif x > 0:
            assert int(uw) == int(xb) + 1
        else:
            assert int(uw) == int(xb) - 1
    # The standard's zeros: nextafter(-0, +0) is +0, nextafter(+0, -0) is -0; NaN propagates.
    z = np.asarray(hx.nextafter(hx.asarray(np.array([-0.0, 0.0, np.nan, 1.0]).astype(dtype)),
                                hx.asarray(np.array([0.0, -0.0, 1.0, np.nan]).astype(dtype))))
    zf = z.astype(np.float64)
    assert list(np.signbit(zf[:2])) == [False, True] and np.isnan(zf[2:]).all()


def test_signbit_log2_log10_and_floor_divide_special_cases():
    x = np.array([0.0, -0.0, math.inf, -math.inf, 2.0, -2.0, math.nan, -math.nan])
    for dt in FLOATS:
        got = np.asarray(hx.signbit(hx.asarray(x.astype(np.float32).astype(dt))))
        assert got.dtype == np.bool_ and list(got) == list(np.signbit(x)), dt
    v = np.array([0.0, -0.0, 1.0, 8.0, 1000.0, math.inf, -1.0, math.nan])
    np.testing.assert_array_equal(np.asarray(hx.log2(hx.asarray(v))), [-math.inf, -math.inf, 0, 3, math.log2(1000),
                                                                      math.inf, math.nan, math.nan])
    np.testing.assert_array_equal(np.asarray(hx.log10(hx.asarray(v))), [-math.inf, -math.inf, 0, math.log10(8), 3,
                                                                       math.inf, math.nan, math.nan])
    # floor_divide with infinities: the array API's floor(a / b), where NumPy gives NaN and -1.
    a = np.array([math.inf, math.inf, -math.inf, -math.inf, 1.0, -1.0, 1.0, -1.0, math.inf])
    b = np.array([2.0, -2.0, 2.0, -2.0, -math.inf, math.inf, math.inf, -math.inf, math.inf])
    want = [math.inf, -math.inf, -math.inf, math.inf, -0.0, -0.0, 0.0, 0.0, math.nan]
    for dt in FLOATS:
        xa, xb = hx.asarray(a.astype(dt)), hx.asarray(b.astype(dt))
        for got in (hx.floor_divide(xa, xb), xa // xb):
            _same(got, np.array(want).astype(dt))
        y = xa.copy()
        y //= xb
        _same(y, np.array(want).astype(dt))


# --- methods and their NumPy equivalents -----------------------------------------------------


@given(a=hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=3, max_side=4),
                    elements=st.floats(-100, 100, allow_subnormal=False)))
def test_methods_match_numpy(a):
    x = hx.asarray(a)
    assert x.tolist() == a.tolist()
    for name in ("any", "all", "sum", "prod", "mean", "std", "var"):
        got = getattr(x, name)()
        want = getattr(a, name)()
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12, equal_nan=True)
    if a.size:
        for name in ("min", "max", "argmin", "argmax"):
            np.testing.assert_array_equal(np.asarray(getattr(x, name)()), getattr(a, name)())
        assert x.item(0) == a.item(0)
    if a.ndim:
        np.testing.assert_allclose(np.asarray(x.cumsum()), a.cumsum(), rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(np.asarray(x.cumprod()), a.cumprod(), rtol=1e-12, atol=1e-9)
        for got, want in zip(x.nonzero(), a.nonzero()):
            np.testing.assert_array_equal(np.asarray(got), want)
    _same(x.round(1), a.round(1))
    _same(x.clip(-1, 1), a.clip(-1, 1))
    _same(x.conj(), a.conj())
    _same(x.conjugate(), a.conjugate())


def test_complex_conj_and_tolist_methods():
    z = np.array([[1 + 2j, -3j]], np.complex64)
    x = hx.asarray(z)
    _same(x.conj(), z.conj())
    assert x.tolist() == z.tolist() and isinstance(x.tolist()[0][0], complex)
    assert hx.asarray(np.int8(3)).tolist() == 3
