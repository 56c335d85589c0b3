"""NumPy functions beyond the array API (hx.vstack ... hx.ediff1d) on DeviceArrays, called through NumPy's
dispatch and through hx, against NumPy on the same data."""

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, strategies as st

import hrxarray as hx


def to_np(r):
    if isinstance(r, (list, tuple)):
        return [to_np(v) for v in r]
    assert isinstance(r, hx.DeviceArray), type(r)
    return hx.to_numpy(r)


def same(expected, got):
    if isinstance(expected, (list, tuple)):
        assert len(expected) == len(got)
        for e, g in zip(expected, got):
            same(e, g)
        return
    expected = np.asarray(expected)
    assert got.shape == expected.shape and got.dtype == expected.dtype, (got.shape, got.dtype, expected.dtype)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


A = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
M = np.arange(12, dtype=np.int32).reshape(3, 4)
V = np.arange(5, dtype=np.float32)
CASES = {
    "atleast_1d": (np.atleast_1d, (np.float64(3.0),)),
    "atleast_2d": (np.atleast_2d, (V,)),
    "atleast_3d_1d": (np.atleast_3d, (V,)),
    "atleast_3d_2d": (np.atleast_3d, (M,)),
    "atleast_many": (lambda *a: np.atleast_2d(*a), (V, M)),
    "vstack": (lambda a, b: np.vstack([a, b]), (V, V)),
    "hstack": (lambda a, b: np.hstack((a, b)), (M, M)),
    "hstack_1d": (lambda a, b: np.hstack((a, b)), (V, V)),
    "dstack": (lambda a, b: np.dstack([a, b]), (M, M)),
    "column_stack": (lambda a, b: np.column_stack([a, b]), (V, V)),
    "split": (lambda a: np.split(a, 2, axis=0), (A,)),
    "split_idx": (lambda a: np.split(a, [1, 3], axis=2), (A,)),
    "array_split": (lambda a: np.array_split(a, 3), (V,)),
    "hsplit": (lambda a: np.hsplit(a, 2), (M,)),
    "vsplit": (lambda a: np.vsplit(a, [1]), (M,)),
    "dsplit": (lambda a: np.dsplit(a, 2), (A,)),
    "diagonal": (np.diagonal, (M,)),
    "diagonal_off": (lambda a: np.diagonal(a, 1, 2, 0), (A,)),
    "diagonal_neg": (lambda a: np.diagonal(a, -2), (M,)),
    "trace": (np.trace, (M,)),
    "trace_3d": (lambda a: np.trace(a, 1, 1, 2), (A,)),
    "diag_1d": (lambda a: np.diag(a, 1), (V,)),
    "diag_2d": (lambda a: np.diag(a, -1), (M,)),
    "fliplr": (np.fliplr, (M,)),
    "flipud": (np.flipud, (A,)),
    "rot90": (np.rot90, (M,)),
    "rot90_3": (lambda a: np.rot90(a, 3, axes=(2, 0)), (A,)),
    "rot90_2": (lambda a: np.rot90(a, -2), (M,)),
    "outer": (np.outer, (V, M)),
    "ptp": (lambda a: np.ptp(a, axis=1), (A,)),
    "average": (lambda a: np.average(a, axis=1), (A,)),
    "average_w": (lambda a, w: np.average(a, axis=1, weights=w), (M, np.array([1.0, 2.0, 3.0, 4.0]))),
    "average_returned": (lambda a, w: np.average(a, weights=w, returned=True), (V, V + 1)),
    "append": (np.append, (M, V)),
    "append_axis": (lambda a, b: np.append(a, b, axis=0), (M, M)),
    "ediff1d": (lambda a: np.ediff1d(a, to_end=[9.0], to_begin=-1.0), (V,)),
    "tensordot_int": (lambda a, b: np.tensordot(a, b, 1), (M.astype(np.float64), A[0].T)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_numpy_dispatch_matches_numpy(name):
    fn, args = CASES[name]
    expected = fn(*args)
    got = to_np(fn(*[hx.asarray(a) for a in args]))
    same(expected, got)


def test_hx_names_and_positional_tensordot():
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    same(np.tensordot(a, b, 1), to_np(hx.tensordot(hx.asarray(a), hx.asarray(b), 1)))
    same(np.vstack([a, a]), to_np(hx.vstack([hx.asarray(a), hx.asarray(a)])))
    x = hx.array([[1, 2], [3, 4]], ndmin=3)
    assert x.shape == (1, 2, 2)
    src = hx.asarray(a)
    c = hx.array(src)
    c[0, 0] = 99.0
    assert hx.to_numpy(src)[0, 0] == 0.0  # hx.array copies


@given(shape=hnp.array_shapes(min_dims=2, max_dims=4, min_side=1, max_side=5), data=st.data())
def test_diagonal_is_a_view_matching_numpy(shape, data):
    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    ax1, ax2 = data.draw(st.lists(st.integers(0, len(shape) - 1), min_size=2, max_size=2, unique=True))
    offset = data.draw(st.integers(-6, 6))
    x = hx.asarray(a)
    d = hx.diagonal(x, offset, ax1, ax2)
    same(np.diagonal(a, offset, ax1, ax2), hx.to_numpy(d))
    same(np.trace(a, offset, ax1, ax2), hx.to_numpy(hx.trace(x, offset, ax1, ax2)))


@given(n=st.integers(0, 12), sections=st.integers(1, 5))
def test_array_split_matches_numpy(n, sections):
    a = np.arange(n, dtype=np.int64)
    same(np.array_split(a, sections), to_np(hx.array_split(hx.asarray(a), sections)))


def test_linalg_eig_dispatches():
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    w = np.sort_complex(to_np(np.linalg.eigvals(hx.asarray(a))))
    np.testing.assert_allclose(w, np.sort_complex(np.linalg.eigvals(a).astype(complex)), rtol=1e-12)
    vals, vecs = np.linalg.eig(hx.asarray(a))
    v, e = hx.to_numpy(vals), hx.to_numpy(vecs)
    np.testing.assert_allclose(a @ e, e * v, atol=1e-12)


def test_bad_input_is_refused_and_changes_nothing():
    x = hx.asarray(M)
    with pytest.raises(ValueError, match="split: array split does not result in an equal division"):
        hx.split(x, 5, axis=1)
    with pytest.raises(ValueError, match="number of sections must be larger than 0"):
        hx.array_split(x, 0)
    with pytest.raises(TypeError, match="must be passed as a sequence"):
        hx.vstack(x)
    with pytest.raises(ValueError, match="axis1 and axis2 cannot be the same"):
        hx.diagonal(x, 0, 1, 1)
    with pytest.raises(ValueError, match="diag: input must be 1- or 2-d"):
        hx.diag(hx.asarray(A))
    with pytest.raises(ValueError, match="vsplit only works on arrays of 2 or more"):
        hx.vsplit(hx.asarray(V), 1)
    with pytest.raises(ZeroDivisionError, match="weights sum to zero"):
        hx.average(x, axis=1, weights=np.zeros(4))
    with pytest.raises(ValueError, match="rot90: axes must be different"):
        hx.rot90(x, axes=(0, 0))
    np.testing.assert_array_equal(hx.to_numpy(x), M)
