"""hx.einsum's NumPy extras against np.einsum: the sublist form, dtype= with casting=, out=."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

import hrxarray as hx

DTYPES = [np.dtype(t) for t in (np.int32, np.float32, np.float64, np.complex64)]


def _values(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    v = rng.integers(-4, 5, shape)
    return (v + 1j * rng.integers(-4, 5, shape) if np.dtype(dtype).kind == "c" else v).astype(dtype)


def _check(got, want):
    assert isinstance(got, hx.DeviceArray)
    g = hx.to_numpy(got)
    assert g.shape == want.shape and g.dtype == want.dtype
    np.testing.assert_array_equal(g, want)  # integer-valued data: exact in every dtype used here


@given(data=st.data(), dtype=st.sampled_from(DTYPES))
def test_sublist_form_matches_numpy(data, dtype):
    pool = data.draw(st.lists(st.integers(0, 51), min_size=4, max_size=4, unique=True))
    sizes = {k: data.draw(st.integers(1, 3)) for k in pool}
    n_ops = data.draw(st.integers(1, 3))
    subs = [data.draw(st.lists(st.sampled_from(pool), max_size=3)) for _ in range(n_ops)]
    ops = [_values(tuple(sizes[k] for k in s), dtype, i) for i, s in enumerate(subs)]
    args = [v for pair in zip(ops, subs) for v in pair]
    hx_args = [v for pair in zip([hx.asarray(o) for o in ops], subs) for v in pair]
    used = sorted(set().union(*map(set, subs)))
    if data.draw(st.booleans()):  # an explicit output sublist
        out = data.draw(st.lists(st.sampled_from(used), unique=True)) if used else []
        args.append(out)
        hx_args.append(out)
    optimize = data.draw(st.booleans())
    want = np.einsum(*args)
    _check(hx.einsum(*hx_args, optimize=optimize), np.asarray(want))
    _check(np.einsum(*hx_args), np.asarray(want))  # NumPy's spelling dispatches


def test_sublist_ellipsis_and_numpy_integers():
    a = _values((2, 3, 4), np.float64, 0)
    b = _values((4, 5), np.float64, 1)
    x, y = hx.asarray(a), hx.asarray(b)
    _check(hx.einsum(x, [Ellipsis, 1], y, [1, 2], [Ellipsis, 2]), np.einsum(a, [Ellipsis, 1], b, [1, 2],
                                                                            [Ellipsis, 2]))
    _check(hx.einsum(x, [np.int64(0), 1, 2]), np.einsum(a, [np.int64(0), 1, 2]))
    _check(hx.einsum(x, [30, 1, 2]), np.einsum(a, [30, 1, 2]))  # 30 is 'e', after 'B' and 'C'
    _check(hx.einsum(x, (0, 1, 0 + 2), ()), np.asarray(np.einsum(a, (0, 1, 2), ())))


@given(src=st.sampled_from(DTYPES), dst=st.sampled_from(DTYPES + [np.dtype(np.complex128)]),
       casting=st.sampled_from(["no", "equiv", "safe", "same_kind", "unsafe"]), spec=st.sampled_from(
           ["ij,jk->ik", "ij->", "ij,ij->ij", "ij->j", "i,j->ij"]))
@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
def test_dtype_and_casting_match_numpy(src, dst, casting, spec):
    # Not single-operand views ("ij->ji", "ii->i"): NumPy 2.4 returns those as views of the operand,
    # ignoring dtype= and casting=; hx honours dtype= there too (test_dtype_of_a_view below).
    shapes = {"ij": (3, 3), "jk": (3, 3), "i": (3,), "j": (3,)}
    ops = [_values(shapes[t], src, i) for i, t in enumerate(spec.split("->")[0].split(","))]
    xs = [hx.asarray(o) for o in ops]
    try:
        want = np.asarray(np.einsum(spec, *ops, dtype=dst, casting=casting))
    except TypeError:
        with pytest.raises(TypeError, match="einsum: cannot cast operand 0"):
            hx.einsum(spec, *xs, dtype=dst, casting=casting)
        return
    _check(hx.einsum(spec, *xs, dtype=dst, casting=casting), want)


@given(src=st.sampled_from(DTYPES), dst=st.sampled_from(DTYPES + [np.dtype(np.complex128)]),
       casting=st.sampled_from(["safe", "same_kind", "unsafe"]), spec=st.sampled_from(
           ["ij,jk->ik", "ij->j", "i,j->ij", "ij->ji"]))
@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
def test_out_matches_numpy(src, dst, casting, spec):
    shapes = {"ij": (2, 3), "jk": (3, 4), "i": (2,), "j": (3,)}
    ops = [_values(shapes[t], src, i) for i, t in enumerate(spec.split("->")[0].split(","))]
    shape = np.einsum(spec, *ops).shape
    want_out = np.zeros(shape, dst)
    out = hx.zeros(shape, dtype=dst)
    try:
        np.einsum(spec, *ops, out=want_out, casting=casting)
    except TypeError:
        with pytest.raises(TypeError, match="einsum: cannot cast the result"):
            hx.einsum(spec, *[hx.asarray(o) for o in ops], out=out, casting=casting)
        _check(out, np.zeros(shape, dst))  # a refused out= is left as it was
        return
    got = hx.einsum(spec, *[hx.asarray(o) for o in ops], out=out, casting=casting)
    assert got is out
    _check(out, want_out)


def test_dtype_of_a_view():
    a = _values((3, 3), np.int32, 0)
    _check(hx.einsum("ij->ji", hx.asarray(a), dtype=np.float64), a.T.astype(np.float64))
    _check(hx.einsum("ii->i", hx.asarray(a), dtype=np.complex128), np.diagonal(a).astype(np.complex128))
    with pytest.raises(TypeError, match="einsum: cannot cast operand 0 from int32 to float32"):
        hx.einsum("ij->ji", hx.asarray(a), dtype=np.float32, casting="no")


def test_out_overlapping_an_operand_and_errors():
    a = np.arange(9.0).reshape(3, 3)
    x = hx.asarray(a)
    assert np.einsum("ij->ji", x, out=x) is x  # NumPy's dispatch passes out= on
    _check(x, a.T.copy())
    y = hx.asarray(a)
    cases = [
        (ValueError, "einsum: out has shape", lambda: hx.einsum("ij->i", y, out=hx.zeros((2,)))),
        (TypeError, "einsum: out must be a DeviceArray", lambda: hx.einsum("ij->i", y, out=np.zeros(3))),
        (ValueError, "einsum: casting must be", lambda: hx.einsum("ij->i", y, casting="bad")),
        (TypeError, "einsum: 'nope' is not a dtype", lambda: hx.einsum("ij->i", y, dtype="nope")),
        (ValueError, "einsum: subscript 52 in sublist 0", lambda: hx.einsum(y, [0, 52])),
        (TypeError, "einsum: sublist 0 must be a list", lambda: hx.einsum(y, 5)),
        (TypeError, "einsum: sublist 0 holds 'a'", lambda: hx.einsum(y, [0, "a"])),
        (ValueError, "einsum: order", lambda: np.einsum("ij->i", y, order="F")),
    ]
    for exc, text, call in cases:
        with pytest.raises(exc, match=text):
            call()
    _check(y, a)
