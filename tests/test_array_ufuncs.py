"""hx ufuncs, operators, reductions, where and the NumPy protocols, against NumPy (with ml_dtypes)."""

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import hrxarray as hx

BF16 = np.dtype(ml_dtypes.bfloat16)
NAMES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
         "float32", "float64")
DTYPES = [np.dtype(n) for n in NAMES] + [BF16]
FLOATS = [np.dtype("float16"), BF16, np.dtype("float32"), np.dtype("float64")]

BINARY = ["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "power", "maximum", "minimum",
          "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
          "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"]
UNARY_EXACT = ["negative", "positive", "absolute", "sign", "sqrt", "square", "floor", "ceil", "trunc", "rint",
               "logical_not", "invert", "isnan", "isinf", "isfinite"]
UNARY_LIBM = ["exp", "log", "log1p", "expm1", "sin", "cos", "tan", "tanh"]


def values(dtype, shape, seed, special=True):
    """Inputs that exercise a dtype: small integers (no overflow surprises in shifts and powers), and
    floats with zeros, infinities, NaN and subnormals."""
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        lo = 0 if dtype.kind == "u" else -9
        return rng.integers(lo, 10, shape).astype(dtype)
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    if special and x.size >= 8:
        flat = x.reshape(-1)
        flat[:8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, 2.5, -2.5]
    return x.astype(dtype)


def ulp_distance(a, b):
    """Units in the last place between equal-dtype float arrays (NaN == NaN, inf == inf)."""
    a, b = np.asarray(a), np.asarray(b)
    bits = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
    ia = a.view(bits).astype(np.int64)
    ib = b.view(bits).astype(np.int64)
    top = np.int64(1) << (8 * a.dtype.itemsize - 1)
    ia = np.where(ia < 0, -(ia + top), ia)  # sign-magnitude -> two's complement ordering
    ib = np.where(ib < 0, -(ib + top), ib)
    d = np.abs(ia - ib)
    both_nan = np.isnan(a.astype(np.float64)) & np.isnan(b.astype(np.float64))
    return np.where(both_nan, 0, d)


def check_equal(got, want, ulps=0):
    got = hx.to_numpy(got) if isinstance(got, hx.DeviceArray) else np.asarray(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype.kind == "f" or want.dtype == BF16:
        if ulps == 0:
            g = got.astype(np.float64)
            w = want.astype(np.float64)
            ok = (g == w) | (np.isnan(g) & np.isnan(w))
            # zeros must carry NumPy's sign too
            ok &= (np.signbit(g) == np.signbit(w)) | np.isnan(w)
            assert ok.all(), f"mismatch at {np.argwhere(~ok)[:5].tolist()}: got {got[~ok][:5]} want {want[~ok][:5]}"
        else:
            d = ulp_distance(got, want)
            assert d.max(initial=0) <= ulps, f"{d.max()} ulps apart: got {got[d > ulps][:5]} want {want[d > ulps][:5]}"
    else:
        assert np.array_equal(got, want), f"got {got} want {want}"


def np_call(name, *args, **kw):
    with np.errstate(all="ignore"):
        return getattr(np, name)(*args, **kw)


def np_raises(fn):
    try:
        with np.errstate(all="ignore"):
            fn()
    except (TypeError, ValueError, np.exceptions.DTypePromotionError):
        return True
    return False


# --- elementwise against NumPy, every dtype ---------------------------------------------------------


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test01_binary_same_dtype(name, dtype):
    a = values(dtype, (4, 5), 1)
    b = values(dtype, (4, 5), 2)
    if name == "power" and dtype.kind in "iu":
        b = np.abs(b) % 4  # negative integer powers fail (see test_array_futures)
    if name in ("left_shift", "right_shift") and dtype.kind in "iu":
        b = np.abs(b) % (dtype.itemsize * 8)
    fn = getattr(hx, name)
    if np_raises(lambda: np_call(name, a, b)):
        with pytest.raises(TypeError):
            fn(hx.asarray(a), hx.asarray(b))
        return
    want = np_call(name, a, b)
    check_equal(fn(hx.asarray(a), hx.asarray(b)), want, ulps=1 if name == "power" else 0)


@pytest.mark.parametrize("name", UNARY_EXACT)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test02_unary_exact(name, dtype):
    a = values(dtype, (3, 7), 3)
    if name == "sqrt" and dtype.kind in "iu":
        a = np.abs(a).astype(dtype)
    fn = getattr(hx, name)
    if np_raises(lambda: np_call(name, a)):
        with pytest.raises(TypeError):
            fn(hx.asarray(a))
        return
    check_equal(fn(hx.asarray(a)), np_call(name, a))


@pytest.mark.parametrize("name", UNARY_LIBM)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test03_unary_transcendental_within_ulps(name, dtype):
    a = values(dtype, (64,), 4)
    if dtype.kind == "f" or dtype == BF16:
        a = a.astype(np.float32).clip(-20, 20).astype(dtype)  # keep tan/exp away from overflow edges
    want = np_call(name, a)
    got = getattr(hx, name)(hx.asarray(a))
    # libm and NumPy's SIMD implementations differ by a few ulps in float32/float64;
    # float16 and bfloat16 results round once from float32.
    ulps = 1 if want.dtype in (np.float16, BF16) else 4
    check_equal(got, want, ulps=ulps)


@pytest.mark.parametrize("a_dtype", DTYPES, ids=str)
def test04_binary_promotion_matches_numpy(a_dtype):
    for b_dtype in DTYPES:
        a = np.ones(3, a_dtype)
        b = np.ones(3, b_dtype)
        for name in ("add", "multiply", "divide", "maximum", "equal", "bitwise_or"):
            fn = getattr(hx, name)
            if np_raises(lambda: np_call(name, a, b)):
                with pytest.raises(TypeError):
                    fn(hx.asarray(a), hx.asarray(b))
            else:
                assert fn(hx.asarray(a), hx.asarray(b)).dtype == np_call(name, a, b).dtype, (name, a_dtype, b_dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("scalar", [True, 2, -3, 2.5, 1e20])
def test05_python_scalars_are_weak_as_in_nep50(dtype, scalar):
    a = values(dtype, (5,), 5, special=False)
    for name in ("add", "multiply", "less", "maximum"):
        try:
            with np.errstate(all="ignore"):
                want = np_call(name, a, scalar)
        except (OverflowError, TypeError) as e:
            with pytest.raises(type(e)):
                getattr(hx, name)(hx.asarray(a), scalar)
            continue
        check_equal(getattr(hx, name)(hx.asarray(a), scalar), want)
        check_equal(getattr(hx, name)(scalar, hx.asarray(a)), np_call(name, scalar, a))


def test06_out_of_range_python_integers():
    u8 = hx.asarray(np.array([0, 5, 255], np.uint8))
    with pytest.raises(OverflowError, match="out of bounds for uint8"):
        u8 + 300
    with pytest.raises(OverflowError, match="out of bounds for uint8"):
        u8 - (-1)
    check_equal(u8 == -1, np.array([0, 5, 255], np.uint8) == -1)
    check_equal(u8 < 1000, np.array([0, 5, 255], np.uint8) < 1000)
    check_equal(u8 > 2 ** 70, np.array([0, 5, 255], np.uint8) > 2 ** 70)


def test07_scalars_only_and_numpy_operands():
    check_equal(hx.add(1, 2), np.add(1, 2))
    check_equal(hx.multiply(2.5, True), np.asarray(np.multiply(2.5, True)))
    x = hx.asarray(np.arange(4, dtype=np.int16))
    check_equal(hx.add(x, np.arange(4, dtype=np.int8)), np.arange(4, dtype=np.int16) * 2)
    check_equal(hx.add(x, [1, 1, 1, 1]), np.arange(4, dtype=np.int16) + np.array([1, 1, 1, 1]))
    check_equal(hx.add(x, np.float32(1)), np.arange(4, dtype=np.int16) + np.float32(1))


@given(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, min_side=0, max_side=4),
       st.sampled_from(BINARY + UNARY_EXACT), st.sampled_from(DTYPES), st.booleans())
def test08_hypothesis_every_function_broadcasting_empty_and_scalar_shapes(shapes, name, dtype, scalar_rhs):
    (sa, sb), _ = shapes
    a = values(dtype, sa, 6, special=False)
    b = values(dtype, sb, 7, special=False)
    if name == "power" and dtype.kind in "iu":
        b = (np.abs(b) % 4).astype(dtype)
    if name in ("left_shift", "right_shift") and dtype.kind in "iu":
        b = (np.abs(b) % (dtype.itemsize * 8)).astype(dtype)
    fn = getattr(hx, name)
    if name in UNARY_EXACT:
        if name == "sqrt" and dtype.kind in "iu":
            a = np.abs(a).astype(dtype)
        args_np, args_hx = (a,), (hx.asarray(a),)
    elif scalar_rhs:
        py = b.reshape(-1)[0].item() if b.size else 1
        args_np, args_hx = (a, py), (hx.asarray(a), py)
    else:
        args_np, args_hx = (a, b), (hx.asarray(a), hx.asarray(b))
    try:
        with np.errstate(all="ignore"):
            want = np_call(name, *args_np)
    except (TypeError, ValueError, OverflowError, np.exceptions.DTypePromotionError) as e:
        with pytest.raises((TypeError, ValueError, OverflowError)):
            fn(*args_hx).block_until_ready()
        del e
        return
    got = fn(*args_hx)
    assert isinstance(got, hx.DeviceArray)
    check_equal(got, want, ulps=1 if name == "power" else 0)


@given(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6), st.data())
def test09_hypothesis_strided_views_as_operands(shape, data):
    host = values(np.dtype("float64"), shape, 8, special=False)
    key = data.draw(hnp.basic_indices(shape, allow_newaxis=False, allow_ellipsis=False))
    x = hx.asarray(host)
    v, hv = x[key], host[key]
    check_equal(hx.multiply(v, 2), hv * 2)
    check_equal(hx.subtract(v, v[::-1] if hv.ndim else v), hv - (hv[::-1] if hv.ndim else hv))


def test10_out_argument():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = hx.asarray(a)
    out = hx.empty((2, 3), np.float64)
    r = hx.add(x, 1, out=out)
    assert r is out
    check_equal(out, (a + 1).astype(np.float64))
    r = hx.multiply(x, 2, out=(out,))
    assert r is out
    hx.negative(x, out)
    check_equal(out, -a.astype(np.float64))
    hx.add(x, x, out=x)  # in place
    check_equal(x, a * 2)
    with pytest.raises(TypeError, match="Cannot cast ufunc 'add' output from dtype\\('float32'\\) to dtype\\('int32'\\)"):
        hx.add(x, 1, out=hx.empty((2, 3), np.int32))
    with pytest.raises(ValueError, match="non-broadcastable output operand with shape \\(3,\\)"):
        hx.add(x, 1, out=hx.empty(3, np.float32))
    with pytest.raises(TypeError, match="out must be a DeviceArray"):
        hx.add(x, 1, out=np.empty((2, 3), np.float32))


def test11_overlapping_out_reads_inputs_first():
    a = np.arange(10, dtype=np.int64)
    x = hx.asarray(a)
    hx.add(x[:-1], x[1:], out=x[1:])
    expected = a.copy()
    np.add(expected[:-1], expected[1:], out=expected[1:])
    check_equal(x, expected)


def test12_dtype_and_where_arguments():
    a = np.arange(5, dtype=np.int8)
    x = hx.asarray(a)
    check_equal(hx.add(x, x, dtype=np.float32), np.add(a, a, dtype=np.float32))
    check_equal(hx.sqrt(x, dtype=np.float64), np.sqrt(a, dtype=np.float64))
    with pytest.raises(TypeError, match="No loop matching"):
        hx.add(hx.asarray(np.ones(2)), 1, dtype=np.int8)
    mask = np.array([True, False, True, False, True])
    out = hx.full(5, -1, np.int8)
    hx.multiply(x, 3, out=out, where=hx.asarray(mask))
    check_equal(out, np.where(mask, a * 3, -1).astype(np.int8))
    untouched = hx.full(5, 7, np.int8)
    hx.add(x, 1, out=untouched, where=False)
    check_equal(untouched, np.full(5, 7, np.int8))
    with pytest.raises(TypeError, match="boolean"):
        hx.add(x, 1, where=hx.asarray(np.ones(5, np.int8)))
    with pytest.raises(TypeError, match="unexpected keyword argument 'order'"):
        hx.add(x, 1, order="C")
    with pytest.raises(TypeError, match="positional arguments"):
        hx.add(x)


def test13_ufunc_attributes():
    assert hx.add.__name__ == "add" and hx.add.nin == 2 and hx.add.nout == 1 and hx.add.nargs == 3
    assert hx.add.identity == 0 and hx.multiply.identity == 1 and hx.maximum.identity is None
    assert hx.logical_and.identity is True and hx.bitwise_and.identity == -1
    assert hx.exp.nin == 1
    assert "ff->f" in hx.add.types and "EE->E" in hx.add.types and "dd->?" in hx.less.types
    for t in hx.add.types:  # every loop NumPy knows is one NumPy has (bfloat16 aside)
        if "E" not in t:
            assert t in np.add.types or t.replace("l", "q").replace("L", "Q") in np.add.types
    assert hx.abs is hx.absolute and hx.bitwise_invert is hx.invert
    # round is a function (integers keep their dtype, decimals=); rint is its decimals=0 float kernel
    assert not isinstance(hx.round, hx.ufunc) and isinstance(hx.rint, hx.ufunc)
    assert repr(hx.add) == "<hrxarray.ufunc 'add'>"
    assert isinstance(hx.add, hx.ufunc)


def test14_npu_local_operands_are_refused_with_a_remedy():
    n = hx.asarray(np.ones(3), placement=hx.NpuLocal(hx.npu()))
    with pytest.raises(hx.UnsupportedError, match="GPU cannot bind.*Shared"):
        n + 1


def test15_operands_of_different_runtimes_are_refused():
    other = hx.Runtime()
    a = hx.asarray(np.ones(3), placement=hx.Shared(other.npu()))
    with pytest.raises(ValueError, match="different runtimes"):
        a + hx.asarray(np.ones(3))


# --- operators and protocols ---------------------------------------------------------------------


def test16_operators_match_numpy():
    a = values(np.dtype("int32"), (3, 4), 9, special=False)
    b = np.abs(values(np.dtype("int32"), (3, 4), 10, special=False)) % 3 + 1
    x, y = hx.asarray(a), hx.asarray(b)
    with np.errstate(all="ignore"):
        for expr in ["x + y", "x - y", "x * y", "x / y", "x // y", "x % y", "x ** y", "x & y", "x | y", "x ^ y",
                     "x << y", "x >> y", "x == y", "x != y", "x < y", "x <= y", "x > y", "x >= y", "-x", "+x",
                     "abs(x)", "~x", "2 - x", "3 // y", "1.5 * x", "x + a", "a + x"]:
            got = eval(expr, {"x": x, "y": y, "a": a})
            want = eval(expr, {"x": a, "y": b, "a": a})
            assert isinstance(got, hx.DeviceArray), expr
            check_equal(got, want)
    z = hx.asarray(a.copy())
    zid = id(z)
    z += 1
    z *= 2
    assert id(z) == zid
    check_equal(z, (a + 1) * 2)
    with pytest.raises(TypeError, match="Cannot cast"):
        z += 1.5
    assert (x + "s" if False else None) is None
    with pytest.raises(TypeError):
        x + "s"


def test17_numpy_ufuncs_dispatch_to_hx():
    a = np.arange(6, dtype=np.float32)
    x = hx.asarray(a)
    for fn in (np.add, np.multiply, np.maximum, np.true_divide):
        r = fn(x, 2)
        assert isinstance(r, hx.DeviceArray)
        check_equal(r, fn(a, np.float32(2)))
    assert isinstance(np.exp(x), hx.DeviceArray)
    r = np.add(a, x)  # an ndarray operand
    assert isinstance(r, hx.DeviceArray)
    check_equal(r, a + a)
    r = a + x
    assert isinstance(r, hx.DeviceArray)
    out = hx.empty(6, np.float32)
    assert np.negative(x, out=out) is out
    check_equal(np.add.reduce(x.reshape(2, 3)), np.add.reduce(a.reshape(2, 3)))

    with pytest.raises(TypeError, match="numpy.frexp"):  # not in the kernel table: no silent host fallback
        np.frexp(x)
    assert isinstance(np.arctan2(x, x), hx.DeviceArray)  # in the table since issue 16
    with pytest.raises(TypeError, match="accumulate"):  # add/multiply accumulate (tests/test_numpy_breadth.py)
        np.maximum.accumulate(x)


def test18_numpy_functions_dispatch_or_refuse():
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    x = hx.asarray(a)
    for fn, args, kw in [
        (np.sum, (), {}), (np.sum, (), {"axis": 0}), (np.mean, (), {"axis": 1}), (np.prod, (), {}),
        (np.max, (), {}), (np.min, (), {"axis": 0}), (np.argmax, (), {}), (np.argmin, (), {"axis": 1}),
        (np.transpose, (), {}), (np.reshape, ((4, 3),), {}), (np.round, (), {}), (np.copy, (), {}),
    ]:
        got = fn(x, *args, **kw)
        assert isinstance(got, hx.DeviceArray), fn
        check_equal(got, fn(a, *args, **kw))
    got = np.concatenate([x, x], axis=1)
    assert isinstance(got, hx.DeviceArray)
    check_equal(got, np.concatenate([a, a], axis=1))
    got = np.matmul(x, x.T)
    assert isinstance(got, hx.DeviceArray)
    np.testing.assert_allclose(hx.to_numpy(got), a @ a.T)
    check_equal(np.where(x > 5, x, -1.0), np.where(a > 5, a, -1.0))
    check_equal(np.stack([x, x]), np.stack([a, a]))
    # cond, trapezoid, histogram (_numpy_more.py), gradient and lexsort (_numpy_fill.py) dispatch now
    for fn in (np.unwrap, np.i0):
        with pytest.raises(TypeError, match=f"implement {fn.__module__}.{fn.__qualname__} for"):
            fn(x)


# --- reductions ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2), -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test19_reductions_match_numpy(dtype, axis, keepdims):
    a = values(dtype, (3, 4, 5), 11, special=False)
    x = hx.asarray(a)
    for name in ("sum", "prod", "max", "min", "mean"):
        if name == "prod" and dtype.kind in "iu":
            a_used = (np.abs(a) % 3).astype(dtype)
        else:
            a_used = a
        xs = hx.asarray(a_used)
        want = np_call(name, a_used, axis=axis, keepdims=keepdims)
        if dtype == BF16 and name in ("sum", "prod", "mean"):
            # bf16 reductions accumulate in float32 and round once (ml_dtypes' own NumPy loops round
            # every step); the reference is therefore NumPy in float32, rounded to bf16.
            want = np.asarray(np_call(name, a_used.astype(np.float32), axis=axis, keepdims=keepdims)).astype(BF16)
        got = getattr(hx, name)(xs, axis=axis, keepdims=keepdims)
        want = np.asarray(want)
        if dtype.kind in "fV" and name in ("sum", "prod", "mean"):
            g = hx.to_numpy(got)
            assert g.dtype == want.dtype and g.shape == want.shape
            tol = {np.dtype("float16"): 2e-3, BF16: 1e-2, np.dtype("float32"): 1e-5, np.dtype("float64"): 1e-12}
            np.testing.assert_allclose(g.astype(np.float64), want.astype(np.float64),
                                       rtol=tol[dtype], atol=tol[dtype] * 60)
        else:
            check_equal(got, want)


@pytest.mark.parametrize("dtype", [np.dtype("int16"), np.dtype("float32"), BF16], ids=str)
def test20_arg_reductions_match_numpy(dtype):
    a = values(dtype, (4, 6), 12, special=False)
    a.reshape(-1)[7] = a.reshape(-1)[3]  # ties: the first index wins
    x = hx.asarray(a)
    for axis in (None, 0, 1, -1):
        check_equal(hx.argmax(x, axis=axis), np.argmax(a, axis=axis))
        check_equal(hx.argmin(x, axis=axis), np.argmin(a, axis=axis))
    check_equal(hx.argmax(x, axis=1, keepdims=True), np.argmax(a, axis=1, keepdims=True))
    if dtype.kind == "f":
        b = a.copy()
        b[1, 2] = np.nan
        b[3, 0] = np.nan
        check_equal(hx.argmax(hx.asarray(b)), np.argmax(b))
        check_equal(hx.argmin(hx.asarray(b), axis=0), np.argmin(b, axis=0))
        check_equal(hx.max(hx.asarray(b), axis=1), np.max(b, axis=1))


def test21_reduction_dtypes_and_edge_cases():
    i8 = hx.asarray(np.array([100, 100, 100], np.int8))
    check_equal(hx.sum(i8), np.sum(np.array([100, 100, 100], np.int8)))  # int64 accumulator
    check_equal(hx.sum(i8, dtype=np.int8), np.sum(np.array([100, 100, 100], np.int8), dtype=np.int8))
    check_equal(hx.sum(hx.asarray(np.ones(4, np.uint16))), np.sum(np.ones(4, np.uint16)))
    check_equal(hx.mean(hx.asarray(np.arange(4))), np.mean(np.arange(4)))
    b = hx.asarray(np.ones(300, BF16))
    s = hx.sum(b)  # bf16 accumulation would stall at 256; float32 does not
    assert s.dtype == BF16 and float(s) == 300.0
    check_equal(hx.sum(hx.zeros((0, 3)), axis=0), np.sum(np.zeros((0, 3)), axis=0))
    check_equal(hx.prod(hx.zeros(0, np.int32)), np.prod(np.zeros(0, np.int32)))
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum which has no identity"):
        hx.max(hx.zeros((0, 3)))
    with pytest.raises(ValueError, match="empty sequence"):
        hx.argmax(hx.zeros(0))
    with pytest.raises(np.exceptions.AxisError):
        hx.sum(hx.zeros((2, 2)), axis=2)
    assert math.isnan(float(hx.mean(hx.zeros(0))))
    out = hx.empty(3, np.float64)
    assert hx.sum(hx.asarray(np.ones((2, 3))), axis=0, out=out) is out
    check_equal(out, np.full(3, 2.0))
    check_equal(hx.logical_and.reduce(hx.asarray(np.array([True, False]))), np.logical_and.reduce([True, False]))
    check_equal(hx.bitwise_or.reduce(hx.asarray(np.array([1, 2, 4], np.uint8))), np.uint8(7))
    with pytest.raises(ValueError, match="reduce"):
        hx.exp.reduce(hx.zeros(3))
    x = hx.asarray(np.arange(6.0).reshape(2, 3))
    check_equal(x.sum(axis=1), np.arange(6.0).reshape(2, 3).sum(axis=1))
    check_equal(x.max(), np.float64(5.0))


# --- where -----------------------------------------------------------------------------------------------


def test22_where_matches_numpy():
    c = np.array([[True, False, True]])
    a = np.arange(3, dtype=np.int8)
    b = np.arange(6, dtype=np.float32).reshape(2, 3)
    check_equal(hx.where(hx.asarray(c), hx.asarray(a), hx.asarray(b)), np.where(c, a, b))
    check_equal(hx.where(hx.asarray(c), hx.asarray(a), 0), np.where(c, a, np.int8(0)))
    check_equal(hx.where(hx.asarray(a) > 0, 1.5, hx.asarray(b)), np.where(a > 0, 1.5, b))
