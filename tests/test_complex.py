"""complex64 and complex128 end to end, against NumPy 2 as the reference.

Exact operations (add, subtract, multiply, divide, square, negative,
conjugate, comparisons, classification, absolute, sign, integral powers,
casts) are compared bit for bit on both parts (NaN only as NaN); the C
library's complex functions (exp, log, sqrt, sin, cos, tan, tanh, pow with a
non-integral exponent) and NumPy's log1p/expm1 formulas on them are held to an
ULP bound on each part, since NumPy's build may round a libm call differently.
"""

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import hrxarray as hx

import helpers  # noqa: E402

CDT = ["complex64", "complex128"]
REAL = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
        "float16", "bfloat16", "float32", "float64"]  # fmt: skip
EDGE = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-3, 1e30, -1e300, 5e-324, 1e-45, 1.1754944e-38,
        2.2250738585072014e-308, math.inf, -math.inf, math.nan]  # fmt: skip


def np_dtype(name):
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def edge_values(dt):
    """Every pair of edge parts (inf, NaN, -0.0, subnormals, huge and tiny), as dtype dt."""
    re, im = np.meshgrid(EDGE, EDGE)
    z = np.zeros(re.size, dt)
    with np.errstate(all="ignore"):
        z.real = re.ravel()
        z.imag = im.ravel()
    return z


def parts_bits(a):
    a = np.ascontiguousarray(a)
    f = a.view(np.float32 if a.dtype == np.complex64 else np.float64)
    return f


def assert_same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    if got.dtype.kind in "fc":
        g, w = (parts_bits(got), parts_bits(want)) if got.dtype.kind == "c" else (got, want)
        gn, wn = np.isnan(g), np.isnan(w)
        ui = {4: np.uint32, 8: np.uint64, 2: np.uint16}[g.dtype.itemsize]
        bad = (gn != wn) | (~gn & (np.ascontiguousarray(g).view(ui) != np.ascontiguousarray(w).view(ui)))
    else:
        bad = got != want
    assert not bad.any(), f"{bad.sum()} differ: got {got.ravel()[bad.ravel()[: got.size]][:5] if got.ndim else got} " \
                          f"want {want.ravel()[bad.ravel()[: want.size]][:5] if want.ndim else want}"


def ulp(got, want):
    g, w = parts_bits(got), parts_bits(want)
    ui = np.uint32 if g.dtype == np.float32 else np.uint64
    gi, wi = g.view(ui), w.view(ui)
    top = ui(1) << ui(8 * g.dtype.itemsize - 1)
    og = np.where(gi & top, ~gi, gi | top)
    ow = np.where(wi & top, ~wi, wi | top)
    d = np.where(og > ow, og - ow, ow - og).astype(np.float64)
    gn, wn = np.isnan(g), np.isnan(w)
    d[gn & wn] = 0
    d[gn != wn] = np.inf
    return d


def both(x, y):
    """Every pair of elements of x and y, as two equal-length arrays."""
    i, j = np.meshgrid(np.arange(x.size), np.arange(y.size))
    return x[i.ravel()], y[j.ravel()]


# --- dtypes and promotion ---------------------------------------------------------------


def test_dtype_objects_are_numpys():
    assert hx.complex64 == np.complex64 and hx.complex128 == np.complex128
    assert "complex64" in hx.__all__ and "complex128" in hx.__all__
    for name in ("real", "imag", "conj", "conjugate", "asin", "acos", "atan", "asinh", "acosh", "atanh", "sinh",
                 "cosh", "reciprocal"):
        assert name in hx.__all__ and callable(getattr(hx, name))


@pytest.mark.parametrize("c", CDT)
@pytest.mark.parametrize("r", REAL + CDT)
def test_array_promotion_matches_numpy(c, r):
    a = hx.ones(2, dtype=np_dtype(r))
    b = hx.ones(2, dtype=c)
    want = np.result_type(np_dtype(r), np.dtype(c))
    assert (a + b).dtype == want and (b * a).dtype == want


@pytest.mark.parametrize("r", REAL + CDT)
def test_python_complex_scalars_are_weak(r):
    # NEP 50: the complex dtype of the array's float kind, complex128 for ints and bools.
    x = np.ones(2, np_dtype(r))
    want = (x + 1j).dtype
    assert (hx.asarray(x) + 1j).dtype == want
    assert (1j * hx.asarray(x)).dtype == want


@pytest.mark.parametrize("c", CDT)
def test_python_float_and_int_keep_complex_dtype(c):
    x = hx.asarray(np.array([1 + 2j], c))
    assert (x + 1.5).dtype == c and (x * 2).dtype == c


def test_complex_into_real_storage_is_refused():
    y = hx.zeros(2)
    with pytest.raises(TypeError, match="complex number"):
        y[0] = 1j
    assert np.asarray(y).tolist() == [0.0, 0.0]


# --- storage, casts and interchange -----------------------------------------------------


@pytest.mark.parametrize("c", CDT)
def test_creation_functions(c):
    assert_same(np.asarray(hx.zeros((2, 3), dtype=c)), np.zeros((2, 3), c))
    assert_same(np.asarray(hx.ones(3, dtype=c)), np.ones(3, c))
    assert_same(np.asarray(hx.full(3, 2 - 1j, dtype=c)), np.full(3, 2 - 1j, c))
    assert hx.empty(4, dtype=c).dtype == c
    assert hx.full(2, 1j).dtype == np.complex128
    assert hx.asarray(1j).dtype == np.complex128 and hx.asarray([1, 2j]).dtype == np.complex128


@pytest.mark.parametrize("c", CDT)
@pytest.mark.parametrize("r", REAL + CDT)
def test_astype_both_ways_matches_numpy(c, r):
    # (real parts every integer dtype holds: out-of-range float -> int casts give 0 by
    # design, where NumPy leaves them to the C compiler; Note [Cast semantics])
    z = np.array([0, -0.0, 1.5 - 2j, 3.25 + 0.5j, 100 + 7j, 1e-3j], c)
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = z.astype(np_dtype(r))
    assert_same(np.asarray(hx.asarray(z).astype(np_dtype(r))), want)
    x = np.array([0, 1, 3, 7, 100], np_dtype(r))
    assert_same(np.asarray(hx.asarray(x).astype(c)), x.astype(c))


@pytest.mark.parametrize("c", CDT)
def test_special_values_survive_storage_and_views(c):
    z = edge_values(c)
    x = hx.asarray(z)
    assert_same(np.asarray(x), z)
    assert_same(np.asarray(x[::-3]), z[::-3])
    assert_same(np.asarray(x.reshape(17, 17)[3:9, 1::2]), z.reshape(17, 17)[3:9, 1::2])
    assert_same(np.asarray(x.to(hx.GpuLocal())), z)


@pytest.mark.parametrize("c", CDT)
def test_dlpack_both_ways(c):
    z = np.array([1 + 2j, -0.0 - 3j, math.inf + 0j], c)
    x = hx.from_dlpack(z)
    assert x.dtype == c
    assert_same(np.asarray(x), z)
    assert_same(np.from_dlpack(hx.asarray(z)), z)
    assert hx.asarray(z).__dlpack__(max_version=(1, 0)) is not None


@pytest.mark.parametrize("c", CDT)
def test_scalars_item_repr(c):
    x = hx.asarray(np.array([1.5 - 2j], c))
    assert complex(x) == 1.5 - 2j and x.item() == 1.5 - 2j and isinstance(x.item(), complex)
    assert f"dtype={c}" in repr(x) and "1.5-2.j" in repr(x)


# --- elementwise ----------------------------------------------------------------------------

BINARY_EXACT = ["add", "subtract", "multiply", "divide", "equal", "not_equal", "logical_and", "logical_or",
                "logical_xor"]  # fmt: skip
UNARY_EXACT = ["negative", "positive", "conjugate", "square", "isnan", "isinf", "isfinite", "logical_not",
               "absolute", "reciprocal", "rint"]  # fmt: skip


_cmul_model = helpers.cmul_unfused


def _sign_model(z):
    m = np.hypot(z.real, z.imag)
    out = z / np.where(m == 0, 1, m).astype(z.dtype)
    # NumPy 2's cases: NaN -> NaN, an infinite part -> its unit direction, 0 -> 0
    inf_r, inf_i = np.isinf(z.real), np.isinf(z.imag)
    out = np.where(inf_r & ~inf_i, np.sign(z.real) + 0j, out)
    out = np.where(inf_i & ~inf_r, 1j * np.sign(z.imag), out)
    out = np.where((inf_r & inf_i) | np.isnan(m), complex(np.nan, np.nan), out)
    return np.where(m == 0, 0j, out).astype(z.dtype)


def np_ref(name, *args):
    """NumPy's result, or for multiply/square/absolute/sign an unfused model of
    NumPy's formula (NumPy's SIMD complex loops fuse multiply-adds and scale
    hypot differently depending on the host)."""
    with np.errstate(all="ignore"):
        if name == "multiply":
            return _cmul_model(*args)
        if name == "square":
            return _cmul_model(args[0], args[0])
        if name == "absolute":
            return np.hypot(args[0].real, args[0].imag)
        if name == "sign":
            return _sign_model(args[0])
        return getattr(np, name)(*args)


@pytest.mark.parametrize("c", CDT)
@pytest.mark.parametrize("name", BINARY_EXACT)
def test_binary_exact_on_every_edge_pair(name, c):
    a, b = both(edge_values(c), edge_values(c))
    assert_same(np.asarray(getattr(hx, name)(hx.asarray(a), hx.asarray(b))), np_ref(name, a, b))


@pytest.mark.parametrize("c", CDT)
@pytest.mark.parametrize("name", UNARY_EXACT)
def test_unary_exact_on_edge_values(name, c):
    z = edge_values(c)
    assert_same(np.asarray(getattr(hx, name)(hx.asarray(z))), np_ref(name, z))


finite = st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True, width=32)


@given(st.lists(st.tuples(finite, finite, finite, finite), min_size=1, max_size=40),
       st.sampled_from(CDT), st.sampled_from(BINARY_EXACT + UNARY_EXACT))
def test_hypothesis_exact_ops(vals, c, name):
    v = np.array(vals, np.float64)
    a = (v[:, 0] + 0j).astype(c)
    a.imag = v[:, 1]
    b = (v[:, 2] + 0j).astype(c)
    b.imag = v[:, 3]
    f = getattr(hx, name)
    if name in UNARY_EXACT:
        assert_same(np.asarray(f(hx.asarray(a))), np_ref(name, a))
    else:
        assert_same(np.asarray(f(hx.asarray(a), hx.asarray(b))), np_ref(name, a, b))


@pytest.mark.parametrize("c", CDT)
@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 7, -1, -2, -5, 99, -99])
def test_integral_powers_follow_npy_cpow(c, n):
    z = edge_values(c)
    e = np.full(z.shape, n, c)
    assert_same(np.asarray(hx.power(hx.asarray(z), hx.asarray(e))), np_ref("power", z, e))


# The C library's complex functions (and NumPy's log1p/expm1 formulas on real
# libm calls): measured 0 ULP against NumPy 2.4 on glibc x86-64, edge values
# included; the bound leaves room for a NumPy build or C library that rounds a
# libm call differently.
CMATH_ULP = 2


@pytest.mark.parametrize("c", CDT)
@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "log1p", "expm1", "sinh",
                                  "cosh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh",
                                  "log2", "log10"])
def test_transcendental(name, c):
    rng = np.random.default_rng(16)
    z = np.concatenate([edge_values(c), (rng.standard_normal(400) * 3 + 1j * rng.standard_normal(400) * 3).astype(c)])
    got = np.asarray(getattr(hx, name)(hx.asarray(z)))
    want = np_ref(name, z)
    if name == "expm1":
        # A non-finite real part takes the array API's special cases
        # (test_expm1_special_cases); NumPy's formula gives NaN parts there.
        finite = np.isfinite(z.real) & (z != 0)
        got, want = got[finite], want[finite]
    assert got.dtype == want.dtype
    d = ulp(got, want)  # inf/NaN/-0.0 edge inputs included: NaN where NumPy has NaN
    assert d.max() <= CMATH_ULP, (name, c, d.max())


def expm1_special(re, im):
    """The array API's expm1 for a zero or a non-finite real part (a plain-Python model of its table)."""
    if re == 0 and im == 0:
        return complex(0.0, im)
    if math.isnan(re):
        return complex(math.nan, im) if im == 0 else complex(math.nan, math.nan)
    if re > 0:
        if im == 0:
            return complex(math.inf, im)
        if not math.isfinite(im):
            return complex(math.inf, math.nan)
        return complex(math.inf * math.cos(im), math.inf * math.sin(im))
    if math.isnan(im):
        return complex(-1, 0.0)
    if math.isinf(im):
        return complex(-1, math.copysign(0.0, im))
    return complex(-1, 0.0 * math.sin(im))


@pytest.mark.parametrize("c", CDT)
def test_expm1_special_cases(c):
    parts = [math.inf, -math.inf, math.nan]
    ims = [0.0, -0.0, 1.0, -2.5, 3.0, math.inf, -math.inf, math.nan]
    z = np.array([complex(r, i) for r in parts for i in ims] + [complex(0.0, 0.0), complex(-0.0, 0.0),
                                                                complex(-0.0, -0.0)], c)
    got = np.asarray(hx.expm1(hx.asarray(z)))
    for zi, g in zip(z, got):
        w = expm1_special(zi.real, zi.imag)
        for gp, wp in ((g.real, w.real), (g.imag, w.imag)):
            if math.isnan(wp):
                assert math.isnan(gp), (zi, g, w)
            else:
                assert gp == wp and math.copysign(1, gp) == math.copysign(1, wp), (zi, g, w)


@pytest.mark.parametrize("c", CDT)
def test_non_integral_power(c):
    rng = np.random.default_rng(7)
    a = (rng.standard_normal(200) + 1j * rng.standard_normal(200)).astype(c)
    b = (rng.standard_normal(200) + 1j * rng.standard_normal(200)).astype(c)
    d = ulp(np.asarray(hx.power(hx.asarray(a), hx.asarray(b))), np_ref("power", a, b))
    assert d.max() <= CMATH_ULP


@pytest.mark.parametrize("c", CDT)
def test_real_imag_conj(c):
    z = np.array([[1 + 2j, -3 - 0j], [math.inf - 1j, 5e-324j]], c)
    x = hx.asarray(z)
    assert_same(np.asarray(hx.real(x)), z.real)
    assert_same(np.asarray(hx.imag(x)), z.imag)
    assert_same(np.asarray(hx.conj(x)), np.conj(z))
    assert_same(np.asarray(hx.imag(x[:, ::-1])), z[:, ::-1].imag)
    assert_same(np.asarray(np.real(x)), z.real)  # NumPy's protocols route to hrxarray
    assert_same(np.asarray(np.imag(x)), z.imag)
    assert isinstance(np.conj(x), hx.DeviceArray)
    assert_same(np.asarray(np.conjugate(x)), np.conj(z))
    r = hx.asarray(np.array([1.0, 2.0]))
    assert_same(np.asarray(hx.real(r)), np.array([1.0, 2.0]))
    assert_same(np.asarray(hx.imag(r)), np.zeros(2))


@pytest.mark.parametrize("name", ["floor_divide", "remainder", "maximum", "minimum", "less", "greater_equal"])
def test_unordered_ops_are_refused(name):
    x = hx.asarray(np.array([1 + 1j]))
    with pytest.raises(TypeError, match=name):
        getattr(hx, name)(x, x)


@pytest.mark.parametrize("c", CDT)
def test_sign_is_z_over_abs(c):
    # z/|z| with NumPy 2's cases; |z| is hypot, which NumPy's SIMD absolute
    # may round differently: values to 2 ULP, the zero signs not compared.
    z = edge_values(c)
    got = np.asarray(hx.sign(hx.asarray(z)))
    with np.errstate(all="ignore"):
        want = np.sign(z)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=4 * np.finfo(got.real.dtype).eps, atol=0, equal_nan=True)


def test_where_moves_complex_bits():
    z = edge_values("complex128")
    m = np.arange(z.size) % 3 == 0
    assert_same(np.asarray(hx.where(hx.asarray(m), hx.asarray(z), hx.asarray(z[::-1]))), np.where(m, z, z[::-1]))


# --- reductions -----------------------------------------------------------------------------


@pytest.mark.parametrize("c", CDT)
@pytest.mark.parametrize("shape,axis", [((1000,), None), ((7, 300), 0), ((7, 300), 1), ((5, 0), 1), ((0,), None)])
def test_sum_prod_mean(c, shape, axis):
    rng = np.random.default_rng(3)
    n = math.prod(shape)
    z = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(c).reshape(shape)
    x = hx.asarray(z)
    rtol = 1e-5 if c == "complex64" else 1e-12
    for f in ("sum", "mean"):
        with np.errstate(all="ignore"), pytest.warns(RuntimeWarning) if (f == "mean" and 0 in shape) else _nothing():
            want = getattr(np, f)(z, axis=axis)
        got = np.asarray(getattr(hx, f)(x, axis=axis))
        assert got.dtype == np.asarray(want).dtype
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * 10)
    small = (z / 1.5).astype(c)
    got = np.asarray(hx.prod(hx.asarray(small), axis=axis))
    np.testing.assert_allclose(got, np.prod(small, axis=axis), rtol=rtol * 100, atol=1e-30)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def test_sum_of_few_values_is_exact():
    z = np.array([1 + 2j, 3 - 4j, -0.5 + 0.25j], np.complex64)
    assert_same(np.asarray(hx.sum(hx.asarray(z))), np.sum(z))
    assert_same(np.asarray(hx.prod(hx.asarray(z))), np.prod(z))


@pytest.mark.parametrize("f", ["max", "min", "argmax", "argmin"])
def test_max_min_refused_and_change_nothing(f):
    x = hx.asarray(np.array([1 + 1j, 2 - 1j], np.complex64))
    with pytest.raises(TypeError, match=f"{f}: .*complex64"):
        getattr(hx, f)(x)
    assert_same(np.asarray(x), np.array([1 + 1j, 2 - 1j], np.complex64))


# --- matmul and the rest of the array path --------------------------------------------------


def _matmul_model(a, b):
    """The documented order: per element, from +0, k ascending, unfused complex products."""
    t = a.real.dtype.type
    m, k = a.shape
    n = b.shape[1]
    out = np.zeros((m, n), a.dtype)
    for i in range(m):
        for j in range(n):
            re, im = t(0), t(0)
            for kk in range(k):
                x, y = a[i, kk], b[kk, j]
                re = t(re + t(t(x.real * y.real) - t(x.imag * y.imag)))
                im = t(im + t(t(x.real * y.imag) + t(x.imag * y.real)))
            out[i, j] = complex(re, im)
    return out


@pytest.mark.parametrize("c", CDT)
def test_matmul_follows_its_documented_order_and_is_close_to_numpy(c):
    rng = np.random.default_rng(5)
    a = (rng.standard_normal((2, 6, 9)) + 1j * rng.standard_normal((2, 6, 9))).astype(c)
    b = (rng.standard_normal((9, 5)) + 1j * rng.standard_normal((9, 5))).astype(c)
    got = np.asarray(hx.matmul(hx.asarray(a), hx.asarray(b)))
    assert got.dtype == c
    with np.errstate(all="ignore"):
        for i in range(2):
            assert_same(got[i], _matmul_model(a[i], b))
    np.testing.assert_allclose(got, a @ b, rtol=1e-5 if c == "complex64" else 1e-13, atol=1e-5)
    big = (rng.standard_normal((200, 300)) + 1j * rng.standard_normal((200, 300))).astype(c)
    np.testing.assert_allclose(np.asarray(hx.matmul(big, big.T)), big @ big.T,
                               rtol=1e-4 if c == "complex64" else 1e-12, atol=1e-3)
    assert hx.matmul(hx.ones((2, 2)), hx.asarray(np.ones((2, 2), c))).dtype == np.result_type(np.float64, c)


def test_in_place_and_out_follow_same_kind_casting():
    y = hx.ones(2)
    with pytest.raises(TypeError, match="complex128.*float64"):
        y += 1j
    assert np.asarray(y).tolist() == [1.0, 1.0]
    x = hx.asarray(np.array([1 + 2j, 3 - 4j], np.complex64))
    z = hx.zeros(2, dtype=hx.complex128)
    hx.add(x, 1, out=z)
    assert_same(np.asarray(z), np.array([2 + 2j, 4 - 4j]))
    w = hx.zeros(2, dtype=hx.complex64)
    hx.multiply(x, x, where=hx.asarray([True, False]), out=w)
    assert_same(np.asarray(w), np.array([-3 + 4j, 0], np.complex64))


@pytest.mark.parametrize("placement", ["gpu", "host"])
def test_placements_and_host_views(placement):
    z = np.array([1 + 2j, 3 - 4j], np.complex64)
    x = hx.asarray(z, placement=hx.GpuLocal() if placement == "gpu" else hx.HostVisible())
    assert_same(np.asarray(hx.exp(x)), np.exp(z))
    assert_same(np.asarray(hx.sum(x, dtype=hx.complex128)), np.sum(z, dtype=np.complex128))
    if placement == "host":
        with x.map_read() as v:
            assert v.dtype == np.complex64 and v.tolist() == z.tolist()
