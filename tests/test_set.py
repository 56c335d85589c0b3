"""unique_all / unique_counts / unique_inverse / unique_values and NumPy's unique, against NumPy."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import hrxarray as hx

DTYPES = [np.dtype(t) for t in (bool, np.int8, np.int16, np.uint32, np.int64, np.float16, ml_dtypes.bfloat16,
                                np.float32, np.float64)]


def _data(rng, dtype, shape):
    if dtype.kind == "f" or dtype == ml_dtypes.bfloat16:
        return np.array([0.0, -0.0, np.nan, 1.5, -2.0, np.inf])[rng.integers(0, 6, shape)].astype(dtype)
    return rng.integers(0, 2 if dtype.kind == "b" else 5, shape).astype(dtype)


@given(dtype=st.sampled_from(DTYPES), shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=6),
       seed=st.integers(0, 2**32 - 1))
def test_unique_functions_match_numpy(dtype, shape, seed):
    a = _data(np.random.default_rng(seed), dtype, shape)
    ref = a.astype(np.float32) if dtype == ml_dtypes.bfloat16 else a
    x = hx.asarray(a)
    got = hx.unique_all(x)
    # NumPy 2.3+'s unique_* do not sort (a hash); np.unique(equal_nan=False) is the sorted reference.
    wv, wi, winv, wc = np.unique(ref, return_index=True, return_inverse=True, return_counts=True, equal_nan=False)
    assert got.values.dtype == a.dtype and got.indices.dtype == np.int64 and got.counts.dtype == np.int64
    np.testing.assert_array_equal(hx.to_numpy(got.values).astype(ref.dtype), wv)
    np.testing.assert_array_equal(hx.to_numpy(got.counts), wc)
    assert got.inverse_indices.shape == a.shape
    np.testing.assert_array_equal(hx.to_numpy(got.inverse_indices), winv.reshape(a.shape))
    # First occurrences (NumPy's own indices are any occurrence for its unstable sort).
    flat = ref.reshape(-1)
    idx = hx.to_numpy(got.indices)
    v = hx.to_numpy(got.values).astype(ref.dtype)
    np.testing.assert_array_equal(flat[idx], v)
    for i, value in zip(idx, v):
        if value == value:
            assert i == np.flatnonzero(flat == value)[0]
    np.testing.assert_array_equal(hx.to_numpy(hx.unique_values(x)).astype(ref.dtype), wv)
    c = hx.unique_counts(x)
    np.testing.assert_array_equal(hx.to_numpy(c.counts), wc)
    inv = hx.unique_inverse(x)
    np.testing.assert_array_equal(hx.to_numpy(inv.inverse_indices), winv.reshape(a.shape))
    # NumPy's unique collapses NaNs (equal_nan=True).
    vals, index, inverse, counts = hx.unique(x, return_index=True, return_inverse=True, return_counts=True)
    wv, wi, winv, wc = np.unique(ref, return_index=True, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(hx.to_numpy(vals).astype(ref.dtype), wv)
    np.testing.assert_array_equal(hx.to_numpy(counts), wc)
    np.testing.assert_array_equal(hx.to_numpy(inverse), winv.reshape(a.shape))


def test_unique_numpy_spelling_and_dispatch():
    a = np.array([3, 1, 3, 2, 1], dtype=np.int32)
    x = hx.asarray(a)
    v = np.unique(x)
    assert isinstance(v, hx.DeviceArray)
    np.testing.assert_array_equal(hx.to_numpy(v), [1, 2, 3])
    v, c = hx.unique(x, return_counts=True)
    np.testing.assert_array_equal(hx.to_numpy(c), [2, 1, 2])
    v, i = hx.unique(x, return_index=True)
    np.testing.assert_array_equal(hx.to_numpy(i), [1, 3, 0])
    np.testing.assert_array_equal(hx.to_numpy(hx.unique(x, axis=0)), [1, 2, 3])  # 1-d: as axis=None
    with pytest.raises(TypeError, match="unique: return_counts"):
        hx.unique(x, return_counts="yes")
    assert isinstance(np.unique_values(x), hx.DeviceArray)


def test_unique_of_a_pending_large_array():
    a = np.random.default_rng(2).integers(0, 1000, 1 << 18)
    y = hx.add(hx.asarray(a), 1)
    r = hx.unique_counts(y)
    wv, wc = np.unique(a + 1, return_counts=True)
    np.testing.assert_array_equal(hx.to_numpy(r.values), wv)
    np.testing.assert_array_equal(hx.to_numpy(r.counts), wc)
