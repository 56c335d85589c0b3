"""hx.pad's statistic modes (maximum, minimum, mean, median with stat_length) and linear_ramp (end_values)
against np.pad: shapes, widths and lengths from Hypothesis, every axis padded over the earlier ones' border."""

import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import hrxarray as hx

DTYPES = [np.dtype(t) for t in (np.int8, np.int32, np.int64, np.uint8, np.uint16, np.float16, np.float32,
                                np.float64)]
STATS = ["maximum", "minimum", "mean", "median"]


def _values(rng, dtype, shape, nan):
    v = rng.integers(0, 60, shape).astype(dtype)
    if nan and dtype.kind == "f":
        v[rng.random(shape) < 0.1] = np.nan
    return v


def _pairs(data, ndim, lo, hi):
    """NumPy's spellings of per-axis pairs: a scalar, one pair, or one pair per axis."""
    form = data.draw(st.sampled_from(["scalar", "pair", "per_axis"]))
    if form == "scalar":
        return data.draw(st.integers(lo, hi))
    if form == "pair":
        return tuple(data.draw(st.lists(st.integers(lo, hi), min_size=2, max_size=2)))
    return tuple(tuple(data.draw(st.lists(st.integers(lo, hi), min_size=2, max_size=2))) for _ in range(ndim))


def _np_pad(a, widths, mode, **kw):
    with warnings.catch_warnings():  # a mean over stat_length 0 is NaN with a warning in NumPy too
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.pad(a, widths, mode=mode, **kw)


def _check(got, want, exact):
    assert isinstance(got, hx.DeviceArray)
    g = hx.to_numpy(got)
    assert g.shape == want.shape and g.dtype == want.dtype
    if exact:
        np.testing.assert_array_equal(g, want)
    else:  # a float mean: hx.mean's summation order is not NumPy's pairwise one
        rtol = 2e-3 if want.dtype == np.float16 else 1e-6
        np.testing.assert_allclose(g, want, rtol=rtol, equal_nan=True)


@pytest.mark.parametrize("mode", STATS)
@given(dtype=st.sampled_from(DTYPES), shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5),
       seed=st.integers(0, 2**32 - 1), nan=st.booleans(), data=st.data())
def test_stat_modes_match_numpy(mode, dtype, shape, seed, nan, data):
    a = _values(np.random.default_rng(seed), dtype, shape, nan)
    widths = _pairs(data, len(shape), 0, 4)
    kw = {}
    if data.draw(st.booleans()):
        kw["stat_length"] = _pairs(data, len(shape), 1 if mode in ("maximum", "minimum") or dtype.kind != "f" else 0,
                                   6)
    want = _np_pad(a, widths, mode, **kw)
    _check(hx.pad(hx.asarray(a), widths, mode=mode, **kw), want, exact=mode != "mean" or dtype.kind != "f")


@given(dtype=st.sampled_from(DTYPES), shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5),
       seed=st.integers(0, 2**32 - 1), data=st.data())
def test_linear_ramp_matches_numpy(dtype, shape, seed, data):
    a = _values(np.random.default_rng(seed), dtype, shape, False)
    widths = _pairs(data, len(shape), 0, 6)
    kw = {}
    if data.draw(st.booleans()):
        # Unsigned results of negative ramps wrap in NumPy (a float-to-int conversion C leaves undefined).
        lo = 0 if dtype.kind == "u" else -50
        if data.draw(st.booleans()):
            kw["end_values"] = _pairs(data, len(shape), lo, 100)
        else:
            kw["end_values"] = data.draw(st.floats(lo, 100, allow_nan=False, width=16))
    _check(hx.pad(hx.asarray(a), widths, mode="linear_ramp", **kw), _np_pad(a, widths, "linear_ramp", **kw),
           exact=True)


def test_ramp_dtype_follows_numpys_pairs_and_denormal_steps():
    a = np.array([[1.5, 2.25], [3.0, -7.0]], np.float16)
    for ev in (0, 1.1, (1.1, 3.3), ((1.1, 3.3), (0.7, 9.9))):  # NumPy scalars promote, Python scalars do not
        _check(hx.pad(hx.asarray(a), 3, mode="linear_ramp", end_values=ev),
               np.pad(a, 3, mode="linear_ramp", end_values=ev), exact=True)
    tiny = np.array([5e-324, 1.0])  # a zero step somewhere: NumPy divides before multiplying everywhere
    _check(hx.pad(hx.asarray(tiny), (4, 3), mode="linear_ramp", end_values=(0.0, 1.0)),
           np.pad(tiny, (4, 3), mode="linear_ramp", end_values=(0.0, 1.0)), exact=True)


def test_stat_modes_details():
    a = np.array([[1, 2, 4], [7, 8, 12]], np.int32)
    x = hx.asarray(a)
    # Integer means round half to even (2.5 -> 2, 1.5 -> 2).
    for w, sl in [((1, 1), None), (2, 2), (((0, 2), (3, 0)), ((1, 2), (2, 1)))]:
        for mode in STATS:
            _check(hx.pad(x, w, mode=mode, stat_length=sl), np.pad(a, w, mode=mode, stat_length=sl), exact=True)
    _check(np.pad(x, 2, mode="median", stat_length=2), np.pad(a, 2, mode="median", stat_length=2), exact=True)
    _check(np.pad(x, 1, mode="linear_ramp", end_values=9), np.pad(a, 1, mode="linear_ramp", end_values=9), True)
    z = np.array([1 + 2j, 3 - 1j], np.complex128)
    _check(hx.pad(hx.asarray(z), 2, mode="mean"), np.pad(z, 2, mode="mean"), exact=False)
    _check(hx.pad(x, 0, mode="maximum"), a, exact=True)


def test_stat_and_ramp_errors_name_pad_and_change_nothing():
    x = hx.asarray(np.arange(6.0).reshape(2, 3))
    with pytest.raises(ValueError, match="pad: stat_length of 0"):
        hx.pad(x, 1, mode="maximum", stat_length=0)
    with pytest.raises(ValueError, match="pad: stat_length may not contain negative"):
        hx.pad(x, 1, mode="mean", stat_length=-1)
    with pytest.raises(TypeError, match="pad: stat_length must be integers"):
        hx.pad(x, 1, mode="mean", stat_length="a")
    with pytest.raises(ValueError, match="pad: stat_length"):
        hx.pad(x, 1, mode="mean", stat_length=(1, 2, 3))
    with pytest.raises(TypeError, match="pad: mode 'median' is not defined for complex"):
        hx.pad(hx.asarray(np.ones(2, np.complex64)), 1, mode="median")
    with pytest.raises(ValueError, match="pad: can't extend empty axis 0"):
        hx.pad(hx.zeros((0, 2)), 1, mode="mean")
    np.testing.assert_array_equal(hx.to_numpy(x), np.arange(6.0).reshape(2, 3))
