"""hx.unique(x, axis=...) against np.unique(axis=): distinct sub-arrays along an axis, sorted lexicographically."""

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import hrxarray as hx

DTYPES = [np.dtype(t) for t in (bool, np.int8, np.uint16, np.int64, np.float16, np.float32, np.float64,
                                np.complex64, np.complex128)]
FLOATS = np.array([0.0, -0.0, np.nan, 1.5, -2.0, np.inf])


def _pool(rng, dtype, shape):
    if dtype.kind == "c":
        out = np.empty(shape, dtype)
        out.real = FLOATS[rng.integers(0, 6, shape)]
        out.imag = FLOATS[rng.integers(0, 6, shape)]
        return out
    if dtype.kind == "f":
        return FLOATS[rng.integers(0, 6, shape)].astype(dtype)
    return rng.integers(0, 2 if dtype.kind == "b" else 3, shape).astype(dtype)


def _data(rng, dtype, shape, axis):
    """Sub-arrays along `axis` drawn from a few distinct ones, so that duplicates occur."""
    sub = list(shape)
    del sub[axis]
    pool = _pool(rng, dtype, (3, *sub))
    picked = pool[rng.integers(0, 3, shape[axis])]
    return np.moveaxis(picked, 0, axis)


def _bits(a):
    a = np.ascontiguousarray(a)
    return a.view(np.uint8).reshape(*a.shape, a.dtype.itemsize) if a.size else a


@given(dtype=st.sampled_from(DTYPES), shape=hnp.array_shapes(min_dims=2, max_dims=4, min_side=0, max_side=5),
       seed=st.integers(0, 2**32 - 1), data=st.data())
def test_unique_axis_matches_numpy(dtype, shape, seed, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    a = _data(np.random.default_rng(seed), dtype, shape, axis)
    x = hx.asarray(a)
    # return_index makes NumPy's sort stable, so its values are the first occurrences, bit for bit.
    # NumPy 2.4 orders float16 fields with NaN first (unlike its other floats and its own sort), so
    # float16's reference is the same data in float32, which orders and compares the same values.
    ref = a.astype(np.float32) if dtype == np.float16 else a
    want = list(np.unique(ref, return_index=True, return_inverse=True, return_counts=True, axis=axis))
    want[0] = want[0].astype(dtype)
    got = hx.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=axis)
    assert got[0].dtype == a.dtype and got[0].shape == want[0].shape
    np.testing.assert_array_equal(_bits(hx.to_numpy(got[0])), _bits(want[0]))
    for g, w in zip(got[1:], want[1:]):
        assert g.dtype == np.int64 and g.shape == w.shape
        np.testing.assert_array_equal(hx.to_numpy(g), w)
    values = hx.unique(x, axis=axis)
    assert isinstance(values, hx.DeviceArray)
    np.testing.assert_array_equal(hx.to_numpy(values), np.unique(ref, axis=axis).astype(dtype))


def test_strided_input_and_a_one_d_array():
    a = np.array([[3, 1, 3, 1], [0, 2, 0, 2], [3, 1, 3, 1]], dtype=np.int32)
    x = hx.asarray(a)
    np.testing.assert_array_equal(hx.to_numpy(hx.unique(x.T, axis=0)), np.unique(a.T, axis=0))
    np.testing.assert_array_equal(hx.to_numpy(hx.unique(x[:, ::2], axis=1)), np.unique(a[:, ::2], axis=1))
    f = np.array([np.nan, 1.0, np.nan])
    for equal_nan in (True, False):  # a 1-d array: the flattened path, equal_nan applies
        want = np.unique(f, axis=0, return_counts=True, equal_nan=equal_nan)
        got = hx.unique(hx.asarray(f), axis=0, return_counts=True, equal_nan=equal_nan)
        np.testing.assert_array_equal(hx.to_numpy(got[0]), want[0])
        np.testing.assert_array_equal(hx.to_numpy(got[1]), want[1])


def test_numpy_dispatch_and_bad_axis():
    a = np.array([[1, 2], [1, 2], [0, 1]])
    x = hx.asarray(a)
    v, inv = np.unique(x, axis=0, return_inverse=True)
    assert isinstance(v, hx.DeviceArray)
    np.testing.assert_array_equal(hx.to_numpy(v), [[0, 1], [1, 2]])
    np.testing.assert_array_equal(hx.to_numpy(inv), [1, 1, 0])
    with pytest.raises(np.exceptions.AxisError, match="unique"):
        hx.unique(x, axis=2)
    with pytest.raises(np.exceptions.AxisError, match="unique"):
        hx.unique(hx.asarray(np.float32(1)), axis=0)
    with pytest.raises(TypeError, match="unique"):
        hx.unique(x, axis=0, return_counts="yes")
