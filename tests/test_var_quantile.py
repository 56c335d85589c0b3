"""std / var / quantile / percentile against NumPy (dtypes, shapes, axes, ddof/correction, NaN, empty)."""

import math
import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import hrxarray as hx

BF16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = [np.dtype(np.float16), BF16, np.dtype(np.float32), np.dtype(np.float64)]
DTYPES = [np.dtype(t) for t in (bool, np.int8, np.int32, np.int64, np.uint16, np.uint64)] + FLOATS
# NumPy sums pairwise in its own blocks (and sequentially along strided axes); hrxarray's
# pairwise order is its own (Note [Reduction order]): the same values up to the rounding of a sum.
RTOL = {"float16": 3e-3, "bfloat16": 3e-2, "float32": 2e-5, "float64": 1e-12, "complex64": 2e-5,
        "complex128": 1e-12}


def _data(rng, dtype, shape, nans=True):
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -50, 50, shape).astype(dtype)
    vals = rng.standard_normal(shape) * 3 + 1
    if nans:
        vals = np.where(rng.random(shape) < 0.03, np.nan, vals)
    return vals.astype(dtype)


def _axis(data, ndim):
    return data.draw(st.one_of(st.none(), st.integers(-ndim, ndim - 1),
                               st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True)
                               .map(tuple)))


def _close(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    rtol = RTOL.get(got.dtype.name, 1e-12)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=rtol,
                               equal_nan=True)


def _np_var(a, axis, ddof, keepdims, std):
    f = np.std if std else np.var
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy warns about ddof >= n and empty slices
        out = f(a, axis=axis, ddof=ddof, keepdims=keepdims)
    # The array API: n - correction <= 0 is NaN (NumPy divides by 0 and gives inf for nonzero data).
    n = a.size if axis is None else math.prod(a.shape[d] for d in np.atleast_1d(axis))
    if n - ddof <= 0:
        out = np.full_like(out, np.nan)
    return out


@given(dtype=st.sampled_from(DTYPES), shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=6),
       seed=st.integers(0, 2**32 - 1), ddof=st.sampled_from([0, 1, 2, 0.5]), keepdims=st.booleans(),
       std=st.booleans(), data=st.data())
def test_var_and_std_match_numpy(dtype, shape, seed, ddof, keepdims, std, data):
    a = _data(np.random.default_rng(seed), dtype, shape)
    axis = _axis(data, len(shape)) if shape else None
    f = hx.std if std else hx.var
    got = f(hx.asarray(a), axis=axis, correction=ddof, keepdims=keepdims)
    _close(got, _np_var(a, axis, ddof, keepdims, std))


def test_var_is_two_pass_not_the_naive_formula():
    # mean(x^2) - mean(x)^2 cancels catastrophically here; the two-pass result is exact.
    a = (np.float32(1e4) + np.arange(8, dtype=np.float32))
    got = hx.to_numpy(hx.var(hx.asarray(a)))
    assert got == np.var(a) == np.float32(5.25)


def test_var_complex_and_numpy_spellings():
    rng = np.random.default_rng(3)
    z = (rng.standard_normal((4, 5)) + 1j * rng.standard_normal((4, 5))).astype(np.complex64)
    _close(hx.var(hx.asarray(z), axis=1), np.var(z, axis=1))
    x = rng.standard_normal((3, 6))
    d = hx.asarray(x)
    _close(hx.std(d, 1, ddof=1), np.std(x, 1, ddof=1))
    _close(np.std(d, axis=0, ddof=1), np.std(x, axis=0, ddof=1))  # __array_function__
    _close(np.var(d), np.var(x))
    _close(d.var(axis=1, keepdims=True), x.var(axis=1, keepdims=True))
    _close(d.std(ddof=2), x.std(ddof=2))
    _close(hx.var(d, dtype=np.float32), np.var(x, dtype=np.float32))
    out = hx.zeros((6,))
    assert hx.std(d, axis=0, out=out) is out
    _close(out, np.std(x, axis=0))
    assert isinstance(np.var(d), hx.DeviceArray)


def test_var_special_cases():
    assert math.isnan(float(hx.var(hx.asarray(np.zeros((0,), np.float32)))))
    assert math.isnan(float(hx.std(hx.asarray([1.0, 2.0]), correction=2)))
    assert math.isnan(float(hx.var(hx.asarray([1.0, np.nan, 2.0]))))
    assert hx.var(hx.asarray(np.arange(4, dtype=np.int16))).dtype == np.float64
    with pytest.raises(TypeError, match="var: give correction or ddof"):
        hx.var(hx.asarray([1.0]), ddof=1, correction=1)
    with pytest.raises(TypeError, match="std: correction must be a real number"):
        hx.std(hx.asarray([1.0]), correction="1")
    with pytest.raises(np.exceptions.AxisError):
        hx.var(hx.asarray([1.0]), axis=1)


METHODS = ["linear", "lower", "higher", "nearest", "midpoint"]


@given(dtype=st.sampled_from([np.dtype(np.int32), np.dtype(np.uint8), np.dtype(np.float16), np.dtype(np.float32),
                              np.dtype(np.float64)]),
       shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6), seed=st.integers(0, 2**32 - 1),
       method=st.sampled_from(METHODS), keepdims=st.booleans(), nans=st.booleans(), data=st.data())
def test_quantile_matches_numpy_bit_for_bit(dtype, shape, seed, method, keepdims, nans, data):
    rng = np.random.default_rng(seed)
    a = _data(rng, dtype, shape, nans)
    axis = _axis(data, len(shape))
    q = data.draw(st.one_of(st.floats(0, 1), st.just(1), st.just(0.0),
                            st.lists(st.floats(0, 1), min_size=1, max_size=4).map(np.array),
                            st.floats(0, 1).map(np.float32)))
    got = hx.to_numpy(hx.quantile(hx.asarray(a), q, axis=axis, method=method, keepdims=keepdims))
    with np.errstate(all="ignore"):
        want = np.asarray(np.quantile(a, q, axis=axis, method=method, keepdims=keepdims))
    if want.size == 1 and np.isnan(want).all() and isinstance(q, np.floating) and want.dtype != got.dtype:
        # NumPy's data-dependent dtype: a one-element result (0-d, or every
        # axis reduced with keepdims) with a NaN is its input's element a[-1]
        # (float16 here) where one without is the promoted dtype (float32);
        # hrxarray's dtype never depends on the data.
        assert got.dtype == np.result_type(a.dtype, q.dtype)
        want = want.astype(got.dtype)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_percentile_and_dispatch():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((7, 9)).astype(np.float32)
    d = hx.asarray(x)
    for q in (0, 37.5, 100, [5, 50, 95]):
        for axis in (None, 0, 1, (0, 1)):
            got = hx.to_numpy(hx.percentile(d, q, axis=axis))
            want = np.asarray(np.percentile(x, q, axis=axis))
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
    assert isinstance(np.percentile(d, 50), hx.DeviceArray)
    np.testing.assert_array_equal(hx.to_numpy(np.quantile(d, [0.2, 0.8], axis=1)), np.quantile(x, [0.2, 0.8], axis=1))
    out = hx.zeros((9,), np.float32)
    assert hx.quantile(d, 0.5, axis=0, out=out) is out
    np.testing.assert_array_equal(hx.to_numpy(out), np.quantile(x, 0.5, axis=0))


def test_quantile_errors_change_nothing():
    d = hx.asarray([1.0, 2.0])
    with pytest.raises(ValueError, match=r"quantile: q must be in the range \[0, 1\]"):
        hx.quantile(d, 1.5)
    with pytest.raises(ValueError, match=r"percentile: q must be in the range \[0, 100\]"):
        hx.percentile(d, -1)
    with pytest.raises(ValueError, match="quantile: method must be one of"):
        hx.quantile(d, 0.5, method="hazen")
    with pytest.raises(TypeError, match="quantile: a must be real"):
        hx.quantile(hx.asarray([1j]), 0.5)
    with pytest.raises(ValueError, match="quantile: cannot take a quantile of an empty reduction"):
        hx.quantile(hx.asarray(np.zeros((2, 0))), 0.5, axis=1)
    np.testing.assert_array_equal(hx.to_numpy(d), [1.0, 2.0])


def test_quantile_is_asynchronous_and_keeps_the_input():
    x = hx.asarray(np.arange(10.0)[::-1].copy())
    r = hx.quantile(x, 0.5)
    assert isinstance(r, hx.DeviceArray)
    assert float(r) == 4.5
    np.testing.assert_array_equal(hx.to_numpy(x), np.arange(10.0)[::-1])


def test_quantile_dtype_does_not_depend_on_nans():
    # NumPy gives float16 for the NaN case and float32 without (see above).
    q = np.float32(0.5)
    for a in (np.array([1, np.nan, 2], np.float16), np.array([1, 3, 2], np.float16)):
        for keepdims in (False, True):
            got = hx.to_numpy(hx.quantile(hx.asarray(a), q, keepdims=keepdims))
            assert got.dtype == np.float32
            np.testing.assert_array_equal(got, np.quantile(a, q, keepdims=keepdims).astype(np.float32))
