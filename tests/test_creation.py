"""eye, tril, triu and meshgrid against NumPy: every dtype, diagonal offsets, batches, device=/placement=."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import hrxarray as hx

DTYPES = [np.dtype(t) for t in (bool, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                                np.uint64, np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.complex64,
                                np.complex128)]


def _check(got, want):
    assert isinstance(got, hx.DeviceArray)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(hx.to_numpy(got), want)


@given(n=st.integers(0, 7), m=st.none() | st.integers(0, 7), k=st.integers(-9, 9), dtype=st.sampled_from(DTYPES))
def test_eye_matches_numpy(n, m, k, dtype):
    _check(hx.eye(n, m, k=k, dtype=dtype), np.eye(n, m, k=k, dtype=dtype))


def test_eye_defaults_and_placement(rt):
    _check(hx.eye(3), np.eye(3))
    place = hx.GpuLocal()
    x = hx.eye(2, 5, k=2, dtype=np.int32, device=place)
    assert x.placement == place
    _check(x, np.eye(2, 5, k=2, dtype=np.int32))
    shared = hx.Shared(rt.npu())
    assert hx.eye(2, placement=shared, device=shared).placement == shared
    with pytest.raises(TypeError, match="eye: device=.* and placement=.* differ"):
        hx.eye(2, device=hx.GpuLocal(), placement=hx.HostVisible())
    with pytest.raises(ValueError, match="eye: n_rows must be non-negative"):
        hx.eye(-1)
    with pytest.raises(TypeError, match="eye: n_cols must be an integer"):
        hx.eye(2, 2.5)
    with pytest.raises(TypeError, match="eye: k must be an integer"):
        hx.eye(2, k=1.0)


@given(dtype=st.sampled_from(DTYPES), shape=hnp.array_shapes(min_dims=2, max_dims=4, min_side=0, max_side=6),
       k=st.integers(-8, 8))
def test_tril_triu_match_numpy(dtype, shape, k):
    a = (np.arange(int(np.prod(shape))) % 50 + 1).astype(dtype).reshape(shape)
    x = hx.asarray(a)
    _check(hx.tril(x, k=k), np.tril(a, k))
    _check(hx.triu(x, k=k), np.triu(a, k))
    # A strided (transposed) input takes the same path.
    _check(hx.tril(x.mT, k=k), np.tril(np.swapaxes(a, -1, -2), k))


def test_tril_triu_of_large_strided_matrices():
    # Large enough that the rows are split over the kernel pool; transposed and flipped inputs.
    a = np.arange(600 * 700, dtype=np.float64).reshape(600, 700)
    x = hx.asarray(a)
    for k in (-300, 0, 3, 650):
        _check(hx.tril(x, k=k), np.tril(a, k))
        _check(hx.triu(x.mT, k=k), np.triu(a.T, k))
        _check(hx.tril(x[::-1, ::-2], k=k), np.tril(a[::-1, ::-2], k))


def test_tril_triu_extremes_and_dispatch():
    a = np.arange(1.0, 13.0).reshape(3, 4)
    x = hx.asarray(a)
    # NumPy overflows on int64's extremes; any k beyond the matrix acts alike.
    for k, same in ((-(2**63), -100), (-100, -100), (100, 100), (2**63 - 1, 100), (2**70, 100)):
        _check(hx.tril(x, k=k), np.tril(a, same))
        _check(hx.triu(x, k=k), np.triu(a, same))
    _check(np.tril(x, 1), np.tril(a, 1))
    _check(np.triu(x), np.triu(a))
    with pytest.raises(ValueError, match="tril: x must have at least 2 dimensions"):
        hx.tril(hx.asarray(np.arange(3.0)))
    with pytest.raises(TypeError, match="triu: k must be an integer"):
        hx.triu(x, k=0.5)


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@given(sizes=st.lists(st.integers(0, 4), min_size=0, max_size=4), dtype=st.sampled_from(DTYPES))
def test_meshgrid_matches_numpy(indexing, sizes, dtype):
    vecs = [(np.arange(n) + i).astype(dtype) for i, n in enumerate(sizes)]
    got = hx.meshgrid(*[hx.asarray(v) for v in vecs], indexing=indexing)
    want = np.meshgrid(*vecs, indexing=indexing)
    assert isinstance(got, tuple) and len(got) == len(want)
    for g, w in zip(got, want):
        _check(g, w)


def test_meshgrid_sparse_copy_and_dispatch():
    x, y = np.arange(3.0), np.arange(4, dtype=np.int16)
    hxv, hyv = hx.asarray(x), hx.asarray(y)
    for kw in ({"sparse": True}, {"copy": False}, {"sparse": True, "indexing": "ij"}):
        for g, w in zip(hx.meshgrid(hxv, hyv, **kw), np.meshgrid(x, y, **kw), strict=True):
            _check(g, w)
    views = hx.meshgrid(hxv, hyv, copy=False)
    assert views[0]._base_id == hxv._base_id
    copies = hx.meshgrid(hxv, hyv)
    assert copies[0]._base_id != hxv._base_id
    for g, w in zip(np.meshgrid(hxv, hyv), np.meshgrid(x, y), strict=True):
        _check(g, w)
    with pytest.raises(ValueError, match="meshgrid: indexing must be 'xy' or 'ij'"):
        hx.meshgrid(hxv, indexing="yx")


def test_creation_from_pending_work():
    a = np.arange(16.0).reshape(4, 4)
    y = hx.add(hx.asarray(a), 1.0)  # not waited for
    _check(hx.triu(hx.tril(y, k=1), k=-1), np.triu(np.tril(a + 1, 1), -1))
    g = hx.meshgrid(hx.multiply(hx.arange(3), 2), hx.arange(2))
    _check(g[0], np.meshgrid(np.arange(3) * 2, np.arange(2))[0])
    e = hx.eye(4)
    _check(hx.matmul(e, y), a + 1)
