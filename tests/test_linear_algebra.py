"""matrix_transpose, tensordot, vecdot, dot and einsum against NumPy (integer-valued data: exact in every dtype)."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import hrxarray as hx

DTYPES = [np.dtype(t) for t in (bool, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                                np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128)]


def _values(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    v = rng.integers(0, 2 if np.dtype(dtype).kind == "b" else 4, shape)
    if np.dtype(dtype).kind == "c":
        v = v + 1j * rng.integers(-2, 3, shape)
    return v.astype(dtype)


def _check(got, want):
    assert isinstance(got, hx.DeviceArray)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(hx.to_numpy(got), want)


@given(shape=hnp.array_shapes(min_dims=2, max_dims=4, max_side=4), dtype=st.sampled_from(DTYPES))
def test_matrix_transpose(shape, dtype):
    a = _values(shape, dtype)
    x = hx.asarray(a)
    got = hx.matrix_transpose(x)
    _check(got, np.matrix_transpose(a))
    assert got._base_id == x._base_id
    _check(np.matrix_transpose(x), np.matrix_transpose(a))


def test_matrix_transpose_needs_two_dimensions():
    with pytest.raises(ValueError, match="matrix_transpose: x must have at least 2 dimensions"):
        hx.matrix_transpose(hx.asarray(np.arange(3)))


@given(dtype=st.sampled_from(DTYPES), data=st.data())
def test_tensordot_matches_numpy(dtype, data):
    free_a = data.draw(st.lists(st.integers(0, 3), max_size=2))
    free_b = data.draw(st.lists(st.integers(0, 3), max_size=2))
    summed = data.draw(st.lists(st.integers(0, 3), max_size=2))
    a = _values(tuple(free_a + summed), dtype, 1)
    b = _values(tuple(summed + free_b), dtype, 2)
    n = len(summed)
    _check(hx.tensordot(hx.asarray(a), hx.asarray(b), axes=n), np.tensordot(a, b, axes=n))
    # Explicit pairs, in a shuffled order on both sides.
    perm = data.draw(st.permutations(range(n)))
    ia = [len(free_a) + p for p in perm]
    ib = list(perm)
    _check(hx.tensordot(hx.asarray(a), hx.asarray(b), axes=(ia, ib)), np.tensordot(a, b, axes=(ia, ib)))
    _check(np.tensordot(hx.asarray(a), hx.asarray(b), n), np.tensordot(a, b, n))


@given(dtype=st.sampled_from(DTYPES), shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3,
                                                                             max_side=3),
       n=st.integers(0, 4), data=st.data())
def test_vecdot_matches_numpy(dtype, shapes, n, data):
    s1, s2 = (s + (n,) for s in shapes.input_shapes)
    a, b = _values(s1, dtype, 3), _values(s2, dtype, 4)
    _check(hx.vecdot(hx.asarray(a), hx.asarray(b)), np.vecdot(a, b))
    _check(np.vecdot(hx.asarray(a), hx.asarray(b)), np.vecdot(a, b))
    nd = min(len(s1), len(s2))
    axis = data.draw(st.integers(-nd, -1))
    a2, b2 = np.moveaxis(a, -1, axis), np.moveaxis(b, -1, axis)
    _check(hx.vecdot(hx.asarray(a2), hx.asarray(b2), axis=axis), np.vecdot(a2, b2, axis=axis))


def test_vecdot_conjugates_x1():
    a = np.array([1 + 2j, 3 - 1j], np.complex64)
    b = np.array([2 - 1j, 1j], np.complex64)
    _check(hx.vecdot(hx.asarray(a), hx.asarray(b)), np.vecdot(a, b))
    assert hx.to_numpy(hx.vecdot(hx.asarray(a), hx.asarray(b))) == np.sum(np.conj(a) * b)


@pytest.mark.parametrize("sa,sb", [((), ()), ((), (3,)), ((2, 3), ()), ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)),
                                   ((2, 3), (3, 4)), ((2, 2, 3), (3,)), ((2, 2, 3), (4, 3, 2)), ((0, 3), (3, 0))])
def test_dot_matches_numpy(sa, sb):
    a, b = _values(sa, np.int32, 5), _values(sb, np.int32, 6)
    _check(hx.dot(hx.asarray(a), hx.asarray(b)), np.dot(a, b))
    _check(np.dot(hx.asarray(a), hx.asarray(b)), np.dot(a, b))
    if sa:
        _check(hx.asarray(a).dot(hx.asarray(b)), a.dot(b))


def test_dot_out():
    a, b = _values((2, 3), np.float32), _values((3, 2), np.float32)
    out = hx.zeros((2, 2), np.float32)
    assert hx.dot(hx.asarray(a), hx.asarray(b), out=out) is out
    _check(out, a @ b)
    with pytest.raises(ValueError, match="dot: out must have shape"):
        hx.dot(hx.asarray(a), hx.asarray(b), out=hx.zeros((2, 3), np.float32))


EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ij->ji", [(2, 3)]), ("ij", [(2, 3)]),
    ("ji", [(2, 3)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("iii->i", [(2, 2, 2)]), ("iij->ij", [(2, 2, 3)]),
    ("ij->", [(2, 3)]), ("ij->i", [(2, 3)]), ("i,i->", [(4,), (4,)]), ("i,i", [(4,), (4,)]),
    ("i,j->ij", [(2,), (3,)]), ("i,j", [(2,), (3,)]), ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
    ("bij,bkj->bik", [(2, 2, 3), (2, 4, 3)]), ("ijk,jil->kl", [(2, 3, 4), (3, 2, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]), ("ab,bc,cd,de->ae", [(2, 3), (3, 2), (2, 4), (4, 1)]),
    ("...ij,...jk->...ik", [(2, 2, 3), (3, 4)]), ("...ij,...jk", [(5, 2, 3), (5, 3, 4)]),
    ("i...->...", [(3, 2, 2)]), ("...i->...", [(2, 3)]), ("...,...", [(2, 3), (3,)]), ("ij...,jk...->ik...", [(2, 3, 2), (3, 1, 2)]),
    ("ij,ij->ij", [(2, 1), (2, 3)]), ("ij,ij->", [(2, 3), (2, 3)]), ("ii,i->i", [(3, 3), (3,)]),
    ("ij,jk->ki", [(2, 3), (3, 4)]), ("i,i,i->i", [(3,), (3,), (3,)]), ("ij,kl->ijkl", [(2, 1), (3, 2)]),
    ("Ab,bC->AC", [(2, 3), (3, 2)]), ("i->", [(0,)]), ("ij,jk->ik", [(2, 0), (0, 3)]), (",->", [(), ()]),
    ("i,->i", [(3,), ()]), (" ij , jk -> ik ", [(2, 3), (3, 4)]), ("ijk,kji->", [(2, 3, 4), (4, 3, 2)]),
]


@pytest.mark.parametrize("optimize", [False, True])
@pytest.mark.parametrize("spec,shapes", EINSUM)
def test_einsum_matches_numpy(spec, shapes, optimize):
    for dtype in (np.int64, np.float32, np.complex128, np.uint8, bool):
        ops = [_values(s, dtype, i) for i, s in enumerate(shapes)]
        _check(hx.einsum(spec, *[hx.asarray(o) for o in ops], optimize=optimize), np.einsum(spec, *ops))
    ops = [_values(s, np.float64, i) for i, s in enumerate(shapes)]
    _check(np.einsum(spec, *[hx.asarray(o) for o in ops]), np.einsum(spec, *ops))


@given(data=st.data(), dtype=st.sampled_from(DTYPES))
def test_einsum_random_contractions(data, dtype):
    letters = "abcde"
    sizes = {c: data.draw(st.integers(1, 3)) for c in letters}
    n_ops = data.draw(st.integers(1, 3))
    terms = [data.draw(st.lists(st.sampled_from(letters), max_size=3)) for _ in range(n_ops)]
    used = sorted(set().union(*terms))
    out = data.draw(st.lists(st.sampled_from(used), unique=True)) if used else []
    spec = ",".join("".join(t) for t in terms) + "->" + "".join(out)
    ops = [_values(tuple(sizes[c] for c in t), dtype, i) for i, t in enumerate(terms)]
    _check(hx.einsum(spec, *[hx.asarray(o) for o in ops], optimize=data.draw(st.booleans())), np.einsum(spec, *ops))


def test_einsum_mixed_dtypes_and_bfloat16():
    a, b = _values((2, 3), np.int8), _values((3, 2), np.float32)
    _check(hx.einsum("ij,jk", hx.asarray(a), hx.asarray(b)), np.einsum("ij,jk", a, b))
    # bfloat16 contracts as hx.matmul does: exact products, float32 accumulation and result.
    a16, b16 = a.astype(ml_dtypes.bfloat16), b.astype(ml_dtypes.bfloat16)
    got = hx.einsum("ij,jk->ik", hx.asarray(a16), hx.asarray(b16))
    _check(got, hx.to_numpy(hx.matmul(hx.asarray(a16), hx.asarray(b16))))
    _check(hx.einsum("ij->j", hx.asarray(a16)), np.einsum("ij->j", a.astype(np.float32)).astype(ml_dtypes.bfloat16))
    # Products without a sum (outer, elementwise) are float32 too, and exact.
    v = np.array([1.5, 3.0078125, -2.0], ml_dtypes.bfloat16)
    got = hx.einsum("i,j->ij", hx.asarray(v), hx.asarray(v))
    _check(got, np.outer(v.astype(np.float32), v.astype(np.float32)))
    _check(hx.einsum("i,i->i", hx.asarray(v), hx.asarray(v)), v.astype(np.float32) ** 2)


def test_einsum_diagonal_is_a_view():
    x = hx.asarray(np.arange(9.0).reshape(3, 3))
    d = hx.einsum("ii->i", x)
    assert d._base_id == x._base_id
    _check(d, np.array([0.0, 4.0, 8.0]))
    same = hx.einsum("ij->ij", x)
    assert same is not x and same._base_id == x._base_id


def test_refused_einsum_changes_nothing(rt):
    place = hx.Shared(rt.npu())
    x = hx.asarray(np.ones((2, 3), np.int8), placement=place)
    y = hx.asarray(np.ones((3, 4), np.float32), placement=place)
    before = rt.statistics().allocations
    # Mixed dtypes would be converted first: the bad output subscript is found before that.
    with pytest.raises(ValueError, match="einsum: output subscript 'q'"):
        hx.einsum("ij,jk->q", x, y)
    with pytest.raises(ValueError, match="tensordot: shape mismatch"):
        hx.tensordot(x, y, axes=([0], [0]))
    assert rt.statistics().allocations == before


def test_contractions_from_pending_work():
    a = np.arange(12.0).reshape(3, 4)
    y = hx.multiply(hx.asarray(a), 2.0)  # not waited for
    _check(hx.einsum("ij,kj->ik", y, y), np.einsum("ij,kj->ik", a * 2, a * 2))
    _check(hx.tensordot(y, y, axes=([1], [1])), np.tensordot(a * 2, a * 2, axes=([1], [1])))
    _check(hx.vecdot(y, y), np.vecdot(a * 2, a * 2))
    _check(hx.dot(y, hx.matrix_transpose(y)), (a * 2) @ (a * 2).T)


def test_errors_name_the_function_and_argument():
    x = hx.asarray(np.ones((2, 3)))
    y = hx.asarray(np.ones((4, 5)))
    cases = [
        (ValueError, "tensordot: shape mismatch", lambda: hx.tensordot(x, y, axes=1)),
        (ValueError, "tensordot: axes=3", lambda: hx.tensordot(x, y, axes=3)),
        (ValueError, "tensordot: axes", lambda: hx.tensordot(x, y, axes=([0, 1], [0]))),
        (np.exceptions.AxisError, "tensordot", lambda: hx.tensordot(x, y, axes=([5], [0]))),
        (ValueError, "vecdot: x1 .* must have the same size", lambda: hx.vecdot(x, y)),
        (np.exceptions.AxisError, "vecdot", lambda: hx.vecdot(x, x, axis=2)),
        (ValueError, "dot: shape mismatch", lambda: hx.dot(x, x)),
        (ValueError, "einsum: 1 operand terms", lambda: hx.einsum("ij", x, x)),
        (ValueError, "einsum: term 0 'ijk' has 3 subscripts", lambda: hx.einsum("ijk", x)),
        (ValueError, "einsum: invalid subscript '1'", lambda: hx.einsum("i1", x)),
        (ValueError, "einsum: output subscript 'k' does not appear", lambda: hx.einsum("ij->k", x)),
        (ValueError, "einsum: output subscript 'i' appears more than once", lambda: hx.einsum("ij->ii", x)),
        (ValueError, "einsum: subscript 'i' has size 4 in operand 1", lambda: hx.einsum("ij,ij", x, y)),
        (ValueError, "einsum: subscript 'i' is repeated in operand 0 with sizes 2 and 3", lambda: hx.einsum("ii", x)),
        (ValueError, "einsum: subscript 'i' is repeated in operand 0 with sizes 1 and 3",
         lambda: hx.einsum("ii", hx.zeros((1, 3)))),
        (ValueError, "einsum: output subscripts .* must contain '...'", lambda: hx.einsum("...j->j", x)),
        (ValueError, "einsum: invalid ellipsis", lambda: hx.einsum("i..j", x)),
        (ValueError, "einsum: optimize", lambda: hx.einsum("ij", x, optimize="dp")),
        (TypeError, "einsum: sublist 0 holds", lambda: hx.einsum([0, 1], x)),
    ]
    for exc, text, call in cases:
        with pytest.raises(exc, match=text):
            call()


# --- matrix-vector products (issue 28: Note [Matrix-vector]) -------------------------------------------------


def _gemm_bits(a, b, portable):
    """The general kernel's result for dense copies of a and b (the reference bits)."""
    from hrxarray._core import numerics as raw

    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    (m, k), n = a.shape, b.shape[1]
    c = np.full((m, n), 7, a.dtype)
    raw._matmul_typed(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8), c.reshape(-1).view(np.uint8),
                      a.dtype.name, a.dtype.name, m, k, n, None, None, portable=portable)
    return c


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("m, k", [(1, 1), (13, 7), (37, 800), (517, 1000), (1, 900)])
@pytest.mark.parametrize("layout", ["rows", "transposed", "vector_left"])
def test_matvec_gives_the_general_kernels_bits_in_every_layout(dtype, m, k, layout):
    rng = np.random.default_rng(m * 1000 + k)
    v = rng.standard_normal(k).astype(dtype)
    if layout == "rows":
        a = rng.standard_normal((m, k)).astype(dtype)
        got = hx.matmul(hx.asarray(a), hx.asarray(v))
    elif layout == "transposed":  # a view of a (k, m) array: columns contiguous
        base = rng.standard_normal((k, m)).astype(dtype)
        a = base.T
        got = hx.matmul(hx.asarray(base).mT, hx.asarray(v))
    else:  # v @ B with B (k, m): B^T @ v
        b = rng.standard_normal((k, m)).astype(dtype)
        a = b.T
        got = hx.matmul(hx.asarray(v), hx.asarray(b))
    got = hx.to_numpy(got)
    assert got.shape == (m,) and got.dtype == dtype
    for portable in (False, True):  # the same bits as the GEMM on the vector and the portable paths
        np.testing.assert_array_equal(got, _gemm_bits(a, v[:, None], portable)[:, 0])
    exact = a.astype(np.float64) @ v.astype(np.float64)
    bound = (4 * np.sqrt(k) + 8) * np.finfo(dtype).eps * (np.abs(a).astype(np.float64) @ np.abs(v))
    assert np.all(np.abs(got - exact) <= bound + 1e-300)


def test_matvec_strided_and_mixed_inputs_fall_back_correctly():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((40, 60))
    v = rng.standard_normal(60)
    x = hx.asarray(a)[::2, ::3]  # neither layout: the general path
    np.testing.assert_allclose(hx.to_numpy(hx.matmul(x, hx.asarray(v[::3]))), a[::2, ::3] @ v[::3], rtol=1e-12)
    mixed = hx.matmul(hx.asarray(a.astype(np.float32)), hx.asarray(v))  # float32 @ float64 -> float64
    assert mixed.dtype == np.float64
    np.testing.assert_allclose(hx.to_numpy(mixed), a.astype(np.float32).astype(float) @ v, rtol=1e-12)
    with pytest.raises(ValueError, match="mismatch"):
        hx.matmul(hx.asarray(a), hx.asarray(v[:5]))
