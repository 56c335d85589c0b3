"""searchsorted, nonzero, where(condition), count_nonzero against NumPy."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import hrxarray as hx

NUMERIC = [np.dtype(t) for t in (bool, np.int8, np.int32, np.int64, np.uint8, np.uint64, np.float16,
                                 ml_dtypes.bfloat16, np.float32, np.float64)]
COMPLEX = [np.dtype(np.complex64), np.dtype(np.complex128)]


@given(dtype=st.sampled_from([d for d in NUMERIC if d != np.dtype(bool)]), n=st.integers(0, 40),
       m=st.integers(0, 10), seed=st.integers(0, 2**32 - 1), right=st.booleans())
def test_searchsorted_matches_numpy(dtype, n, m, seed, right):
    rng = np.random.default_rng(seed)
    pool = np.array([0.0, -0.0, 1.0, 2.0, 3.0, np.inf, -np.inf, np.nan, 7.0])
    if dtype.kind in "iu":
        pool = np.array([0, 1, 2, 3, 7, 100])
    a = np.sort(pool[rng.integers(0, len(pool), n)].astype(dtype).astype(np.float64)).astype(dtype)
    v = pool[rng.integers(0, len(pool), m)].astype(dtype)
    side = "right" if right else "left"
    got = hx.to_numpy(hx.searchsorted(hx.asarray(a), hx.asarray(v), side=side))
    ref_a, ref_v = (a.astype(np.float32), v.astype(np.float32)) if dtype == ml_dtypes.bfloat16 else (a, v)
    np.testing.assert_array_equal(got, np.searchsorted(ref_a, ref_v, side=side))
    assert got.dtype == np.int64


def test_searchsorted_with_sorter_promotion_shapes_and_scalars():
    a = np.array([5, 1, 4, 2], dtype=np.int16)
    sorter = np.argsort(a)
    v = np.array([[0.5, 4.0], [9.0, 2.0]], dtype=np.float32)
    got = hx.searchsorted(hx.asarray(a), hx.asarray(v), sorter=hx.asarray(sorter))
    np.testing.assert_array_equal(hx.to_numpy(got), np.searchsorted(a, v, sorter=sorter))
    assert got.shape == (2, 2)
    f = np.array([0.1, 0.2, 0.3], np.float32)
    np.testing.assert_array_equal(hx.to_numpy(hx.searchsorted(hx.asarray(f), 0.2, "right")),
                                  np.searchsorted(f, np.float32(0.2), "right"))
    assert isinstance(np.searchsorted(hx.asarray(f), hx.asarray(f)), hx.DeviceArray)


def test_searchsorted_errors_name_the_function():
    x = hx.asarray(np.arange(4.0))
    with pytest.raises(ValueError, match="searchsorted: side"):
        hx.searchsorted(x, x, side="middle")
    with pytest.raises(ValueError, match="searchsorted: x1 must be 1-dimensional"):
        hx.searchsorted(hx.asarray(np.zeros((2, 2))), x)
    with pytest.raises(TypeError, match="searchsorted: sorter must be an integer"):
        hx.searchsorted(x, x, sorter=x)
    with pytest.raises(ValueError, match="searchsorted: sorter must have"):
        hx.searchsorted(x, x, sorter=hx.asarray(np.arange(3)))
    bad = hx.searchsorted(x, x, sorter=hx.asarray(np.array([0, 1, 2, 9])))
    with pytest.raises(hx.ExecutionError, match="out of bounds"):
        bad.block_until_ready()


@given(dtype=st.sampled_from(NUMERIC + COMPLEX),
       shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=6), seed=st.integers(0, 2**32 - 1))
def test_nonzero_where_and_count_nonzero_match_numpy(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    parts = np.array([0.0, -0.0, np.nan, 1.0, 0.0])
    if dtype.kind == "c":
        # Either part nonzero makes the element nonzero; -0.0 in either part is zero.
        a = np.empty(shape, np.complex128)
        a.real = parts[rng.integers(0, 5, shape)]
        a.imag = parts[rng.integers(0, 5, shape)]
    elif dtype.kind == "f" or dtype == ml_dtypes.bfloat16:
        a = parts[rng.integers(0, 5, shape)]
    else:
        a = rng.integers(0, 2, shape)
    a = a.astype(dtype)
    ref = a.astype(np.float32) if dtype == ml_dtypes.bfloat16 else a
    x = hx.asarray(a)
    want = np.nonzero(ref)
    for got in (hx.nonzero(x), hx.where(x), x.nonzero(), np.nonzero(x)):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == np.int64
            np.testing.assert_array_equal(hx.to_numpy(g), w)
    c = hx.count_nonzero(x)
    assert c.dtype == np.int64 and c.shape == ()
    assert int(c) == np.count_nonzero(ref)
    axis = int(rng.integers(0, len(shape)))
    np.testing.assert_array_equal(hx.to_numpy(hx.count_nonzero(x, axis=axis, keepdims=True)),
                                  np.count_nonzero(ref, axis=axis, keepdims=True))


def test_nonzero_of_0d_and_bad_where():
    with pytest.raises(ValueError, match="nonzero: calling nonzero on 0-d"):
        hx.nonzero(hx.asarray(np.float32(1)))
    with pytest.raises(TypeError, match="where"):
        hx.where(hx.asarray(np.ones(2)), 1.0)


def test_nonzero_waits_for_a_pending_producer():
    a = np.random.default_rng(0).integers(-2, 3, 1 << 16)
    x = hx.asarray(a)
    y = hx.multiply(x, x)  # still pending when nonzero is submitted
    (idx,) = hx.nonzero(y)
    np.testing.assert_array_equal(hx.to_numpy(idx), np.nonzero(a * a)[0])
