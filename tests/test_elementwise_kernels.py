"""kernels/elementwise.h (ufuncs, casts, reductions) against NumPy 2 with ml_dtypes as the reference.

Results are compared bit for bit (NaN only as NaN: payloads and NaN signs are
not part of the contract), except the transcendental functions, which use
hrx::fmath (float32) and the C library (float64) where NumPy uses its own SIMD
code, and are held to a measured ULP bound. Out-of-range float -> integer casts are checked against the documented
rule (0) rather than NumPy, which leaves them to the C compiler.
"""

import itertools

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrxarray._core import _elementwise as ew

BF16 = np.dtype(ml_dtypes.bfloat16)
NAMES = [
    "bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
    "float16", "bfloat16", "float32", "float64",
]  # fmt: skip
FLOATS = {"float16", "bfloat16", "float32", "float64"}
INTS = [n for n in NAMES if n not in FLOATS and n != "bool"]
UFUNCS = ew.ufunc_names()
UNARY = [n for n in UFUNCS if ew.info(n)["nin"] == 1]
BINARY = [n for n in UFUNCS if ew.info(n)["nin"] == 2]
TRANSCENDENTAL = {"exp", "log", "log1p", "expm1", "sin", "cos", "tan", "tanh", "sinh", "cosh", "arcsin",
                  "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "log2", "log10", "arctan2",
                  "logaddexp", "hypot", "cbrt", "exp2", "logaddexp2"}  # fmt: skip
# The worst differences from NumPy measured over ~2M inputs per dtype
# (random bit patterns and ranges). float32 (and float16/bfloat16, computed
# in float32) use hrx::fmath, within 1 ULP of the correctly rounded result
# (Note [Loom math accuracy]); NumPy's float32 SIMD code and ml_dtypes'
# C-library float32 calls are not correctly rounded either, so float32 tan,
# exp, arcsin and arctan2 differ from NumPy by 2 ULP (bound 3 leaves NumPy
# room on other hosts), float16 and bfloat16 by 1 (a float32 result one ULP
# apart rounds to the other 16-bit neighbour). float64 is glibc against
# NumPy's SIMD code (tanh: 3 ULP).
ULP_BOUND = {"float16": 1, "bfloat16": 1, "float32": 3, "float64": 4}
CODE_TO_NAME = {}
RNG_SEED = 20260514


def np_dtype(name):
    return BF16 if name == "bfloat16" else np.dtype(name)


for _n in NAMES:
    CODE_TO_NAME[np_dtype(_n).char] = _n


def operand(a):
    return (a.ctypes.data, tuple(a.strides), a.dtype.name)


def loop_dtypes(types):
    ins, out = types.split("->")
    return [CODE_TO_NAME[c] for c in ins], CODE_TO_NAME[out]


def run(name, *inputs, out=None, where=None, loop=None):
    """Our kernel on NumPy inputs, broadcast to a common shape by zero strides."""
    arrays = [np.asarray(x) for x in inputs]
    shapes = [a.shape for a in arrays] + ([np.shape(where)] if where is not None else [])
    shapes += [out.shape] if out is not None else []
    shape = np.broadcast_shapes(*shapes)
    if out is None:
        if loop is not None:
            rdt = loop_dtypes(loop)[1]
        else:
            rdt = ew.resolve(name, [a.dtype.name for a in arrays])
        out = np.empty(shape, np_dtype(rdt))
    ins = [operand(np.broadcast_to(a, shape)) for a in arrays]
    w = None if where is None else operand(np.broadcast_to(np.asarray(where), shape))
    ew.ufunc(name, list(shape), ins, operand(out), w, loop)
    return out


def ref(name, *inputs, **kw):
    with np.errstate(all="ignore"):
        if name == "where":
            return np.where(*inputs)
        return getattr(np, name)(*inputs, **kw)


def np_cast(x, to):
    """NumPy's astype, with the documented rule where NumPy has none: a float
    whose truncation the integer target cannot hold (or NaN/inf) gives 0."""
    x = np.asarray(x)
    to = np.dtype(to)
    with np.errstate(all="ignore"):
        y = x.astype(to)
    if x.dtype.name in FLOATS and to.kind in "iu":
        info = np.iinfo(to)
        with np.errstate(all="ignore"):
            t = np.trunc(x.astype(np.float64))
            ok = np.isfinite(t) & (t >= float(info.min)) & (t < float(info.max) + 1)
        y = np.where(ok, y, 0).astype(to)
    return y


def uint_view(a):
    a = np.ascontiguousarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def f64(a):
    with np.errstate(all="ignore"):  # a signalling NaN raises "invalid" when widened
        return np.asarray(a).astype(np.float64)


def is_nan(a):
    with np.errstate(all="ignore"):  # a signalling NaN raises "invalid" when widened
        return np.isnan(np.asarray(a).astype(np.float64))


def assert_same(got, want, msg=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype, msg)
    assert got.shape == want.shape, msg
    if got.dtype.name in FLOATS:
        gn, wn = is_nan(got), is_nan(want)
        bad = (gn != wn) | (~gn & (uint_view(got) != uint_view(want)))
    else:
        bad = got != want
    if bad.any():
        i = np.argwhere(bad)[:5]
        raise AssertionError(f"{msg}: {bad.sum()} differ, first at {i.tolist()}: got {got[bad][:5]} want {want[bad][:5]}")


def ulp_diff(got, want):
    """Distance in units in the last place (NaN vs NaN is 0, NaN vs number is inf)."""
    g, w = uint_view(got), uint_view(want)
    top = g.dtype.type(1) << g.dtype.type(8 * g.dtype.itemsize - 1)
    og = np.where(g & top, ~g, g | top)
    ow = np.where(w & top, ~w, w | top)
    d = np.where(og > ow, og - ow, ow - og).astype(np.float64)
    gn, wn = is_nan(got), is_nan(want)
    d[gn & wn] = 0
    d[gn != wn] = np.inf
    return d


def special(name):
    """Edge values of a dtype: zeros, ones, extremes, infinities, NaN, subnormals."""
    dt = np_dtype(name)
    if name == "bool":
        return np.array([False, True])
    if name in FLOATS:
        fi = ml_dtypes.finfo(dt) if name == "bfloat16" else np.finfo(dt)
        vals = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.0, -7.0, 0.1, 1e-3, 100.0, -100.0,
                1024.5, 3.14159, np.inf, -np.inf, np.nan, float(fi.max), -float(fi.max),
                float(fi.smallest_normal), float(fi.smallest_subnormal), -float(fi.smallest_subnormal),
                float(fi.smallest_normal) * 0.75, 7.0, 2.0]  # fmt: skip
        with np.errstate(over="ignore"):
            return np.array(vals, np.float64).astype(np.float32).astype(dt) if name == "bfloat16" else np.array(vals).astype(dt)
    ii = np.iinfo(dt)
    vals = {ii.min, ii.min + 1, 0, 1, 2, 3, 7, ii.max - 1, ii.max, ii.max // 2, ii.max // 3}
    if ii.min < 0:
        vals |= {-1, -2, -3, -7, ii.min // 3}
    vals |= {v for v in (8, 16, 31, 32, 63, 64, 100, 127, 128, 255, 1000) if v <= ii.max}
    return np.array(sorted(vals), dtype=dt)


def rand(name, n, rng):
    dt = np_dtype(name)
    if name == "bool":
        return rng.integers(0, 2, n).astype(bool)
    if name in FLOATS:
        # half ordinary values, half random bit patterns (every exponent, NaNs)
        bits = rng.integers(0, 2 ** (8 * dt.itemsize), n // 2, dtype=np.uint64)
        pat = bits.astype({2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]).view(dt)
        vals = (rng.standard_normal(n - n // 2) * 10.0 ** rng.integers(-3, 4, n - n // 2)).astype(np.float32)
        return np.concatenate([pat, vals.astype(dt)])
    ii = np.iinfo(dt)
    return rng.integers(ii.min, ii.max, n, dtype=dt, endpoint=True)


def values(name, rng, n=200):
    return np.concatenate([special(name), rand(name, n, rng)])


# --- the table ----------------------------------------------------------------


def test_01_names_nin_identity_and_reduce_flags():
    assert UFUNCS[-1] == "where" and len(UFUNCS) == 74
    reducible = {"add", "multiply", "maximum", "minimum", "logical_and", "logical_or", "logical_xor",
                 "bitwise_and", "bitwise_or", "bitwise_xor"}  # fmt: skip
    for name in UFUNCS[:-1]:
        info, u = ew.info(name), getattr(np, name)
        assert info["name"] == name and info["nin"] == u.nin and info["nout"] == 1
        assert info["has_reduce"] == (name in reducible)
        if name in reducible:
            assert info["identity"] == u.identity and type(info["identity"]) is type(u.identity), name
        else:
            assert info["identity"] is None, name
    assert ew.info("where")["nin"] == 3 and ew.info("where")["types"][0] == "???->?"
    assert ew.info("where")["types"][1:] == ["?" + c + c + "->" + c for c in "bBhHiIlLeEfdFD"]


@pytest.mark.parametrize("name", UFUNCS[:-1])
def test_02_loops_are_numpys(name):
    # NumPy's own loops over these dtypes, in its order ('q'/'Q' are 'l'/'L'
    # here) ...
    want = []
    for t in getattr(np, name).types:
        t = t.replace("q", "l").replace("Q", "L")
        if all(c in CODE_TO_NAME for c in t.replace("->", "")) and t not in want:
            want.append(t)
    # (complex loops: tests/test_complex.py)
    got = [t for t in ew.info(name)["types"] if not set(t) & set("FD")]
    assert [t for t in got if "E" not in t] == want
    # ... and a bfloat16 loop, right after the float16 one, exactly where
    # ml_dtypes registered one.
    e = [t for t in got if "E" in t]
    nin = getattr(np, name).nin
    try:
        ref(name, *[np.ones(2, BF16)] * nin)
        has_bf16 = True
    except TypeError:
        has_bf16 = False
    assert bool(e) == has_bf16
    if e:
        assert got.index(e[0]) == got.index(e[0].replace("E", "e")) + 1


@pytest.mark.parametrize("name", UNARY + BINARY)
def test_03_resolution_matches_numpy(name):
    nin = ew.info(name)["nin"]
    for combo in itertools.product(NAMES, repeat=nin):
        try:
            want = ref(name, *[np.ones(2, np_dtype(d)) for d in combo]).dtype.name
        except TypeError:
            want = None
        assert ew.resolve(name, list(combo)) == want, (name, combo)


def test_04_where_resolution_promotes_the_branches():
    for x, y in itertools.product(NAMES, NAMES):
        want = np.where(np.ones(2, bool), np.ones(2, np_dtype(x)), np.ones(2, np_dtype(y))).dtype.name
        for cond in ("bool", "float32"):
            assert ew.resolve("where", [cond, x, y]) == want


def test_05_unknown_names_and_loops_are_refused():
    with pytest.raises(ValueError, match="unknown ufunc"):
        ew.resolve("frexp", ["float32"])
    a = np.ones(3, np.float32)
    with pytest.raises(ValueError, match="no loop"):
        run("add", a, a, out=np.empty(3, np.float32), loop="gg->g")
    with pytest.raises(TypeError):
        run("bitwise_and", a, a)


# --- every ufunc, every loop ----------------------------------------------------


def loop_cases():
    for name in UFUNCS:
        for types in ew.info(name)["types"]:
            if set(types) & set("FD"):
                continue  # tests/test_complex.py
            yield pytest.param(name, types, id=f"{name}-{types}")


def inputs_for(name, types, rng):
    ins, _ = loop_dtypes(types)
    if name == "where":
        x = values(ins[1], rng, 100)
        return [rng.integers(0, 2, x.size).astype(bool), x, np.roll(x, 3)]
    if len(ins) == 1:
        x = values(ins[0], rng)
        if name == "reciprocal" and ins[0] in INTS:
            x = x[x != 0]  # NumPy's 1/0 is the C compiler's inf -> int conversion (elementwise_unary.cpp)
        return [x]
    a, b = values(ins[0], rng, 0), values(ins[1], rng, 0)
    ga, gb = np.meshgrid(np.arange(a.size), np.arange(b.size))  # every pair of edge values
    x = np.concatenate([a[ga.ravel()], rand(ins[0], 300, rng)])
    y = np.concatenate([b[gb.ravel()], rand(ins[1], 300, rng)])
    if name == "power" and ins[1] in INTS:
        y = np.where(y < 0, np.zeros_like(y), y)  # negative exponents raise (test_07)
    return [x, y]


@pytest.mark.parametrize("name,types", list(loop_cases()))
def test_06_every_loop_matches_numpy(name, types):
    rng = np.random.default_rng(RNG_SEED)
    ins = inputs_for(name, types, rng)
    got = run(name, *ins, loop=types)
    want = ref(name, *ins)
    out = loop_dtypes(types)[1]
    if name in ("maximum", "minimum") and out in ("float32", "float64"):
        # A +0/-0 tie gives the second operand (elementwise.h), as NumPy does on x86;
        # NumPy on arm64 orders -0 below +0 (NEON FMAX/FMIN) instead.
        x, y = np.broadcast_arrays(*ins)
        tie = (x == 0) & (y == 0)
        want = np.where(tie, y.astype(want.dtype), want)
    if name == "floor_divide" and out in FLOATS:
        # The array API's cases with an infinite operand: floor(a / b)
        # (NumPy gives NaN for inf // 2 and -1 for -1 // inf).
        x, y = np.broadcast_arrays(*ins)
        with np.errstate(all="ignore"):
            inf = (np.isinf(f64(x)) | np.isinf(f64(y))) & (f64(y) != 0)
            want = np.where(inf, np.floor(f64(x) / f64(y)).astype(want.dtype), want)
    if name == "nextafter" and out == "float16":
        # NumPy's float16 loop returns x for x == y; C's nextafter, NumPy's
        # other loops and the array API return y (nextafter(-0, +0) is +0).
        x, y = np.broadcast_arrays(*ins)
        want = np.where(x == y, y, want)
    if name in TRANSCENDENTAL or (name == "power" and out in FLOATS):
        assert got.dtype == want.dtype
        d = ulp_diff(got, want)
        assert d.max() <= ULP_BOUND[out], (name, types, d.max(), ins[0][d.argmax()])
    else:
        assert_same(got, want, f"{name} {types}")


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8"])
def test_07_integer_power_refuses_negative_exponents_before_writing(dtype):
    a = np.array([2, 3, 4], dtype)
    e = np.array([1, -1, 2], "int8")
    out = np.full(3, 9, np.result_type(a, e))
    with pytest.raises(ValueError, match="Integers to negative integer powers are not allowed."):
        run("power", a, e, out=out)
    assert (out == 9).all()
    # masked-out negative exponents are not looked at (NumPy does the same)
    run("power", a, e, out=out, where=np.array([True, False, True]))
    assert out.tolist() == [2, 9, 16]
    with pytest.raises(ValueError):
        ref("power", a, e)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_07b_float_square_is_x_times_x_and_cube_within_an_ulp(dtype):
    # x**2 multiplies (one rounding of the exact square), so it is x * x
    # bit for bit; float32 x**3 is within 1 ulp of the correctly rounded cube.
    rng = np.random.default_rng(3)
    a = np.concatenate([rng.uniform(-10, 10, 4096), [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, 3e38]]).astype(dtype)
    sq = run("power", a, np.full_like(a, 2))
    with np.errstate(all="ignore"):
        assert_same(sq, a * a, "x**2")
    if dtype == "float32":
        cube = run("power", a, np.full_like(a, 3))
        with np.errstate(all="ignore"):
            want = (a.astype(np.float64) ** 3).astype(np.float32)
        assert ulp_diff(cube, want).max() <= 1


@pytest.mark.parametrize("name", ["exp", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
                                  "tanh", "arctan"])
def test_07c_float32_vector_loop_matches_the_scalar_function_bit_for_bit(name):
    # A contiguous float32 array goes through fmath's vector array form (the
    # host's widest clone), a strided one element by element through the
    # scalar function: Note [fmath vector kernels] says they give the same bits.
    rng = np.random.default_rng(11)
    u = rng.integers(0, 1 << 32, 1 << 16, dtype=np.uint64).astype(np.uint32)
    u[::3] = (u[::3] & np.uint32(0x807FFFFF)) | (rng.integers(100, 150, u[::3].size).astype(np.uint32) << np.uint32(23))
    a = np.concatenate([u.view(np.float32), np.float32([0, -0.0, np.inf, -np.inf, np.nan, 2.0**19, -(2.0**19), 1e-45])])
    with np.errstate(all="ignore"):
        vec = run(name, a)
        strided = np.empty(2 * a.size, np.float32)[::2]
        strided[...] = a
        one = run(name, strided)
    assert_same(vec, np.ascontiguousarray(one), name)


def test_08_mixed_int64_uint64_comparisons_are_exact():
    a = np.array([2**63 - 1, -1, 0, 2**62, -(2**63)], np.int64)
    b = np.array([2**63, 2**64 - 1, 0, 2**62, 0], np.uint64)
    for name in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"):
        assert_same(run(name, a, b), ref(name, a, b), name)
        assert_same(run(name, b, a), ref(name, b, a), name)
        assert_same(run(name, a.astype(np.int8), b), ref(name, a.astype(np.int8), b), name)
    assert not run("equal", a[:1], b[:1])[0]  # float64 would say 2**63 - 1 == 2**63


def test_09_float16_and_bfloat16_round_once_from_float32():
    # e.g. 1 + 2**-11 is exact in float32 and a tie in float16
    h = np.array([1.0, 2049.0, 65504.0, 6e-8], np.float16)
    assert_same(run("add", h, np.array([2**-11, 1.0, 16.0, 6e-8], np.float16)), ref("add", h, np.array([2**-11, 1.0, 16.0, 6e-8], np.float16)))
    b = np.array([1.0, 3.0, 255.0], BF16)
    assert_same(run("multiply", b, b), ref("multiply", b, b))
    # an input of another dtype forced into a bfloat16 loop is rounded to
    # bfloat16 first; the result is rounded to bfloat16 before a float32 out
    x = np.array([1 + 2**-9, 1 + 2**-7 + 2**-9], np.float32)
    out = np.empty(2, np.float32)
    run("add", x, np.zeros(2, np.float32), out=out, loop="EE->E")
    assert_same(out, x.astype(BF16).astype(np.float32))


# --- strides, broadcasting, where, out casts, in place ---------------------------

HYPO_OPS = ["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "maximum", "minimum", "less",
            "equal", "logical_xor", "bitwise_or", "right_shift", "negative", "absolute", "sqrt", "square", "rint",
            "isnan", "sign", "where"]  # fmt: skip


@st.composite
def strided(draw, shape, dtype, rng):
    """A view of `shape` into a larger array: steps of +-1..3, axes permuted."""
    nd = len(shape)
    steps = [draw(st.sampled_from([1, 2, 3, -1, -2])) for _ in shape]
    perm = draw(st.permutations(range(nd))) if nd else []
    base_shape = [max(1, n * abs(s)) for n, s in zip(shape, steps)]
    base_perm = [base_shape[p] for p in perm]
    base = rand(dtype, int(np.prod(base_perm)) or 1, rng)[: int(np.prod(base_perm))].reshape(base_perm)
    if nd == 0:
        return base.reshape(())  # a 0-d array, not a scalar
    view = base.transpose(np.argsort(perm))[tuple(slice(None, None, s) for s in steps)]
    return view[tuple(slice(0, n) for n in shape)]


@st.composite
def ufunc_case(draw):
    name = draw(st.sampled_from(HYPO_OPS))
    nin = ew.info(name)["nin"]
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=0, max_size=4)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    dtypes = [draw(st.sampled_from(NAMES)) for _ in range(nin)]
    if name == "where":
        dtypes[0] = draw(st.sampled_from(["bool", "float32", "int8"]))
    if ew.resolve(name, dtypes) is None:
        dtypes = ["float64"] * nin if name not in ("bitwise_or", "right_shift") else ["int16"] * nin
        if name == "where":
            dtypes[0] = "bool"
    inputs = []
    for d in dtypes:
        # broadcast: some trailing dims kept, others 1, leading ones dropped
        drop = draw(st.integers(0, len(shape)))
        sub = tuple(1 if draw(st.booleans()) and draw(st.booleans()) else n for n in shape[drop:])
        inputs.append(draw(strided(sub, d, rng)))
    out_dtype = draw(st.one_of(st.none(), st.sampled_from(NAMES)))
    where = draw(st.sampled_from([None, "array", "broadcast"]))
    inplace = draw(st.booleans())
    return name, shape, inputs, out_dtype, where, inplace, rng


@given(ufunc_case())
def test_10_strides_broadcasting_where_casts_and_in_place(case):
    name, shape, inputs, out_dtype, where_kind, inplace, rng = case
    rdt = ew.resolve(name, [a.dtype.name for a in inputs])
    natural = ref(name, *inputs)
    natural = np.broadcast_to(natural, shape)
    odt = np_dtype(out_dtype or rdt)
    w = None
    if where_kind == "array":
        w = rng.integers(0, 2, shape).astype(bool)
    elif where_kind == "broadcast" and shape:
        w = rng.integers(0, 2, shape[-1:]).astype(bool)
    full = [i for i, a in enumerate(inputs) if a.shape == shape and a.dtype == odt]
    if inplace and full:
        out = inputs[full[0]]  # out is the very memory of an input
    else:
        out = strided_out = rand(odt.name, int(np.prod(shape)) or 1, rng)[: int(np.prod(shape))].reshape(shape)
        if shape and rng.integers(0, 2):
            out = np.flip(strided_out, axis=0)
    before = out.copy()
    want = np_cast(natural, odt)
    if w is not None:
        want = np.where(np.broadcast_to(w, shape), want, before)
    run(name, *inputs, out=out, where=w)
    assert_same(out, want, f"{name} {[a.dtype.name for a in inputs]} -> {odt.name}")


def test_11_zero_dimensional_and_empty():
    a = np.array(3.5, np.float32)
    out = np.empty((), np.float32)
    ew.ufunc("multiply", [], [operand(a), operand(a)], operand(out))
    assert out == np.float32(12.25)
    e = np.empty((0, 3), np.int16)
    ew.ufunc("add", [0, 3], [operand(e), operand(e)], (0, (6, 2), "int16"))  # a null address is never touched


def test_11b_where_masks_of_other_dtypes_and_the_dimension_limit():
    a = np.arange(6, dtype=np.int16)
    mask = np.array([0.0, np.nan, -0.0, 2.0, 0.5, 0.0], np.float32)  # truth values: NaN and 0.5 are true
    out = np.full(6, -1, np.int16)
    run("negative", a, out=out, where=mask)
    assert out.tolist() == [-1, -1, -1, -3, -4, -1]
    x = np.ones(1, np.float32)
    too_deep = (x.ctypes.data, (0,) * 65, "float32")  # NumPy itself stops at 64 dimensions
    with pytest.raises(ValueError, match="dimensions"):
        ew.ufunc("add", [1] * 65, [too_deep, too_deep], too_deep)


def test_12_large_calls_split_over_the_pool_give_the_same_result():
    rng = np.random.default_rng(RNG_SEED)
    n = (1 << 20) + 37  # from 2^20 elements of an add
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(BF16)
    assert_same(run("add", a, b), ref("add", a, b))  # casts on every piece
    c = a[::-3]
    assert_same(run("multiply", c, c), c * c)
    x = rng.integers(-1000, 1000, n).astype(np.int32)
    assert_same(run("floor_divide", x, np.int32(7)), x // 7)
    w = rng.integers(0, 2, n).astype(bool)
    out = np.zeros(n, np.float64)
    run("multiply", a, b, out=out, where=w)  # casts and a mask on every piece
    assert_same(out, np.where(w, (a * b).astype(np.float64), 0.0))


# --- casts ------------------------------------------------------------------------


def cast(src, to):
    dst = np.empty(src.shape, np_dtype(to))
    ew.copy_cast(list(src.shape), operand(src), operand(dst))
    return dst


@pytest.mark.parametrize("frm", NAMES)
def test_13_every_cast_matches_numpy(frm):
    rng = np.random.default_rng(RNG_SEED)
    x = values(frm, rng, 2000)
    for to in NAMES:
        assert_same(cast(x, to), np_cast(x, to), f"{frm} -> {to}")
        assert_same(cast(x[::-2], to), np_cast(x[::-2], to), f"{frm} -> {to} strided")


def test_14_bfloat16_to_integer_is_ml_dtypes_even_out_of_range():
    bits = np.arange(2**16, dtype=np.uint16).view(BF16)
    for to in INTS + ["bool"]:
        with np.errstate(all="ignore"):
            assert_same(cast(bits, to), bits.astype(to), to)


def test_15_float_to_integer_out_of_range_is_zero():
    x = np.array([np.nan, np.inf, -np.inf, 300.0, -129.0, -0.9, 255.9, 2.0**63, -(2.0**63), 2.0**64, -1.0])
    assert cast(x, "int8").tolist() == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1]
    assert cast(x, "uint8").tolist() == [0, 0, 0, 0, 0, 0, 255, 0, 0, 0, 0]
    assert cast(x, "int64").tolist() == [0, 0, 0, 300, -129, 0, 255, 0, -(2**63), 0, -1]
    assert cast(x, "uint64").tolist() == [0, 0, 0, 300, 0, 0, 255, 2**63, 0, 0, 0]


@given(st.integers(0, 2**64 - 1), st.integers(0, 2**32 - 1), st.integers(-(2**63), 2**63 - 1))
def test_16_single_rounding_to_16_bit_floats(b64, b32, i64):
    d = np.array([b64], np.uint64).view(np.float64)
    f = np.array([b32], np.uint32).view(np.float32)
    i = np.array([i64], np.int64)
    for x in (d, f, i, i.view(np.uint64)):
        for to in ("float16", "bfloat16", "float32"):
            assert_same(cast(x, to), np_cast(x, to), f"{x.dtype} {x[0]!r} -> {to}")


def test_17_portable_and_vector_conversions_agree():
    rng = np.random.default_rng(RNG_SEED)
    h = np.arange(2**16, dtype=np.uint16)
    f = np.concatenate([rng.integers(0, 2**32, 1 << 20, dtype=np.uint64).astype(np.uint32),
                        (np.arange(-2**12, 2**12, dtype=np.int64)[:, None] * 2**19
                         + np.array([0, 1, 0xFFF, 0x1000, 0x1001, 0x2000, 0x7FFFF])).ravel().astype(np.uint32)])  # fmt: skip
    got = {}
    try:
        for portable in (False, True):
            ew.force_portable_half_casts(portable)
            got[portable] = [cast(h.view(np.float16), "float32"), cast(f.view(np.float32), "float16"),
                             cast(h.view(BF16), "float32"), cast(f.view(np.float32), "bfloat16")]  # fmt: skip
        assert ew.half_cast_path() == "portable"
    finally:
        ew.force_portable_half_casts(False)
    for a, b in zip(got[False], got[True]):
        assert (uint_view(a) == uint_view(b)).all()
    # NumPy's own casts raise FE_INVALID on signalling NaNs on arm64 (hardware FCVT).
    with np.errstate(all="ignore"):
        assert_same(got[True][0], h.view(np.float16).astype(np.float32))
        assert_same(got[True][1], f.view(np.float32).astype(np.float16))


def test_18_same_dtype_and_bfp16():
    x = np.arange(24, dtype=np.int32).reshape(4, 6)[:, ::-2]
    assert_same(cast(x, "int32"), x)
    with pytest.raises(ValueError, match="numeric"):
        ew.copy_cast([2], operand(np.zeros(2, np.float32)), (0, (9,), "bfp16"))


# --- reductions -------------------------------------------------------------------


def reduce(name, x, axes, acc, out_dtype=None, divisor=0.0):
    """Our reduction of x over `axes` (a tuple) in keepdims layout."""
    flags = [d in axes for d in range(x.ndim)]
    kshape = tuple(1 if f else n for f, n in zip(flags, x.shape))
    out = np.zeros(kshape, np_dtype(out_dtype or acc))
    strides = tuple(0 if f else s for f, s in zip(flags, out.strides))
    ew.reduce(name, acc, list(x.shape), flags, operand(x), (out.ctypes.data, strides, out.dtype.name), divisor)
    return out


INT_REDUCERS = ["add", "multiply", "maximum", "minimum", "logical_and", "logical_or", "logical_xor",
                "bitwise_and", "bitwise_or", "bitwise_xor"]  # fmt: skip


def axis_sets(nd):
    return [s for r in range(nd + 1) for s in itertools.combinations(range(nd), r)]


@pytest.mark.parametrize("dtype", ["bool"] + INTS)
def test_19_integer_and_bool_reductions_are_exact(dtype):
    rng = np.random.default_rng(RNG_SEED)
    x = rand(dtype, 3 * 5 * 70, rng).reshape(3, 5, 70)
    for name in INT_REDUCERS:
        u = getattr(np, name)
        for axes in axis_sets(3):
            with np.errstate(all="ignore"):
                want = u.reduce(x, axis=axes, keepdims=True)
            if name in ("add", "multiply"):
                acc = np.add.reduce(x).dtype.name  # NumPy's sum default: int64/uint64
                with np.errstate(all="ignore"):
                    want = u.reduce(x, axis=axes, keepdims=True, dtype=acc)
            else:
                acc = want.dtype.name
            assert_same(reduce(name, x, axes, acc), want, f"{name} {axes}")
            assert_same(reduce(name, x.T, tuple(2 - a for a in axes), acc), want.T, f"{name} {axes} T")


def sum_bound(x64, axes, acc):
    """|error| allowed for a float sum: sum|x| * eps(accumulation) * min(n, pairwise depth), plus the final rounding."""
    n = int(np.prod([x64.shape[a] for a in axes])) if axes else 1
    ct = "float64" if acc == "float64" else "float32"
    eps = float(np.finfo(np.dtype(ct)).eps)
    depth = min(n, 1024 // 32 + 2 * int(np.log2(max(n, 2))) + 2)
    final = float(ml_dtypes.finfo(BF16).eps) if acc == "bfloat16" else float(np.finfo(np_dtype(acc)).eps)
    s = np.abs(x64).sum(axis=axes, keepdims=True)
    return s * eps * depth + np.abs(x64.sum(axis=axes, keepdims=True)) * final


@pytest.mark.parametrize("dtype", sorted(FLOATS))
def test_20_float_sums_within_the_pairwise_bound(dtype):
    rng = np.random.default_rng(RNG_SEED)
    acc = dtype
    for shape in [(3, 5, 70), (2, 3000), (40000,), (1,), (7, 1, 3)]:
        x = (rng.standard_normal(shape) * 10).astype(np.float32).astype(np_dtype(dtype))
        x64 = f64(x)
        for axes in axis_sets(len(shape)):
            got = reduce("add", x, axes, acc).astype(np.float64)
            err = np.abs(got - x64.sum(axis=axes, keepdims=True))
            assert (err <= sum_bound(x64, axes, acc)).all(), (shape, axes, err.max())


def test_21_float_sums_do_not_depend_on_layout():
    # Note [Reduction order]: the same values in the same C order of the
    # reduced dimensions give the same bits, whatever the strides and code path.
    rng = np.random.default_rng(RNG_SEED)
    x = rng.standard_normal((300, 70, 3)).astype(np.float32)
    for axes in [(0,), (1,), (0, 1), (0, 2), (0, 1, 2)]:
        want = reduce("add", np.ascontiguousarray(x), axes, "float32")
        assert_same(reduce("add", np.asfortranarray(x), axes, "float32"), want, axes)
        flipped = np.flip(np.flip(x, 2).copy(), 2)  # negative strides on the last dim
        assert_same(reduce("add", flipped, axes, "float32"), want, axes)
        assert_same(reduce("add", x.astype(np.float16), axes, "float32"), reduce("add", x.astype(np.float16).astype(np.float32), axes, "float32"))


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "minimum"])
def test_21b_wide_row_reductions_match_the_transposed_layout(name):
    # axis 0 of a C array walks rows (tiles of outputs, lanes by rows); of an
    # F array it walks each output's column: both give the same bits.
    rng = np.random.default_rng(RNG_SEED)
    x = (1 + rng.standard_normal((1100, 300)) * 0.01).astype(np.float32)
    x[5, 7] = np.nan
    for src, acc in [(x, "float32"), (x.astype(BF16), "float32"), (x.astype(np.float64), "float64")]:
        want = reduce(name, np.asfortranarray(src), (0,), acc)
        assert_same(reduce(name, np.ascontiguousarray(src), (0,), acc), want, (name, src.dtype))
        backwards = np.flip(np.flip(src, 0).copy(), 0)  # rows at negative strides
        assert_same(reduce(name, backwards, (0,), acc), want, (name, src.dtype))


def test_22_long_sums_split_over_the_pool_are_the_same_bits():
    rng = np.random.default_rng(RNG_SEED)
    x = rng.standard_normal(17 * 65536 + 1000).astype(np.float32)  # over 2^20: the pool is used
    whole = reduce("add", x, (0,), "float32")  # one output: its groups split over the pool
    cols = reduce("add", np.repeat(x[:, None], 4, axis=1), (0,), "float32")  # one tile, walked by one thread
    assert_same(cols, np.full((1, 4), whole[0]))
    err = abs(float(whole[0]) - f64(x).sum())
    assert err <= sum_bound(f64(x), (0,), "float32")[0]
    assert_same(reduce("add", x, (0,), "float32"), whole)  # deterministic


@pytest.mark.parametrize("dtype", sorted(FLOATS))
def test_23_float_max_min_and_products(dtype):
    rng = np.random.default_rng(RNG_SEED)
    x = np.resize(values(dtype, rng, 4000), (64, 65))
    x = np.where(is_nan(x), np.zeros_like(x), x)
    x[3, 7] = np.nan  # one NaN: its row and column become NaN
    for name in ("maximum", "minimum"):
        for axes in axis_sets(2)[1:]:
            with np.errstate(all="ignore"):
                want = getattr(np, name).reduce(x, axis=axes, keepdims=True)
            got = reduce(name, x, axes, dtype)
            # +-0 ties may come out either way round; compare values
            assert ((f64(got) == f64(want)) | (is_nan(got) & is_nan(want))).all(), (name, axes)
    y = (1 + rng.standard_normal((50, 40)) * 0.01).astype(np_dtype(dtype))
    got = reduce("multiply", y, (0,), dtype).astype(np.float64)
    want = np.prod(f64(y), axis=0, keepdims=True)
    tol = 60 * float(np.finfo(np.float32 if dtype != "float64" else np.float64).eps)
    tol += float(ml_dtypes.finfo(BF16).eps if dtype == "bfloat16" else np.finfo(np_dtype(dtype)).eps)
    assert (np.abs(got - want) <= tol * np.abs(want)).all()


def test_24_mean_divides_in_float64_like_numpy():
    rng = np.random.default_rng(RNG_SEED)
    x = rng.integers(-50, 50, (30, 7)).astype(np.int16)
    assert_same(reduce("add", x, (0,), "float64", divisor=30.0)[0], np.mean(x, axis=0))
    h = (rng.standard_normal((20, 9)) * 4).astype(np.float16)
    got = reduce("add", h, (0,), "float32", out_dtype="float16", divisor=20.0)[0]
    assert_same(got, np.mean(h, axis=0))


def test_25_empty_reductions_give_the_identity():
    e = np.empty((0, 4), np.float32)
    assert_same(reduce("add", e, (0,), "float32"), np.zeros((1, 4), np.float32))
    assert not np.signbit(reduce("add", e, (0,), "float32")).any()
    assert_same(reduce("multiply", e, (0, 1), "float32"), np.ones((1, 1), np.float32))
    assert_same(reduce("bitwise_and", np.empty((0,), np.uint16), (0,), "uint16"), np.array([65535], np.uint16))
    assert_same(reduce("logical_and", np.empty((0,), np.int8), (0,), "bool"), np.array([True]))
    with pytest.raises(ValueError, match="without identity"):
        reduce("maximum", e, (0,), "float32")
    reduce("add", np.empty((3, 0), np.float32), (0,), "float32")  # no outputs: nothing to do


def test_26_sums_start_from_the_identity_and_errors():
    z = np.full(5, -0.0, np.float32)
    assert not np.signbit(reduce("add", z, (0,), "float32")[0])  # 0.0 + -0.0 + ... is +0.0
    assert not np.signbit(np.add.reduce(z))
    with pytest.raises(ValueError, match="bitwise"):
        reduce("bitwise_or", np.ones(3, np.float32), (0,), "float32")
    with pytest.raises(ValueError, match="no reduction"):
        reduce("subtract", np.ones(3, np.float32), (0,), "float32")


@st.composite
def reduce_case(draw):
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=0, max_size=4)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    dtype = draw(st.sampled_from(NAMES))
    x = draw(strided(shape, dtype, rng))
    axes = tuple(d for d in range(len(shape)) if draw(st.booleans()))
    name = draw(st.sampled_from(["add", "maximum", "minimum", "logical_or", "bitwise_xor"]))
    return name, x, axes


@given(reduce_case())
def test_27_reductions_over_any_axes_and_strides(case):
    name, x, axes = case
    dtype = x.dtype.name
    if name == "bitwise_xor" and dtype in FLOATS:
        name = "add"
    if name == "add":
        acc = np.add.reduce(np.ones(1, x.dtype)).dtype.name if dtype not in FLOATS else dtype
        got = reduce(name, x, axes, acc)
        if dtype in FLOATS:
            x64 = np.where(np.isfinite(f64(x)), f64(x), 0.0)
            xin = x64.astype(x.dtype)
            got = reduce(name, xin, axes, acc).astype(np.float64)
            want = f64(xin).sum(axis=axes, keepdims=True)
            fmax = float((ml_dtypes.finfo(BF16) if acc == "bfloat16" else np.finfo(np_dtype(acc))).max)
            fits = np.abs(want) < fmax / 2  # else the sum may round to inf
            err = np.abs(got - want)
            assert (~fits | (err <= sum_bound(f64(xin), axes, acc))).all()
            return
        with np.errstate(all="ignore"):
            want = np.add.reduce(x, axis=axes, keepdims=True, dtype=acc)
        assert_same(got, want)
        return
    with np.errstate(all="ignore"):
        want = getattr(np, name).reduce(x, axis=axes, keepdims=True)
    got = reduce(name, x, axes, want.dtype.name)
    if dtype in FLOATS:
        assert ((f64(got) == f64(want)) | (is_nan(got) & is_nan(want))).all()
    else:
        assert_same(got, want)


def arg(is_max, x, axis):
    if axis is None:
        out = np.empty((), np.int64)
        ew.arg_reduce(is_max, list(x.shape), -1, operand(x), (out.ctypes.data, (0,) * x.ndim, "int64"))
        return out
    kshape = tuple(1 if d == axis else n for d, n in enumerate(x.shape))
    out = np.empty(kshape, np.int64)
    strides = tuple(0 if d == axis else s for d, s in enumerate(out.strides))
    ew.arg_reduce(is_max, list(x.shape), axis, operand(x), (out.ctypes.data, strides, "int64"))
    return out


@pytest.mark.parametrize("dtype", NAMES)
def test_28_argmax_argmin_first_extreme_and_first_nan(dtype):
    rng = np.random.default_rng(RNG_SEED)
    x = np.resize(np.repeat(values(dtype, rng, 300), 2), (7, 90))  # ties everywhere
    if dtype in FLOATS:
        x = np.where(is_nan(x), np.zeros_like(x), x)
        x[2, 50], x[2, 70], x[5, 3] = np.nan, np.nan, np.nan
    xs = x[:, ::-1]
    for a in (x, xs, x.T):
        for axis in (None, 0, 1):
            for is_max, f in ((True, np.argmax), (False, np.argmin)):
                want = f(a, axis=axis, keepdims=axis is not None)
                assert_same(arg(is_max, a, axis), want, (dtype, axis, is_max))


def test_29_long_argmax_split_over_the_pool():
    rng = np.random.default_rng(RNG_SEED)
    x = rng.standard_normal(1 << 20).astype(np.float32)
    x[[100, 700000]] = 9.0  # a tie across pieces: the first wins
    assert arg(True, x, None) == 100 == np.argmax(x)
    x[[900000, 300000]] = np.nan
    assert arg(True, x, None) == 300000 == np.argmax(x)
    assert arg(False, x, None) == 300000 == np.argmin(x)
    with pytest.raises(ValueError, match="empty"):
        arg(True, np.empty(0, np.float32), None)
