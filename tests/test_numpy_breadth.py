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
    "bincount": (np.bincount, (np.array([0, 3, 3, 1, 7, 3]),)),
    "bincount_w": (lambda a, w: np.bincount(a, w, minlength=10), (np.array([0, 3, 3, 1, 7, 3]), np.arange(6.0))),
    "digitize": (np.digitize, (np.array([0.2, 6.4, 3.0, 1.6, -1.0]), np.array([0.0, 1.0, 2.5, 4.0, 10.0]))),
    "digitize_right_dec": (lambda a, b: np.digitize(a, b, right=True),
                           (np.array([0.2, 6.4, 3.0, 1.0]), np.array([10.0, 4.0, 2.5, 1.0, 0.0]))),
    "histogram": (lambda a: np.histogram(a, 7), (np.array([0.5, 1.5, 1.7, 3.0, 9.0, 9.0, 4.25]),)),
    "histogram_edges": (lambda a, b: np.histogram(a, b), (np.array([0.5, 1.5, 1.7, 3.0, 9.0, 12.0]),
                                                          np.array([0.0, 1.0, 3.0, 9.0]))),
    "histogram_density": (lambda a: np.histogram(a, 4, range=(0, 8), density=True), (np.arange(10.0),)),
    "histogram_bin_edges": (lambda a: np.histogram_bin_edges(a, 5), (np.arange(10.0),)),
    "cov": (np.cov, (np.array([[1.0, 2.0, 4.0, 7.0], [0.5, -1.0, 2.0, 2.0], [3.0, 3.0, 1.0, 0.0]]),)),
    "cov_1d": (lambda a: np.cov(a, bias=True), (np.array([1.0, 2.0, 4.0, 7.0]),)),
    "corrcoef": (np.corrcoef, (np.array([[1.0, 2.0, 4.0, 7.0], [0.5, -1.0, 2.0, 2.0]]),)),
    "convolve": (np.convolve, (np.array([1.0, 2.0, 3.0, 4.0, 5.0]), np.array([0.0, 1.0, 0.5]))),
    "convolve_same": (lambda a, v: np.convolve(a, v, "same"), (np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0, 2.0, 3.0]))),
    "correlate": (np.correlate, (np.array([1.0, 2.0, 3.0, 4.0, 5.0]), np.array([0.0, 1.0, 0.5]))),
    "correlate_full": (lambda a, v: np.correlate(a, v, "full"), (np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5, 2.0]))),
    "interp": (np.interp, (np.array([-1.0, 0.0, 0.5, 1.5, 2.0, 3.0, 9.0]), np.array([0.0, 1.0, 2.0, 4.0]),
                           np.array([10.0, 20.0, 0.0, 5.0]))),
    "kron": (np.kron, (np.array([[1, 2], [3, 4]]), np.array([[0, 5], [6, 7], [1, 1]]))),
    "inner": (np.inner, (M.astype(np.float64), A)),
    "vdot": (np.vdot, (M.astype(np.float64), M.astype(np.float64) + 1)),
    "multi_dot": (lambda a, b, c: np.linalg.multi_dot([a, b, c]), (M.astype(float), M.T.astype(float), M.astype(float))),
    "isposinf": (np.isposinf, (np.array([np.inf, -np.inf, 1.0, np.nan]),)),
    "isneginf": (np.isneginf, (np.array([np.inf, -np.inf, 1.0, np.nan]),)),
    "iscomplex": (np.iscomplex, (np.array([1 + 1j, 2 + 0j]),)),
    "isreal": (np.isreal, (np.array([1 + 1j, 2 + 0j]),)),
    "nan_to_num": (np.nan_to_num, (np.array([np.inf, -np.inf, 1.0, np.nan]),)),
    "nan_to_num_args": (lambda a: np.nan_to_num(a, nan=-9.0, posinf=5.0), (np.array([np.inf, -np.inf, np.nan]),)),
    "fix": (np.fix, (np.array([-2.5, 2.5, -0.2, 3.0]),)),
    "sinc": (np.sinc, (np.array([-1.5, 0.0, 0.25, 2.0]),)),
    "flatnonzero": (np.flatnonzero, (np.array([[0, 1], [2, 0]]),)),
    "argwhere": (np.argwhere, (np.array([[0, 1], [2, 0]]),)),
    "trapezoid": (lambda y: np.trapezoid(y, axis=1), (A,)),
    "trapezoid_x": (lambda y, x: np.trapezoid(y, x), (np.array([1.0, 3.0, 2.0]), np.array([0.0, 0.5, 2.0]))),
    "diagflat": (lambda v: np.diagflat(v, -1), (np.array([[1, 2], [3, 4]]),)),
    "union1d": (np.union1d, (np.array([3, 1, 3, 7]), np.array([2, 1, 9]))),
    "intersect1d": (np.intersect1d, (np.array([3, 1, 3, 7]), np.array([2, 1, 9, 7]))),
    "setdiff1d": (np.setdiff1d, (np.array([3, 1, 3, 7]), np.array([2, 1, 9]))),
    "setxor1d": (np.setxor1d, (np.array([3, 1, 3, 7]), np.array([2, 1, 9]))),
    "select": (lambda a: np.select([a < 3, a > 8], [a, a * 2], -1), (np.arange(12),)),
    "extract": (lambda a: np.extract(a % 3 == 0, a), (np.arange(12).reshape(3, 4),)),
    "compress": (lambda a: np.compress(np.array([True, False, True]), a, axis=0), (M,)),
    "delete": (lambda a: np.delete(a, [0, 2], axis=1), (M,)),
    "delete_flat": (lambda a: np.delete(a, slice(1, 8, 3)), (M,)),
    "angle": (lambda z: np.angle(z, deg=True), (np.array([1 + 1j, -2 + 0j, 3j]),)),
    "rollaxis": (lambda a: np.rollaxis(a, 2, 0), (A,)),
    "vander": (np.vander, (np.array([1, 2, 3, 5]),)),
    "vander_inc": (lambda x: np.vander(x, 3, increasing=True), (np.array([1.5, 2.0, 3.0]),)),
    "polyval": (np.polyval, (np.array([3.0, 0.0, 1.0]), np.array([1.0, 2.0, -1.0]))),
    "fft2": (np.fft.fft2, (A,)),
    "irfft2": (lambda a: np.fft.irfft2(np.fft.rfft2(a)), (A,)),
    "tril_indices_from": (lambda a: np.tril_indices_from(a, 1), (M,)),
    "diag_indices_from": (np.diag_indices_from, (np.ones((3, 3)),)),
    "sort_complex": (np.sort_complex, (np.array([3.0, 1.0, 2.0]),)),
    "polyadd": (np.polyadd, (np.array([1.0, 2.0]), np.array([3.0, 0.0, 1.0]))),
    "polysub": (np.polysub, (np.array([1.0, 2.0]), np.array([3.0, 0.0, 1.0]))),
    "polymul": (np.polymul, (np.array([1.0, 2.0]), np.array([3.0, 0.0, 1.0]))),
    "polyder": (lambda p: np.polyder(p, 2), (np.array([1.0, 2.0, 3.0, 4.0]),)),
    "polyint": (lambda p: np.polyint(p, 2, [1.0, 2.0]), (np.array([1.0, 2.0, 3.0]),)),
    "cross": (np.cross, (np.arange(12.0).reshape(4, 3), np.array([1.0, -1.0, 2.0]))),
    "ix_": (np.ix_, (np.array([0, 2]), np.array([1, 3, 4]))),
    "choose": (lambda a, b, c: np.choose(a, [b, c]), (np.array([0, 1, 1, 0]), np.arange(4.0), np.arange(4.0) * 10)),
    "cond": (np.linalg.cond, (np.array([[2.0, 1.0], [1.0, 3.0]]),)),
    "tensorinv": (lambda a: np.linalg.tensorinv(a, 1), (np.eye(4) * 2 + np.ones((4, 4)),)),
    "resize": (lambda a: np.resize(a, (3, 5)), (M,)),
    "real_if_close": (np.real_if_close, (np.array([1 + 1e-20j, 2 + 0j]),)),
    "real_if_close_not": (np.real_if_close, (np.array([1 + 1j, 2 + 0j]),)),
    "trim_zeros": (np.trim_zeros, (np.array([0, 0, 1, 2, 0, 3, 0]),)),
    "trim_zeros_f": (lambda a: np.trim_zeros(a, "f"), (np.array([0, 0, 1, 2, 0, 3, 0]),)),
    "tensorsolve": (np.linalg.tensorsolve, (np.eye(6).reshape(6, 2, 3) * 2 + 0.1, np.arange(6.0))),
}


def test_small_helpers_and_refusals():
    a = np.arange(9.0).reshape(3, 3)
    x = hx.asarray(a)
    np.fill_diagonal(x, -1.0)
    b = a.copy()
    np.fill_diagonal(b, -1.0)
    np.testing.assert_array_equal(hx.to_numpy(x), b)
    dst = hx.zeros(3)
    np.copyto(dst, hx.asarray(np.array([1.0, 2.0, 3.0])), where=np.array([True, False, True]))
    np.testing.assert_array_equal(hx.to_numpy(dst), [1.0, 0.0, 3.0])
    assert np.array_equiv(x, hx.asarray(b)) and not np.array_equiv(x, hx.asarray(a))
    assert np.common_type(x) is np.float64
    assert np.einsum_path("ij,jk->ik", x, x)[0] == ["einsum_path", (0, 1)]
    with pytest.raises(TypeError, match="numpy.apply_along_axis for DeviceArray: it calls a Python function"):
        np.apply_along_axis(np.sum, 0, x)
    with pytest.raises(TypeError, match="no datetime64 dtype"):
        np.is_busday(x)
    with pytest.raises(ValueError, match="choose: invalid entry"):
        np.choose(hx.asarray(np.array([0, 2])), [x[0, :2], x[1, :2]])


@given(x=hnp.arrays(np.int64, st.integers(0, 40), elements=st.integers(0, 30)), minlength=st.integers(0, 40))
def test_bincount_matches_numpy(x, minlength):
    same(np.bincount(x, minlength=minlength), hx.to_numpy(hx.bincount(hx.asarray(x), minlength=minlength)))


@given(x=hnp.arrays(np.float64, st.integers(0, 40), elements=st.floats(-50, 50)), bins=st.integers(1, 12))
def test_histogram_matches_numpy(x, bins):
    try:
        counts, edges = np.histogram(x, bins)
    except ValueError as e:  # a range too narrow for the bins (subnormal data): hrxarray refuses it too
        with pytest.raises(ValueError, match="Too many bins for data range"):
            hx.histogram(hx.asarray(x), bins)
        assert "Too many bins" in str(e)
        return
    hc, he = hx.histogram(hx.asarray(x), bins)
    same(edges, hx.to_numpy(he))
    same(counts, hx.to_numpy(hc))


@given(a=hnp.arrays(np.float64, st.integers(1, 20), elements=st.floats(-10, 10)),
       v=hnp.arrays(np.float64, st.integers(1, 8), elements=st.floats(-10, 10)),
       mode=st.sampled_from(["full", "same", "valid"]))
def test_convolve_and_correlate_match_numpy(a, v, mode):
    for name in ("convolve", "correlate"):
        expected = getattr(np, name)(a, v, mode)
        got = hx.to_numpy(getattr(hx, name)(hx.asarray(a), hx.asarray(v), mode))
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-10)


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
    with pytest.raises(ValueError, match="bincount: 'list' argument must have no negative elements"):
        hx.bincount(hx.asarray(np.array([1, -1])))
    with pytest.raises(ValueError, match="bins must be monotonically"):
        hx.digitize(x, np.array([1, 3, 2]))
    with pytest.raises(ValueError, match="convolve: v cannot be empty"):
        hx.convolve(hx.asarray(V), np.zeros(0))
    with pytest.raises(IndexError, match="delete: index 9 is out of bounds"):
        np.delete(x, 9, axis=1)
    with pytest.raises(ValueError, match="interp: fp and xp are not of the same length"):
        hx.interp(x, np.arange(3.0), np.arange(4.0))
    np.testing.assert_array_equal(hx.to_numpy(x), M)


def test_readme_numpy_table_is_current():
    from pathlib import Path

    from hrxarray import _numpy_table

    readme = Path(__file__).resolve().parents[1] / "README.md"
    if not readme.exists():
        pytest.skip("needs the source tree's README.md")
    text = readme.read_text()
    assert text.count(_numpy_table.BEGIN) == 1 and text.count(_numpy_table.END) == 1
    copy = text.split(_numpy_table.BEGIN + "\n", 1)[1].split(_numpy_table.END, 1)[0]
    if not copy.startswith(f"NumPy {np.__version__}:"):
        pytest.skip(f"README's table was made with another NumPy ({copy.split(':')[0]}), this is {np.__version__}")
    assert copy == _numpy_table.markdown(), (
        "README.md's NumPy function table is stale: replace the text between the numpy-function-table markers "
        "with the output of `hrxarray numpy-functions`")


def test_at_least_90_percent_of_dispatching_functions_run_or_name_their_limit():
    from hrxarray import _numpy_table

    rows = _numpy_table.rows()
    assert len(rows) > 200
    ok = [r for r in rows if r["status"] != "not yet"]
    assert len(ok) >= 0.9 * len(rows), [r["name"] for r in rows if r["status"] == "not yet"]
    # Each refusal raises TypeError with its reason, whatever the arguments.
    from hrxarray import _array, _numpy_more

    for f, why in _numpy_more.REFUSALS.items():
        with pytest.raises(TypeError, match=f"numpy.{f.__name__} for DeviceArray: .*"):
            _array._ARRAY_FUNCTIONS[f](hx.zeros(2))


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "maximum", "less", "power"])
def test_ufunc_outer_matches_numpy(name):
    a, b = np.arange(1.0, 4.0), np.arange(6.0).reshape(2, 3) - 2
    uf = getattr(np, name)
    same(uf.outer(a, b), to_np(uf.outer(hx.asarray(a), hx.asarray(b))))


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64])
def test_ufunc_accumulate_keeps_the_dtype_as_numpy(dtype):
    a = (np.arange(12) % 5 + 1).astype(dtype).reshape(3, 4)
    for uf in (np.add, np.multiply):
        for axis in (0, 1):
            same(uf.accumulate(a, axis=axis), to_np(uf.accumulate(hx.asarray(a), axis=axis)))
    with pytest.raises(TypeError, match="numpy.maximum.accumulate for DeviceArray"):
        np.maximum.accumulate(hx.asarray(a))


def test_histogram_refuses_a_range_too_narrow_for_its_bins():
    x = np.array([5e-324, 0.0])
    with pytest.raises(ValueError, match="Too many bins"):
        np.histogram(x, 2)
    with pytest.raises(ValueError, match="^histogram: Too many bins for data range. Cannot create 2 finite-sized"):
        hx.histogram(hx.asarray(x), 2)
