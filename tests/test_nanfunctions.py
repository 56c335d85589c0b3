"""NumPy's nan* functions and median on DeviceArrays against NumPy on the same data (values, dtypes,
warnings, errors), and hx.lib.stride_tricks against NumPy's."""

import warnings

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, strategies as st

import hrxarray as hx

FLOATS = [np.dtype(np.float32), np.dtype(np.float64)]


@st.composite
def nan_arrays(draw, dtypes=FLOATS, min_side=1):
    """A float array with some NaNs (possibly whole all-NaN slices) and an axis (None, an int or a tuple)."""
    dt = draw(st.sampled_from(dtypes))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=min_side, max_side=6))
    values = draw(hnp.arrays(dt, shape, elements=st.one_of(
        st.just(np.nan), st.floats(-100, 100, width=dt.itemsize * 8, allow_subnormal=False))))
    axis = draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1),
                          st.lists(st.integers(0, len(shape) - 1), min_size=1, max_size=len(shape),
                                   unique=True).map(tuple)))
    return values, axis


def both(np_fn, hx_fn, a, *args, **kw):
    """(NumPy's result, hrxarray's as NumPy, the warnings each gave): the same call on the same data."""
    with warnings.catch_warnings(record=True) as wn:
        warnings.simplefilter("always")
        expected = np_fn(a, *args, **kw)
    with warnings.catch_warnings(record=True) as wh:
        warnings.simplefilter("always")
        got = hx_fn(hx.asarray(a), *args, **kw)
    got = hx.to_numpy(got)
    # NumPy's floating-point error warnings (overflow in a product ...) are not part of the comparison:
    # hrxarray's kernels do not raise FP flags; the nan functions' own warnings are compared.
    fp = ("overflow encountered", "invalid value encountered", "divide by zero encountered")
    msgs = [sorted({str(w.message) for w in ws if not str(w.message).startswith(fp)}) for ws in (wn, wh)]
    return np.asarray(expected), got, msgs[0], msgs[1]


def assert_same(expected, got, exact=True):
    assert got.dtype == expected.dtype
    assert got.shape == expected.shape
    if exact:
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=2e-6 if expected.dtype == np.float32 else 1e-12,
                                   atol=1e-5 if expected.dtype == np.float32 else 1e-10)


@given(data=nan_arrays(), keepdims=st.booleans())
@pytest.mark.parametrize("name", ["nansum", "nanprod", "nanmean", "nanmin", "nanmax"])
def test_nan_reductions_match_numpy(name, data, keepdims):
    a, axis = data
    exact = name in ("nanmin", "nanmax")
    expected, got, wn, wh = both(getattr(np, name), getattr(hx, name), a, axis=axis, keepdims=keepdims)
    assert_same(expected, got, exact)
    assert wh == wn


@given(data=nan_arrays(), ddof=st.integers(0, 2))
@pytest.mark.parametrize("name", ["nanvar", "nanstd"])
def test_nanvar_nanstd_match_numpy(name, data, ddof):
    a, axis = data
    expected, got, wn, wh = both(getattr(np, name), getattr(hx, name), a, axis=axis, ddof=ddof)
    assert_same(expected, got, exact=False)
    assert wh == wn


@given(data=nan_arrays(), keepdims=st.booleans())
@pytest.mark.parametrize("name", ["nanmedian", "median"])
def test_medians_match_numpy(name, data, keepdims):
    a, axis = data
    expected, got, wn, wh = both(getattr(np, name), getattr(hx, name), a, axis=axis, keepdims=keepdims)
    assert_same(expected, got)
    assert wh == wn


@given(data=nan_arrays(), q=st.one_of(st.floats(0, 1), st.lists(st.floats(0, 1), min_size=1, max_size=3)),
       method=st.sampled_from(["linear", "lower", "higher", "nearest", "midpoint"]))
def test_nanquantile_matches_numpy(data, q, method):
    a, axis = data
    expected, got, wn, wh = both(np.nanquantile, hx.nanquantile, a, q, axis=axis, method=method)
    if wn:
        # NumPy's dtype then depends on which slice apply_along_axis meets first (an all-NaN one
        # gives a's dtype); hrxarray's is the one of the other slices throughout.
        expected = expected.astype(got.dtype)
    assert_same(expected, got, exact=False)
    assert wh == wn


def test_nanpercentile_and_quantile_keepdims():
    a = np.array([[1.0, np.nan, 3.0, 7.0], [np.nan, 2.0, 5.0, 11.0]])
    expected, got, _, _ = both(np.nanpercentile, hx.nanpercentile, a, [10, 50, 90], axis=1, keepdims=True)
    assert_same(expected, got, exact=False)
    with pytest.raises(ValueError, match=r"nanpercentile: q must be in the range \[0, 100\]"):
        hx.nanpercentile(hx.asarray(a), 101)


@given(data=nan_arrays())
@pytest.mark.parametrize("name", ["nanargmin", "nanargmax"])
def test_nanarg_matches_numpy(name, data):
    a, axis = data
    if isinstance(axis, tuple):
        axis = axis[0]
    try:
        expected = getattr(np, name)(a, axis=axis)
    except ValueError:
        with pytest.raises(ValueError, match="All-NaN slice encountered"):
            getattr(hx, name)(hx.asarray(a), axis=axis)
        return
    got = hx.to_numpy(getattr(hx, name)(hx.asarray(a), axis=axis))
    np.testing.assert_array_equal(got, expected)


@given(data=nan_arrays())
@pytest.mark.parametrize("name", ["nancumsum", "nancumprod"])
def test_nan_scans_match_numpy(name, data):
    a, axis = data
    if isinstance(axis, tuple):
        axis = axis[0]
    expected, got, _, _ = both(getattr(np, name), getattr(hx, name), a, axis=axis)
    assert_same(expected, got, exact=False)


@pytest.mark.parametrize("name", ["nansum", "nanmean", "nanmin", "nanmax", "nanvar", "nanstd", "nanmedian",
                                  "median", "nanargmax", "nancumsum"])
def test_integers_take_the_plain_function(name):
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    expected, got, _, _ = both(getattr(np, name), getattr(hx, name), a, axis=1)
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected)


@pytest.mark.parametrize("name", ["nanmean", "nanmax", "nanmedian", "nanvar", "median", "nansum", "nanquantile"])
def test_numpy_dispatches_to_device(name):
    a = np.array([[1.0, np.nan, 2.0], [3.0, 4.0, np.nan]], np.float32)
    args = (0.25,) if name == "nanquantile" else ()
    got = getattr(np, name)(hx.asarray(a), *args, axis=1)
    assert isinstance(got, hx.DeviceArray)
    np.testing.assert_allclose(hx.to_numpy(got), getattr(np, name)(a, *args, axis=1), rtol=1e-6)


def test_all_nan_warnings_are_numpys():
    a = hx.asarray(np.array([[np.nan, np.nan], [1.0, 2.0]]))
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        r = hx.nanmean(a, axis=1)
    assert np.isnan(hx.to_numpy(r)[0]) and hx.to_numpy(r)[1] == 1.5
    with pytest.warns(RuntimeWarning, match="All-NaN slice encountered"):
        hx.nanmax(a, axis=1)
    with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
        hx.nanvar(a, axis=1)
    with pytest.warns(RuntimeWarning, match="All-NaN slice encountered"):
        hx.nanmedian(a, axis=1)
    with pytest.raises(ValueError, match="All-NaN slice encountered"):
        hx.nanargmin(a, axis=1)


def test_bad_input_is_refused_and_changes_nothing():
    host = np.array([1.0, np.nan, 3.0])
    a = hx.asarray(host)
    with pytest.raises(TypeError, match="nanmean: if a is inexact, then dtype must be inexact"):
        hx.nanmean(a, dtype=np.int32)
    with pytest.raises(TypeError, match="nanmean: hrxarray does not take"):
        hx.nanmean(a, where=True)
    with pytest.raises(ValueError, match="method must be one of"):
        hx.nanquantile(a, 0.5, method="bogus")
    with pytest.raises(ValueError, match="q must be in the range"):
        hx.nanquantile(a, 1.5)
    with pytest.raises(TypeError, match="median: a must be real"):
        hx.median(hx.asarray(np.ones(3, np.complex64)))
    with pytest.raises(ValueError, match="empty reduction"):
        hx.nanmedian(hx.asarray(np.ones((0, 2))), axis=0)
    np.testing.assert_array_equal(hx.to_numpy(a), host)


def test_out_argument():
    a = np.array([[1.0, np.nan], [3.0, 4.0]])
    out = hx.zeros(2, dtype=hx.float64)
    r = hx.nanmean(hx.asarray(a), axis=1, out=out)
    assert r is out
    np.testing.assert_array_equal(hx.to_numpy(out), np.nanmean(a, axis=1))


# --- lib.stride_tricks ----------------------------------------------------------------------------


@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6), data=st.data())
def test_sliding_window_view_matches_numpy(shape, data):
    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    axis = data.draw(st.integers(0, len(shape) - 1))
    w = data.draw(st.integers(0, shape[axis]))
    expected = np.lib.stride_tricks.sliding_window_view(a, w, axis=axis)
    got = hx.lib.stride_tricks.sliding_window_view(hx.asarray(a), w, axis=axis)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(hx.to_numpy(got), expected)
    # NumPy dispatches to it, and a window of a strided view reads the view's elements.
    view = hx.asarray(a)[..., ::-1]
    got = np.lib.stride_tricks.sliding_window_view(view, w, axis=axis)
    np.testing.assert_array_equal(hx.to_numpy(got), np.lib.stride_tricks.sliding_window_view(a[..., ::-1], w, axis=axis))


def test_sliding_window_view_all_axes_and_errors():
    a = np.arange(20.0).reshape(4, 5)
    got = hx.lib.stride_tricks.sliding_window_view(hx.asarray(a), (2, 3))
    np.testing.assert_array_equal(hx.to_numpy(got), np.lib.stride_tricks.sliding_window_view(a, (2, 3)))
    x = hx.asarray(a)
    with pytest.raises(ValueError, match="cannot be larger than the input array shape"):
        hx.lib.stride_tricks.sliding_window_view(x, 6, axis=1)
    with pytest.raises(ValueError, match="must give every dimension"):
        hx.lib.stride_tricks.sliding_window_view(x, 2)
    with pytest.raises(ValueError, match="negative"):
        hx.lib.stride_tricks.sliding_window_view(x, -1, axis=0)
    with pytest.raises(TypeError, match="window_shape must be an integer"):
        hx.lib.stride_tricks.sliding_window_view(x, 1.5, axis=0)
    np.testing.assert_array_equal(hx.to_numpy(x), a)


def test_as_strided_is_bounded_by_the_allocation():
    a = np.arange(10.0, dtype=np.float32)
    x = hx.asarray(a)
    got = hx.lib.stride_tricks.as_strided(x, shape=(4, 3), strides=(8, 4))
    np.testing.assert_array_equal(hx.to_numpy(got), np.lib.stride_tricks.as_strided(a, shape=(4, 3), strides=(8, 4)))
    with pytest.raises(ValueError, match="reaches outside its buffer"):
        hx.lib.stride_tricks.as_strided(x, shape=(4, 4), strides=(16, 4))
    with pytest.raises(ValueError, match="differ in length"):
        hx.lib.stride_tricks.as_strided(x, shape=(4,), strides=(4, 4))
