"""hx.linalg against NumPy: every function over shapes, batches and dtypes (Hypothesis), the named-tuple
results, LinAlgError at the wait, the dtype policy, asynchronous use and np.linalg dispatch."""

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.array_api import make_strategies_namespace

import hrxarray as hx

xps = make_strategies_namespace(hx, api_version="2024.12")  # Hypothesis knows versions up to 2024.12

LAPACK_DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
N = hx.to_numpy

dtypes = st.sampled_from(LAPACK_DTYPES)
batches = st.lists(st.integers(0, 3), max_size=2).map(tuple)
sizes = st.integers(0, 5)
seeds = st.integers(0, 2**32 - 1)


def tol(dt):
    return dict(rtol=2e-4, atol=2e-4) if np.dtype(dt) in (np.float32, np.complex64) else dict(rtol=1e-10, atol=1e-10)


def rand(seed, shape, dt):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if np.dtype(dt).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dt)


def well_conditioned(seed, shape, dt):
    """Diagonally dominant: far from singular in every precision."""
    a = rand(seed, shape, dt)
    return (a + 3 * shape[-1] * np.eye(shape[-1])).astype(dt)


def hermitian_pd(seed, shape, dt):
    a = rand(seed, shape, dt)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dt)


def conj_t(x):
    return np.conj(np.swapaxes(x, -1, -2))


# --- factorisations (LAPACK) ---------------------------------------------------------------------


@given(dt=dtypes, batch=batches, n=sizes, k=st.integers(1, 3), seed=seeds, vector=st.booleans())
def test_solve(dt, batch, n, k, seed, vector):
    a = well_conditioned(seed, (*batch, n, n), dt)
    b = rand(seed + 1, (n,) if vector else (*batch[1:], n, k), dt)  # x2's batch broadcasts against x1's
    got = hx.linalg.solve(hx.asarray(a), hx.asarray(b))
    want = np.linalg.solve(a, b)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(N(got), want, **tol(dt))


@given(dt=dtypes, batch=batches, n=sizes, seed=seeds)
def test_inv_det_slogdet(dt, batch, n, seed):
    a = well_conditioned(seed, (*batch, n, n), dt)
    x = hx.asarray(a)
    inv = hx.linalg.inv(x)
    assert inv.dtype == dt and inv.shape == a.shape
    np.testing.assert_allclose(N(inv), np.linalg.inv(a), **tol(dt))
    det = hx.linalg.det(x)
    assert det.dtype == dt and det.shape == batch
    np.testing.assert_allclose(N(det), np.linalg.det(a), rtol=tol(dt)["rtol"] * 10)
    r = hx.linalg.slogdet(x)
    assert isinstance(r, hx.linalg.SlogdetResult) and r._fields == ("sign", "logabsdet")
    want = np.linalg.slogdet(a)
    assert r.sign.dtype == want.sign.dtype and r.logabsdet.dtype == want.logabsdet.dtype
    np.testing.assert_allclose(N(r.sign), want.sign, **tol(dt))
    np.testing.assert_allclose(N(r.logabsdet), want.logabsdet, **tol(dt))


def test_singular_det_and_slogdet():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert N(hx.linalg.det(hx.asarray(a))) == 0
    s, ld = hx.linalg.slogdet(hx.asarray(a))
    assert N(s) == 0 and N(ld) == -np.inf


@given(dt=dtypes, batch=batches, n=sizes, seed=seeds, upper=st.booleans())
def test_cholesky(dt, batch, n, seed, upper):
    a = hermitian_pd(seed, (*batch, n, n), dt)
    got = hx.linalg.cholesky(hx.asarray(a), upper=upper)
    assert got.dtype == dt and got.shape == a.shape
    np.testing.assert_allclose(N(got), np.linalg.cholesky(a, upper=upper), **tol(dt))


@given(dt=dtypes, batch=batches, n=sizes, seed=seeds)
def test_eigh_and_eigvalsh(dt, batch, n, seed):
    a = hermitian_pd(seed, (*batch, n, n), dt)
    r = hx.linalg.eigh(hx.asarray(a))
    assert isinstance(r, hx.linalg.EighResult) and r._fields == ("eigenvalues", "eigenvectors")
    w, v = np.linalg.eigh(a)
    assert r.eigenvalues.dtype == w.dtype and r.eigenvectors.dtype == v.dtype
    scale = max(1.0, float(np.abs(w).max(initial=0)))
    np.testing.assert_allclose(N(r.eigenvalues), w, rtol=tol(dt)["rtol"], atol=tol(dt)["atol"] * scale)
    vv = N(r.eigenvectors)
    # Eigenvectors are defined up to a phase: check the decomposition instead.
    np.testing.assert_allclose(a @ vv, vv * N(r.eigenvalues)[..., None, :], atol=tol(dt)["atol"] * scale * 10)
    np.testing.assert_allclose(N(hx.linalg.eigvalsh(hx.asarray(a))), w, rtol=tol(dt)["rtol"],
                               atol=tol(dt)["atol"] * scale)


def same_eigenvalues(got, want, tol=1e-3):
    """Equal as multisets (eig's order is unspecified): each value has a close partner both ways."""
    d = np.abs(got[..., :, None] - want[..., None, :])
    assert (d.min(axis=-1, initial=np.inf) < tol).all() and (d.min(axis=-2, initial=np.inf) < tol).all()


@given(dt=dtypes, batch=batches, n=sizes, seed=seeds)
def test_eig_and_eigvals(dt, batch, n, seed):
    a = rand(seed, (*batch, n, n), dt)
    r = hx.linalg.eig(hx.asarray(a))
    assert isinstance(r, hx.linalg.EigResult)
    w, _ = np.linalg.eig(a)
    # Always complex, as the standard says (NumPy returns real dtypes when every eigenvalue is real).
    want_dt = np.result_type(dt, np.complex64)
    assert r.eigenvalues.dtype == want_dt and r.eigenvectors.dtype == want_dt
    got_w, got_v = N(r.eigenvalues), N(r.eigenvectors)
    same_eigenvalues(got_w, w)
    np.testing.assert_allclose(a @ got_v, got_v * got_w[..., None, :], atol=1e-3 if tol(dt)["rtol"] > 1e-6 else 1e-9)
    same_eigenvalues(N(hx.linalg.eigvals(hx.asarray(a))), w)


@given(dt=dtypes, batch=batches, m=sizes, n=sizes, seed=seeds, mode=st.sampled_from(["reduced", "complete"]))
def test_qr(dt, batch, m, n, seed, mode):
    a = rand(seed, (*batch, m, n), dt)
    r = hx.linalg.qr(hx.asarray(a), mode=mode)
    assert isinstance(r, hx.linalg.QRResult) and r._fields == ("Q", "R")
    wq, wr = np.linalg.qr(a, mode=mode)
    assert r.Q.shape == wq.shape and r.R.shape == wr.shape and r.Q.dtype == dt and r.R.dtype == dt
    q, rr = N(r.Q), N(r.R)
    np.testing.assert_allclose(q @ rr, a, **tol(dt))
    np.testing.assert_allclose(conj_t(q) @ q, np.broadcast_to(np.eye(q.shape[-1]), (*batch, q.shape[-1], q.shape[-1])),
                               **tol(dt))
    np.testing.assert_array_equal(np.tril(rr, -1), 0)
    # The same LAPACK routines as NumPy: the factors themselves agree.
    np.testing.assert_allclose(rr, wr, **tol(dt))


@given(dt=dtypes, batch=batches, m=sizes, n=sizes, seed=seeds, full=st.booleans())
def test_svd_and_svdvals(dt, batch, m, n, seed, full):
    a = rand(seed, (*batch, m, n), dt)
    r = hx.linalg.svd(hx.asarray(a), full_matrices=full)
    assert isinstance(r, hx.linalg.SVDResult) and r._fields == ("U", "S", "Vh")
    u, s, vh = np.linalg.svd(a, full_matrices=full)
    assert (r.U.shape, r.S.shape, r.Vh.shape) == (u.shape, s.shape, vh.shape)
    assert (r.U.dtype, r.S.dtype, r.Vh.dtype) == (u.dtype, s.dtype, vh.dtype)
    np.testing.assert_allclose(N(r.S), s, **tol(dt))
    k = min(m, n)
    gu, gs, gvh = N(r.U), N(r.S), N(r.Vh)
    np.testing.assert_allclose((gu[..., :k] * gs[..., None, :]) @ gvh[..., :k, :], a, **tol(dt))
    np.testing.assert_allclose(N(hx.linalg.svdvals(hx.asarray(a))), s, **tol(dt))


# --- compositions ----------------------------------------------------------------------------------


@given(dt=dtypes, batch=batches, m=sizes, n=sizes, seed=seeds)
def test_pinv_and_matrix_rank(dt, batch, m, n, seed):
    a = rand(seed, (*batch, m, n), dt)
    if m > 1 and n > 0:
        a[..., -1, :] = 0  # rank-deficient
    p = hx.linalg.pinv(hx.asarray(a))
    assert p.dtype == dt and p.shape == (*batch, n, m)
    want = np.linalg.pinv(a)
    eps = 1e-3 if tol(dt)["rtol"] > 1e-6 else 1e-8
    # Relative to the largest entry: an ill-conditioned draw amplifies rounding in every entry alike.
    np.testing.assert_allclose(N(p), want, rtol=eps, atol=eps * max(1.0, float(np.abs(want).max(initial=0))))
    rank = hx.linalg.matrix_rank(hx.asarray(a))
    assert rank.dtype == np.int64 and rank.shape == batch
    sv = np.linalg.svdvals(a) if min(m, n) else np.zeros((*batch, 0))
    for rtol, got in ((None, rank), (0.5, hx.linalg.matrix_rank(hx.asarray(a), rtol=0.5))):
        want = np.linalg.matrix_rank(a, rtol=rtol)
        # Singular values within a factor 2 of the cutoff may land on either side in another summation order.
        cut = sv.max(axis=-1, keepdims=True, initial=0) * (max(m, n) * np.finfo(sv.dtype).eps if rtol is None else rtol)
        clear = ~np.any((sv > cut / 2) & (sv < cut * 2), axis=-1)
        np.testing.assert_array_equal(N(got)[clear], np.asarray(want)[clear])


@given(dt=st.sampled_from([*LAPACK_DTYPES, np.int64]), batch=batches, n=st.integers(1, 4), seed=seeds,
       power=st.integers(-3, 6))
def test_matrix_power(dt, batch, n, seed, power):
    if np.dtype(dt).kind == "i":
        a = np.random.default_rng(seed).integers(-2, 3, (*batch, n, n))
        if power < 0:
            power = -power
    else:
        a = well_conditioned(seed, (*batch, n, n), dt)
    got = hx.linalg.matrix_power(hx.asarray(a), power)
    want = np.linalg.matrix_power(a, power)
    assert got.dtype == want.dtype and got.shape == want.shape
    if np.dtype(dt).kind == "i":
        np.testing.assert_array_equal(N(got), want)
    else:
        np.testing.assert_allclose(N(got), want, rtol=tol(dt)["rtol"] * 10, atol=tol(dt)["atol"])


@given(dt=dtypes, batch=batches, m=st.integers(1, 4), n=st.integers(1, 4), seed=seeds,
       ord=st.sampled_from(["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf]), keepdims=st.booleans())
def test_matrix_norm(dt, batch, m, n, seed, ord, keepdims):
    a = rand(seed, (*batch, m, n), dt)
    got = hx.linalg.matrix_norm(hx.asarray(a), ord=ord, keepdims=keepdims)
    want = np.linalg.matrix_norm(a, ord=ord, keepdims=keepdims)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(N(got), want, **tol(dt))


@given(dt=dtypes, shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple), seed=seeds,
       ord=st.sampled_from([2, 1, 0, 3, -1, 0.5, math.inf, -math.inf]), keepdims=st.booleans(), data=st.data())
def test_vector_norm(dt, shape, seed, ord, keepdims, data):
    a = rand(seed, shape, dt)
    axis = data.draw(st.sampled_from([None, -1, 0, tuple(range(len(shape)))]))
    got = hx.linalg.vector_norm(hx.asarray(a), axis=axis, keepdims=keepdims, ord=ord)
    want = np.linalg.vector_norm(a, axis=axis, keepdims=keepdims, ord=ord)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(N(got), want, **tol(dt))


_small_shapes = xps.array_shapes(min_dims=1, max_dims=3, max_side=4)


@given(x=xps.arrays(xps.floating_dtypes(), _small_shapes,
                    elements={"allow_nan": False, "allow_infinity": False, "min_value": -1e3, "max_value": 1e3})
       | xps.arrays(xps.complex_dtypes(), _small_shapes,
                    elements=st.complex_numbers(max_magnitude=1e3, allow_nan=False, allow_infinity=False,
                                                width=64)),
       ord=st.sampled_from([2, 1, math.inf]))
def test_vector_norm_and_svdvals_over_array_api_strategies(x, ord):
    a = N(x)
    got = hx.linalg.vector_norm(x, ord=ord)
    assert got.dtype == np.linalg.vector_norm(a, ord=ord).dtype
    np.testing.assert_allclose(N(got), np.linalg.vector_norm(a, ord=ord), rtol=1e-4)
    if x.ndim >= 2:
        np.testing.assert_allclose(N(hx.linalg.svdvals(x)), np.linalg.svdvals(a), rtol=1e-3,
                                   atol=1e-3 * max(1.0, float(np.abs(a).max(initial=0))))


@pytest.mark.parametrize("kwargs", [{}, {"ord": 1}, {"ord": np.inf, "axis": 0}, {"axis": (0, 2)},
                                    {"axis": (2, 0), "ord": "nuc", "keepdims": True}, {"axis": 1, "keepdims": True},
                                    {"keepdims": True}, {"axis": (1, 2), "ord": -2}])
def test_numpy_norm(kwargs):
    a = rand(3, (3, 4, 5), np.float64)
    if "ord" in kwargs and "axis" not in kwargs:
        a = a[0]
    got = hx.linalg.norm(hx.asarray(a), **kwargs)
    want = np.linalg.norm(a, **kwargs)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(N(got), want, rtol=1e-12)
    np.testing.assert_allclose(N(np.linalg.norm(hx.asarray(a), **kwargs)), want, rtol=1e-12)


@given(dt=st.sampled_from([*LAPACK_DTYPES, np.int32, np.uint8]), batch=batches, m=sizes, n=sizes,
       offset=st.integers(-6, 6), seed=seeds)
def test_diagonal_trace_transpose(dt, batch, m, n, offset, seed):
    a = (rand(seed, (*batch, m, n), np.float64) * 10).astype(dt)
    x = hx.asarray(a)
    np.testing.assert_array_equal(N(hx.linalg.diagonal(x, offset=offset)), np.linalg.diagonal(a, offset=offset))
    got = hx.linalg.trace(x, offset=offset)
    want = np.linalg.trace(a, offset=offset)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(N(got), want, rtol=1e-5)
    np.testing.assert_array_equal(N(hx.linalg.matrix_transpose(x)), np.linalg.matrix_transpose(a))


@given(dt=st.sampled_from([*LAPACK_DTYPES, np.int32]), m=sizes, n=sizes, seed=seeds)
def test_outer(dt, m, n, seed):
    a, b = (rand(seed, (m,), np.float64) * 5).astype(dt), (rand(seed + 1, (n,), np.float64) * 5).astype(dt)
    got = hx.linalg.outer(hx.asarray(a), hx.asarray(b))
    assert got.dtype == dt
    np.testing.assert_allclose(N(got), np.outer(a, b), **tol(dt))


@given(dt=st.sampled_from([*LAPACK_DTYPES, np.int64]), batch=batches, seed=seeds, data=st.data())
def test_cross_and_vecdot(dt, batch, seed, data):
    shape = (*batch, 3)
    a = (rand(seed, shape, np.float64) * 5).astype(dt)
    b = (rand(seed + 1, shape[1:] if batch else shape, np.float64) * 5).astype(dt)
    got = hx.linalg.cross(hx.asarray(a), hx.asarray(b))
    assert got.dtype == dt
    np.testing.assert_allclose(N(got), np.linalg.cross(a, b), **tol(dt))
    axis = data.draw(st.sampled_from([-1] if not batch else [-1, -len(shape)]))
    if axis != -1:
        a2 = (rand(seed, (3, *batch), np.float64) * 5).astype(dt)
        b2 = (rand(seed + 1, (3, *batch), np.float64) * 5).astype(dt)
        np.testing.assert_allclose(N(hx.linalg.cross(hx.asarray(a2), hx.asarray(b2), axis=0)),
                                   np.cross(a2, b2, axis=0), **tol(dt))
    v = hx.linalg.vecdot(hx.asarray(a), hx.asarray(b))
    want = np.linalg.vecdot(a, b)
    assert v.dtype == want.dtype and v.shape == want.shape
    np.testing.assert_allclose(N(v), want, **tol(dt))


TENSORDOT_CASES = [
    ((2, 3), (4, 5), 0),
    ((2, 3, 4), (4, 2), 1),
    ((2, 3, 4), (3, 4, 2), 2),
    ((2, 3, 4), (3, 2, 4), ([1, 0], [0, 1])),
    ((2, 3, 4), (4, 5), ([2], [0])),
    ((2, 3, 4), (4, 2, 5), ([0, 2], [1, 0])),
    ((0, 3), (3, 2), 1),
]


@given(dt=st.sampled_from([np.float32, np.float64, np.complex128, np.int32]), seed=seeds,
       case=st.sampled_from(TENSORDOT_CASES))
def test_tensordot(dt, seed, case):
    sa, sb, axes = case
    a = (rand(seed, sa, np.float64) * 4).astype(dt)
    b = (rand(seed + 1, sb, np.float64) * 4).astype(dt)
    got = hx.linalg.tensordot(hx.asarray(a), hx.asarray(b), axes=axes)
    want = np.tensordot(a, b, axes=axes)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(N(got), want, **tol(dt))


# --- the dtype policy ------------------------------------------------------------------------------


@pytest.mark.parametrize("dt", [np.float16, ml_dtypes.bfloat16])
def test_half_precision_computes_in_float32_and_rounds_back(dt):
    a = well_conditioned(5, (3, 3), np.float32).astype(dt)
    a32 = a.astype(np.float32)
    x = hx.asarray(a)
    for name in ("inv", "det", "cholesky", "svdvals", "matrix_norm", "vector_norm", "pinv"):
        src = (a32 @ a32.T if name == "cholesky" else a32).astype(dt)
        got = getattr(hx.linalg, name)(hx.asarray(src))
        assert got.dtype == dt, name
        want = getattr(np.linalg, name)(src.astype(np.float32)).astype(dt)
        np.testing.assert_array_equal(N(got), want, err_msg=name)
    w = hx.linalg.eigvals(x)
    assert w.dtype == np.complex64  # no complex half dtype: eig's results stay complex64
    q, r = hx.linalg.qr(x)
    assert q.dtype == dt and r.dtype == dt


def test_integer_input_computes_in_float64():
    a = np.array([[2, 1], [1, 3]], dtype=np.int32)
    got = hx.linalg.inv(hx.asarray(a))
    assert got.dtype == np.float64
    np.testing.assert_allclose(N(got), np.linalg.inv(a))
    assert hx.linalg.solve(hx.asarray(a), hx.asarray(np.array([1, 2], np.int8))).dtype == np.float64


def test_bfp16_is_refused():
    x = hx.asarray(np.eye(8, dtype=np.float32)).astype(hx.bfp16)
    with pytest.raises(TypeError, match="inv"):
        hx.linalg.inv(x)


# --- errors ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["inv", "det", "slogdet", "cholesky", "eigh", "eigvalsh", "eig", "eigvals",
                                  "matrix_power"])
def test_non_square_is_a_value_error_naming_the_function(name):
    x = hx.asarray(np.ones((2, 3)))
    args = (x, 2) if name == "matrix_power" else (x,)
    with pytest.raises(ValueError, match=name):
        getattr(hx.linalg, name)(*args)


@pytest.mark.parametrize("name", ["inv", "det", "svd", "qr", "matrix_norm", "diagonal", "matrix_rank"])
def test_fewer_than_two_dimensions_is_refused(name):
    with pytest.raises(ValueError, match=name):
        getattr(hx.linalg, name)(hx.asarray(np.ones(3)))


def test_solve_shape_mismatch():
    with pytest.raises(ValueError, match="solve: x2 of shape"):
        hx.linalg.solve(hx.asarray(np.eye(3)), hx.asarray(np.ones(4)))
    with pytest.raises(ValueError, match="solve"):
        hx.linalg.solve(hx.asarray(np.eye(3)), hx.asarray(np.ones((2, 3))))
    with pytest.raises(ValueError, match="solve: the batch dimensions"):
        hx.linalg.solve(hx.asarray(np.ones((2, 3, 3))), hx.asarray(np.ones((4, 3, 1))))


@pytest.mark.parametrize("name, make", [
    ("inv", lambda: np.ones((2, 2))),
    ("solve", lambda: np.array([[1.0, 2.0], [2.0, 4.0]])),
    ("cholesky", lambda: -np.eye(3)),
    ("matrix_power", lambda: np.zeros((2, 2))),
])
def test_linalg_error_at_the_wait_names_the_function(name, make):
    a = hx.asarray(make())
    if name == "solve":
        r = hx.linalg.solve(a, hx.asarray(np.ones(2)))
    elif name == "matrix_power":
        r = hx.linalg.matrix_power(a, -1)
        name = "inv"
    else:
        r = getattr(hx.linalg, name)(a)
    # The call returned; the refusal surfaces when the result is waited on.
    with pytest.raises(hx.LinAlgError, match=name) as info:
        N(r)
    assert isinstance(info.value, np.linalg.LinAlgError) and isinstance(info.value, hx.ExecutionError)
    assert hx.linalg.LinAlgError is hx.LinAlgError
    # An operation failure: the input stays usable, only the result is poisoned.
    np.testing.assert_array_equal(N(a), make())
    np.testing.assert_array_equal(N(hx.add(a, 1)), make() + 1)


def test_batch_with_one_singular_matrix_fails_the_whole_result():
    a = np.stack([np.eye(2), np.zeros((2, 2))])
    with pytest.raises(np.linalg.LinAlgError, match="Singular"):
        N(hx.linalg.inv(hx.asarray(a)))


def test_bad_arguments():
    x = hx.asarray(np.eye(3))
    with pytest.raises(ValueError, match="qr: mode"):
        hx.linalg.qr(x, mode="raw")
    with pytest.raises(ValueError, match="matrix_norm: ord"):
        hx.linalg.matrix_norm(x, ord=3)
    with pytest.raises(TypeError, match="matrix_power: n"):
        hx.linalg.matrix_power(x, 1.5)
    with pytest.raises(ValueError, match="outer"):
        hx.linalg.outer(x, x)
    with pytest.raises(ValueError, match="cross"):
        hx.linalg.cross(hx.asarray(np.ones(4)), hx.asarray(np.ones(4)))
    with pytest.raises(ValueError, match="vecdot"):
        hx.linalg.vecdot(hx.asarray(np.ones(4)), hx.asarray(np.ones(3)))
    with pytest.raises(ValueError, match="tensordot"):
        hx.linalg.tensordot(x, hx.asarray(np.ones((4, 4))), axes=1)


def test_npu_local_input_is_refused_naming_the_function(rt):
    x = hx.asarray(np.eye(3), placement=hx.NpuLocal(rt.npu()))
    with pytest.raises(hx.UnsupportedError, match="inv"):
        hx.linalg.inv(x)


# --- where and when it runs ------------------------------------------------------------------------


def test_factorisations_run_on_the_compute_lane_in_every_gpu_placement():
    rt = hx.default_runtime()
    a = well_conditioned(1, (4, 4), np.float64)
    for placement in (hx.GpuLocal(), hx.HostVisible(), hx.Shared(rt.npu())):
        x = hx.asarray(a, placement=placement)
        x.block_until_ready()  # GpuLocal's upload finishes before the trace starts
        rt.start_trace(16)
        r = hx.linalg.solve(x, x)
        r.block_until_ready()
        events = rt.finish_trace().events
        assert [e["lane"] for e in events] == ["compute"]
        assert r.placement == placement
        np.testing.assert_allclose(N(r), np.eye(4), atol=1e-12)


def test_asynchronous_chain_without_host_waits():
    a = well_conditioned(2, (2, 5, 5), np.float32)
    b = rand(3, (2, 5, 2), np.float32)
    x = hx.multiply(hx.asarray(a), 2.0)  # pending input from a preceding device op
    s = hx.linalg.solve(x, hx.asarray(b))
    y = hx.matmul(x, s)                  # consumes the solve's result without a host wait
    q, r = hx.linalg.qr(y)
    z = hx.linalg.matmul(q, r)
    np.testing.assert_allclose(N(z), b, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(N(hx.linalg.inv(hx.linalg.inv(x))), 2 * a, rtol=1e-3)


def test_strided_and_broadcast_inputs():
    a = well_conditioned(4, (6, 6), np.float64)
    x = hx.asarray(a)[::2, ::2]  # strided view
    np.testing.assert_allclose(N(hx.linalg.inv(x)), np.linalg.inv(a[::2, ::2]))
    xt = hx.asarray(a).mT        # transposed view
    np.testing.assert_allclose(N(hx.linalg.det(xt)), np.linalg.det(a.T))
    bb = rand(5, (4, 6, 2), np.float64)
    np.testing.assert_allclose(N(hx.linalg.solve(hx.asarray(a), hx.asarray(bb))), np.linalg.solve(a, bb))


def test_numpy_dispatch_returns_device_arrays():
    a = well_conditioned(6, (3, 3), np.float64)
    x = hx.asarray(a)
    for f in (np.linalg.inv, np.linalg.det, np.linalg.cholesky, np.linalg.pinv, np.linalg.matrix_rank,
              np.linalg.norm, np.linalg.svdvals, np.linalg.eigvalsh):
        src = a @ a.T if f is np.linalg.cholesky else a
        got = f(hx.asarray(src))
        assert isinstance(got, hx.DeviceArray), f
        np.testing.assert_allclose(N(got), f(src), rtol=1e-10, err_msg=str(f))
    u, s, vh = np.linalg.svd(x)
    assert isinstance(s, hx.DeviceArray)
    assert isinstance(np.linalg.svd(x, compute_uv=False), hx.DeviceArray)
    assert isinstance(np.linalg.solve(x, x), hx.DeviceArray)
    assert isinstance(np.linalg.matrix_power(x, 3), hx.DeviceArray)
    np.testing.assert_allclose(N(np.linalg.qr(x, mode="r")), np.linalg.qr(a, mode="r"), rtol=1e-10)
    np.testing.assert_allclose(N(np.linalg.eigh(x, UPLO="U").eigenvalues), np.linalg.eigh(a, UPLO="U").eigenvalues,
                               rtol=1e-10)
    np.testing.assert_allclose(N(np.tensordot(x, x)), np.tensordot(a, a))
    assert hx.linalg.matmul is hx.matmul


def test_empty_matrices():
    assert N(hx.linalg.det(hx.asarray(np.zeros((2, 0, 0))))).tolist() == [1.0, 1.0]
    u, s, vh = hx.linalg.svd(hx.asarray(np.zeros((3, 0))))
    np.testing.assert_array_equal(N(u), np.eye(3))
    assert s.shape == (0,) and vh.shape == (0, 0)
    q, r = hx.linalg.qr(hx.asarray(np.zeros((3, 0))), mode="complete")
    np.testing.assert_array_equal(N(q), np.eye(3))
    assert hx.linalg.inv(hx.asarray(np.zeros((0, 0)))).shape == (0, 0)


def test_results_stay_on_the_inputs_runtime():
    rt = hx.Runtime()
    a = well_conditioned(7, (3, 3), np.float64)
    x = hx.asarray(a, placement=hx.Shared(rt.npu()))
    for r in (hx.linalg.inv(x), hx.linalg.matrix_power(x, 0), hx.linalg.svd(x).U):
        assert r.placement == hx.Shared(rt.npu())
    np.testing.assert_array_equal(N(hx.linalg.matrix_power(x, 0)), np.eye(3))


# --- issue 28: tall QR in O(mn) memory, lstsq ---------------------------------------------------------------

_QR_PEAK = r"""
import resource, sys
import numpy as np
import hrxarray as hx
m, n = 20000, 20
a = hx.asarray(np.random.default_rng(0).standard_normal((m, n)).astype(np.float32))
hx.linalg.qr(hx.asarray(np.ones((4, 2), np.float32)))[0].block_until_ready()  # LAPACK loaded, pools warm
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
q, r = hx.linalg.qr(a)
q.block_until_ready(); r.block_until_ready()
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print((after - before) * 1024)
"""


def test_reduced_qr_of_a_tall_matrix_uses_o_mn_memory():
    """20,000 x 20 float32: the m x m buffer of old was 1.6 GB; O(mn) is a few MB (1.6 MB per copy)."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _QR_PEAK], capture_output=True, text=True, check=True)
    grown = int(out.stdout.split()[-1])
    assert grown < 64 * 2**20, f"peak RSS grew by {grown / 2**20:.0f} MiB"


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_reduced_qr_tall_against_numpy(dt):
    a = rand(3, (3000, 7), dt)
    q, r = (N(v) for v in hx.linalg.qr(hx.asarray(a)))
    assert q.shape == (3000, 7) and r.shape == (7, 7)
    np.testing.assert_allclose(q @ r, a, **tol(dt))
    np.testing.assert_allclose(q.T @ q, np.eye(7), **tol(dt))
    np.testing.assert_array_equal(np.tril(r, -1), 0)
    np.testing.assert_allclose(np.abs(r), np.abs(np.linalg.qr(a)[1]), **tol(dt))


def _check_lstsq(a, b, rcond=None, dt=np.float64):
    got = hx.linalg.lstsq(hx.asarray(a), hx.asarray(b), rcond=rcond)
    want = np.linalg.lstsq(a, b, rcond=rcond)
    x, res, rank, s = got
    assert rank == want[2] and isinstance(rank, int)
    assert x.shape == want[0].shape and res.shape == want[1].shape and s.shape == want[3].shape
    assert x.dtype == want[0].dtype and res.dtype == want[1].dtype and s.dtype == want[3].dtype
    t = dict(rtol=2e-3, atol=2e-3) if np.dtype(dt) in (np.float32, np.complex64) else dict(rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(N(x), want[0], **t)
    np.testing.assert_allclose(N(res), want[1], **t)
    np.testing.assert_allclose(N(s), want[3], **t)


@pytest.mark.parametrize("dt", LAPACK_DTYPES)
@pytest.mark.parametrize("m, n, k", [(10, 3, None), (10, 3, 4), (3, 10, None), (4, 4, 2), (7, 1, 1)])
def test_lstsq_against_numpy(dt, m, n, k):
    a = rand(1, (m, n), dt)
    b = rand(2, (m,) if k is None else (m, k), dt)
    _check_lstsq(a, b, dt=dt)


@pytest.mark.parametrize("rcond", [None, -1, 1e-3])
def test_lstsq_rank_deficient_gives_numpys_minimum_norm_solution(rcond):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((12, 3)) @ rng.standard_normal((3, 5))  # rank 3 of 5 columns
    b = rng.standard_normal((12, 2))
    _check_lstsq(a, b, rcond=rcond)
    x, res, rank, _ = hx.linalg.lstsq(hx.asarray(a), hx.asarray(b))
    assert rank == 3 and res.shape == (0,)  # NumPy: no residuals when rank < N


@given(seeds, st.integers(1, 8), st.integers(1, 5), st.one_of(st.none(), st.integers(1, 3)))
def test_lstsq_hypothesis(seed, m, n, k):
    a = rand(seed, (m, n), np.float64)
    b = rand(seed + 1, (m,) if k is None else (m, k), np.float64)
    _check_lstsq(a, b)


def test_lstsq_dispatch_mixed_inputs_and_integer_promotion():
    a = np.arange(12).reshape(6, 2) % 5
    b = np.arange(6)
    x, res, rank, s = np.linalg.lstsq(hx.asarray(a), b, rcond=None)  # __array_function__: a NumPy b is uploaded
    assert isinstance(x, hx.DeviceArray) and x.dtype == np.float64
    want = np.linalg.lstsq(a.astype(float), b.astype(float), rcond=None)
    np.testing.assert_allclose(N(x), want[0], rtol=1e-10)
    np.testing.assert_allclose(N(res), want[1], rtol=1e-10)
    # xarray's polyfit: a NumPy Vandermonde matrix, DeviceArray data
    lhs = np.vander(np.linspace(0, 1, 9), 3)
    rhs = hx.asarray(np.random.default_rng(1).standard_normal((9, 4)))
    coeffs = np.linalg.lstsq(lhs, rhs, rcond=None)[0]
    np.testing.assert_allclose(N(coeffs), np.linalg.lstsq(lhs, N(rhs), rcond=None)[0], rtol=1e-10)


def test_lstsq_float16_rounds_back():
    a = rand(3, (8, 3), np.float16)
    b = rand(4, (8,), np.float16)
    x, res, rank, s = hx.linalg.lstsq(hx.asarray(a), hx.asarray(b))
    assert x.dtype == np.float16 and s.dtype == np.float16 and rank == 3
    np.testing.assert_allclose(N(x).astype(float), np.linalg.lstsq(a.astype(float), b.astype(float))[0], atol=2e-2)


@pytest.mark.parametrize("a_shape, b_shape, match", [
    ((6,), (6,), "2-dimensional"), ((2, 6, 3), (6,), "2-dimensional"),
    ((6, 3), (5,), "incompatible"), ((6, 3), (6, 2, 2), "1- or 2-dimensional"),
])
def test_lstsq_bad_shapes_raise_linalg_error(a_shape, b_shape, match):
    with pytest.raises(np.linalg.LinAlgError, match=match):
        hx.linalg.lstsq(hx.asarray(np.ones(a_shape)), hx.asarray(np.ones(b_shape)))
    with pytest.raises(TypeError, match="rcond"):
        hx.linalg.lstsq(hx.asarray(np.ones((3, 2))), hx.asarray(np.ones(3)), rcond="warn")
