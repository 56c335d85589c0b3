"""Loom's float math ops (scalar.* and lanewise vector.*, loom.md §3.2) on f16, bf16, f32 and f64,
run as GPU kernels through hx.loom.ufunc and compared with float64 NumPy / Python math references
rounded to the kernel's type, within the bounds of Note [Loom math accuracy] (kernels/fmath.cpp):
1 ulp for f32 (and for f16/bf16, computed in f32 and rounded once more), a few ulp for f64 against
NumPy (1 ulp against a long double reference for the functions with fmath64.h's kernels), bit-exact
for the exact ops. Also: the edge cases of clampf's modes, geluf's
variants, rounding, remf, signf and min/max; plan-time refusals; and that hx's ufuncs give the
same bits as the Loom ops (one implementation)."""

import math
import os
import subprocess
import sys
import zlib
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hrxarray as hx

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = {"f16": np.dtype(np.float16), "bf16": BF16, "f32": np.dtype(np.float32), "f64": np.dtype(np.float64)}
INT_OF = {"f16": np.int16, "bf16": np.int16, "f32": np.int32, "f64": np.int64}

HEADER = """amdgpu.target<gfx1151> @gpu
kernel.def target(@gpu) export("k") @k(%count: index) {
  %one = index.constant 1 : index
  %width = index.constant 256 : index
  %spare = index.constant 255 : index
  %n = index.assume %count [range(%count, 1, 1073741824)] : index
  %padded = index.add %n, %spare : index
  %groups = index.div %padded, %width : index
  kernel.launch.config workgroups(%groups, %one, %one) workgroup_size(%width, %one, %one) : index
}"""


def kernel_source(op, ty, nin, vector, out_ty=None):
    """A kernel applying `scalar.<op>` (or `vector.<op>` on vector<4x ty>) to nin inputs of type ty.

    Each work-item handles one element (scalar) or four (vector; count must be a multiple of 4).
    With out_ty (an integer type) the i1 result is widened to it with extui.
    """
    args = ", ".join(f"%x{j}: buffer" for j in range(nin))
    store_ty = out_ty or ty
    vt = f"vector<4x{ty}>"
    lines = [
        f" launch(%count: index, {args}, %y: buffer) {{",
        "  %width = index.constant 256 : index",
        "  %origin = index.constant 0 : offset",
        "  %item = kernel.workitem.id<x> : index",
        "  %group = kernel.workgroup.id<x> : index",
        "  %first = index.mul %group, %width : index",
        "  %i = index.add %first, %item : index",
    ]
    lines += [f"  %v{j} = buffer.view %x{j}[%origin] : buffer -> view<[%count]x{ty}>" for j in range(nin)]
    lines.append(f"  %yv = buffer.view %y[%origin] : buffer -> view<[%count]x{store_ty}>")
    operands = ", ".join(f"%a{j}" for j in range(nin))
    if vector:
        lines += ["  %four = index.constant 4 : index", "  %o = index.mul %i, %four : index",
                  "  %inside = index.cmp ult, %o, %count : index", "  scf.if %inside {"]
        lines += [f"    %a{j} = vector.load %v{j}[%o] : view<[%count]x{ty}> -> {vt}" for j in range(nin)]
        lines.append(f"    %r = vector.{op} {operands} : {vt}")
        if out_ty:
            lines.append(f"    %w = vector.extui %r : vector<4xi1> to vector<4x{out_ty}>")
        res = "%w" if out_ty else "%r"
        lines.append(f"    vector.store {res}, %yv[%o] : vector<4x{store_ty}>, view<[%count]x{store_ty}>")
    else:
        lines += ["  %inside = index.cmp ult, %i, %count : index", "  scf.if %inside {"]
        lines += [f"    %a{j} = view.load %v{j}[%i] : view<[%count]x{ty}> -> {ty}" for j in range(nin)]
        lines.append(f"    %r = scalar.{op} {operands} : {ty}")
        if out_ty:
            lines.append(f"    %w = scalar.extui %r : i1 to {out_ty}")
        res = "%w" if out_ty else "%r"
        lines.append(f"    view.store {res}, %yv[%i] : {store_ty}, view<[%count]x{store_ty}>")
    lines += ["  }", "  kernel.return", "}", ""]
    return HEADER + "\n".join(lines)


_KERNELS = {}


def run_op(op, ty, *inputs, vector=False, out_ty=None):
    """The op applied by a Loom kernel to same-length 1-D arrays of ty (a NumPy array)."""
    key = (op, ty, len(inputs), vector, out_ty)
    if key not in _KERNELS:
        _KERNELS[key] = hx.loom.ufunc(kernel_source(op, ty, len(inputs), vector, out_ty), "k")
    n = len(inputs[0])
    pad = (-n) % 4 if vector else 0
    xs = [np.concatenate([np.asarray(a, DTYPES[ty]), np.ones(pad, DTYPES[ty])]) for a in inputs]
    return hx.to_numpy(_KERNELS[key](*xs))[:n]


# --------------------------------------------------------------------------- references (float64)

def _vec(f):
    return np.vectorize(f, otypes=[np.float64])


def _logistic(x):
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


def _turns(x, sine):
    # sin/cos(2 pi x) from the nearest quarter turn k/4: r = x - k/4 is exact, so the angle 2 pi r
    # (within pi/4) carries one rounding, and quarter turns give exact zeros and ones.
    finite = np.isfinite(x)
    # From 2^53 on every double is a whole number of turns (angle 0); reducing those to 0 first
    # also keeps 4 * x from overflowing to inf near the top of the range.
    x0 = np.where(finite & (np.abs(x) < 2.0 ** 53), x, 0.0)
    k = np.round(4 * x0)
    a = 2 * np.pi * (np.where(finite, x0, np.nan) - k / 4)
    q = np.mod(k, 4).astype(int)
    s, c = np.sin(a), np.cos(a)
    if sine:
        v = np.choose(q, [s, c, -s, -c])
        return np.where(v == 0, np.copysign(0.0, x), v)
    return np.choose(q, [c, -s, -c, s]) + 0.0


def _at_neg_inf_zero(f):
    # x * (something that vanishes faster) at -inf: the limit -0, not NumPy's -inf * 0 = NaN.
    return lambda x: np.where(x == -np.inf, -0.0, f(x))


def _round_away(x):
    return np.copysign(np.floor(np.abs(x) + 0.5), x)


def _min_signed(a, b):
    # -0 below +0 (C's fmin leaves the zero to the host; fmath orders them).
    return np.where((a == b) & (a == 0), np.where(np.signbit(a), a, b), np.fmin(a, b))


def _max_signed(a, b):
    return np.where((a == b) & (a == 0), np.where(np.signbit(a), b, a), np.fmax(a, b))


def _nan_either(a, b, r):
    return np.where(np.isnan(a) | np.isnan(b), np.nan, r)


SQRT1_2 = math.sqrt(0.5)
# op -> (reference on float64, input range (lo, hi), exact op?)
UNARY = {
    "negf": (np.negative, (-1e30, 1e30), True),
    "absf": (np.abs, (-1e30, 1e30), True),
    "signf": (lambda x: np.where(x == 0, x, np.sign(x)), (-10, 10), True),
    "sqrtf": (np.sqrt, (0, 1e30), False),
    "rsqrtf": (lambda x: 1.0 / np.sqrt(x), (0, 1e30), False),
    "cbrtf": (np.cbrt, (-1e30, 1e30), False),
    "expf": (np.exp, (-110, 90), False),
    "exp2f": (np.exp2, (-155, 130), False),
    "expm1f": (np.expm1, (-20, 90), False),
    "logf": (np.log, (0, 1e30), False),
    "log2f": (np.log2, (0, 1e30), False),
    "log10f": (np.log10, (0, 1e30), False),
    "log1pf": (np.log1p, (-1, 100), False),
    "sinf": (np.sin, (-1e4, 1e4), False),
    "cosf": (np.cos, (-1e4, 1e4), False),
    "tanf": (np.tan, (-1e4, 1e4), False),
    "sinturnsf": (lambda x: _turns(x, True), (-50, 50), False),
    "costurnsf": (lambda x: _turns(x, False), (-50, 50), False),
    "asinf": (np.arcsin, (-1, 1), False),
    "acosf": (np.arccos, (-1, 1), False),
    "atanf": (np.arctan, (-1e6, 1e6), False),
    "sinhf": (np.sinh, (-90, 90), False),
    "coshf": (np.cosh, (-90, 90), False),
    "tanhf": (np.tanh, (-12, 12), False),
    "asinhf": (np.arcsinh, (-1e6, 1e6), False),
    "acoshf": (np.arccosh, (1, 1e6), False),
    "atanhf": (np.arctanh, (-1, 1), False),
    "erff": (_vec(math.erf), (-5, 5), False),
    "erfcf": (_vec(math.erfc), (-4, 11), False),
    "logisticf": (_logistic, (-110, 110), False),
    "siluf": (_at_neg_inf_zero(lambda x: x * _logistic(x)), (-110, 100), False),
    "softplusf": (lambda x: np.logaddexp(0.0, x), (-110, 100), False),
    "geluf<erf>": (_at_neg_inf_zero(lambda x: 0.5 * x * _vec(math.erfc)(-x * SQRT1_2)), (-15, 15), False),
    "geluf<tanh>": (_at_neg_inf_zero(lambda x: x * _logistic(2 * math.sqrt(2 / math.pi) * (x + 0.044715 * (x * x * x)))),
                    (-12, 12), False),
    "geluf<logistic>": (_at_neg_inf_zero(lambda x: x * _logistic(1.702 * x)), (-70, 70), False),
    "roundf": (_round_away, (-100, 100), True),
    "roundevenf": (np.rint, (-100, 100), True),
    "floorf": (np.floor, (-100, 100), True),
    "ceilf": (np.ceil, (-100, 100), True),
    "truncf": (np.trunc, (-100, 100), True),
}
BINARY = {
    "addf": (np.add, (-1e4, 1e4), True),
    "subf": (np.subtract, (-1e4, 1e4), True),
    "mulf": (np.multiply, (-1e4, 1e4), True),
    "divf": (np.divide, (-1e4, 1e4), True),
    "remf": (np.fmod, (-100, 100), True),
    "copysignf": (np.copysign, (-100, 100), True),
    "minnumf": (_min_signed, (-100, 100), True),
    "maxnumf": (_max_signed, (-100, 100), True),
    "minimumf": (lambda a, b: _nan_either(a, b, _min_signed(a, b)), (-100, 100), True),
    "maximumf": (lambda a, b: _nan_either(a, b, _max_signed(a, b)), (-100, 100), True),
    "powf": (np.power, (0, 10), False),
    "atan2f": (np.arctan2, (-100, 100), False),
    "hypotf": (np.hypot, (-1e20, 1e20), False),
}
CLAMP = {
    "clampf<ordered>": lambda x, lo, hi: (lambda r: np.where(r > hi, hi, r))(np.where(x < lo, lo, x)),
    "clampf<number>": lambda x, lo, hi: _min_signed(_max_signed(x, lo), hi),
    "clampf<ieee>": lambda x, lo, hi: np.where(np.isnan(x) | np.isnan(lo) | np.isnan(hi), np.nan,
                                               _min_signed(_max_signed(x, lo), hi)),
}
TESTS = {"isnanf": np.isnan, "isinff": np.isinf, "isfinitef": np.isfinite}

# Within 1 ulp (f32; f16/bf16 round the f32 result once more); f64 is glibc against NumPy's SIMD code
# and Python's math.
ULP = {"f16": 1, "bf16": 1, "f32": 1, "f64": 4}

EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 2.5, 3.0, 1e-30, -1e-30, 1e-40, -1e-40, 1e30, -1e30,
         np.inf, -np.inf, np.nan]


def inputs(ty, lo, hi, n, rng, edges=True):
    """n values of ty: uniform over [lo, hi], log-uniform magnitudes inside it, and the edge cases."""
    m = max(abs(lo), abs(hi))
    u = rng.uniform(lo, hi, n // 2)
    mag = np.exp(rng.uniform(math.log(1e-30), math.log(m), n - n // 2))
    s = rng.choice([-1.0, 1.0], n - n // 2) if lo < 0 else 1.0
    x = np.concatenate([u, s * mag] + ([np.array(EDGES)] if edges else []))
    with np.errstate(over="ignore"):
        return x.astype(DTYPES[ty])


def ulp_diff(got, want, ty):
    """Distance in ulps of ty between two arrays of ty (NaN = NaN; a zero of the other sign is far)."""
    it = INT_OF[ty]
    bits = 8 * np.dtype(it).itemsize

    def ordered(a):
        i = a.view(it).astype(np.int64)
        return np.where(i < 0, -(i & ((1 << (bits - 1)) - 1)) - 1, i)

    d = np.abs(ordered(got) - ordered(want))
    g, w = got.astype(np.float64), want.astype(np.float64)
    # A zero of the wrong sign is wrong however close: count it as far away.
    d = np.where((g == 0) & (w == 0) & (np.signbit(g) != np.signbit(w)), 1 << 20, d)
    return np.where(np.isnan(g) & np.isnan(w), 0, d)


def check(op, ty, got, want, exact, args):
    with np.errstate(over="ignore"):
        want = want.astype(DTYPES[ty])
    d = ulp_diff(got, want, ty)
    bound = 0 if exact else ULP[ty]
    if d.max() > bound:
        i = int(d.argmax())
        raise AssertionError(f"{op} {ty}: {d.max()} ulp at {[a[i] for a in args]}: got {got[i]!r}, want {want[i]!r}")


def reference(f, *args):
    with np.errstate(all="ignore"):
        return np.asarray(f(*[a.astype(np.float64) for a in args]), np.float64)


# --------------------------------------------------------------------------- every op, type and form

@pytest.mark.parametrize("vector", [False, True], ids=["scalar", "vector"])
@pytest.mark.parametrize("ty", list(DTYPES))
@pytest.mark.parametrize("op", list(UNARY))
def test_unary_op_matches_reference(op, ty, vector):
    f, (lo, hi), exact = UNARY[op]
    x = inputs(ty, lo, hi, 200, np.random.default_rng(zlib.crc32(f"{op} {ty}".encode())))
    check(op, ty, run_op(op, ty, x, vector=vector), reference(f, x), exact, [x])


@pytest.mark.parametrize("vector", [False, True], ids=["scalar", "vector"])
@pytest.mark.parametrize("ty", list(DTYPES))
@pytest.mark.parametrize("op", list(BINARY))
def test_binary_op_matches_reference(op, ty, vector):
    f, (lo, hi), exact = BINARY[op]
    rng = np.random.default_rng(zlib.crc32(f"{op} {ty}".encode()))
    a = inputs(ty, lo, hi, 200, rng)
    b = rng.permutation(inputs(ty, lo, hi, 200, rng))
    check(op, ty, run_op(op, ty, a, b, vector=vector), reference(f, a, b), exact, [a, b])


@pytest.mark.parametrize("vector", [False, True], ids=["scalar", "vector"])
@pytest.mark.parametrize("ty", list(DTYPES))
@pytest.mark.parametrize("op", list(CLAMP))
def test_clampf_matches_reference(op, ty, vector):
    rng = np.random.default_rng(7)
    x = inputs(ty, -10, 10, 120, rng)
    lo = rng.permutation(inputs(ty, -5, 0, 120, rng))
    hi = rng.permutation(inputs(ty, 0, 5, 120, rng))
    check(op, ty, run_op(op, ty, x, lo, hi, vector=vector), reference(CLAMP[op], x, lo, hi), True, [x, lo, hi])


@pytest.mark.parametrize("vector", [False, True], ids=["scalar", "vector"])
@pytest.mark.parametrize("ty", list(DTYPES))
@pytest.mark.parametrize("op", list(TESTS))
def test_float_classification(op, ty, vector):
    x = inputs(ty, -1e30, 1e30, 40, np.random.default_rng(3))
    got = run_op(op, ty, x, vector=vector, out_ty="i32")
    assert np.array_equal(got, TESTS[op](x.astype(np.float64)).astype(np.int32))


@given(op=st.sampled_from(sorted(UNARY)), ty=st.sampled_from(list(DTYPES)), vector=st.booleans(),
       xs=st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=1, max_size=24))
@settings(max_examples=25, deadline=None)
def test_unary_ops_on_any_floats(op, ty, vector, xs):
    f, _, exact = UNARY[op]
    with np.errstate(over="ignore"):
        x = np.array(xs).astype(DTYPES[ty])
    check(op, ty, run_op(op, ty, x, vector=vector), reference(f, x), exact, [x])


# --------------------------------------------------------------------------- accuracy (f32)

# The f32 bound of Note [Loom math accuracy], over 2^15 inputs per op spanning each op's range
# (plus subnormals, zeros, infinities, NaN and, for sin/cos/tan, arguments up to 3.4e38).
ACCURACY_RANGES = {"sinf": (-3.4e38, 3.4e38), "cosf": (-3.4e38, 3.4e38), "tanf": (-3.4e38, 3.4e38),
                   "logf": (0, 3.4e38), "log2f": (0, 3.4e38), "log10f": (0, 3.4e38), "rsqrtf": (0, 3.4e38)}


@pytest.mark.parametrize("op", [op for op, (_, _, exact) in UNARY.items() if not exact])
def test_f32_accuracy_bound(op):
    f, rng_, _ = UNARY[op]
    lo, hi = ACCURACY_RANGES.get(op, rng_)
    rng = np.random.default_rng(2026)
    x = inputs("f32", lo, hi, 1 << 15, rng)
    x = np.concatenate([x, (rng.integers(1, 1 << 23, 64) * 2.0**-149).astype(np.float32)])  # subnormals
    if lo < 0:
        x = np.concatenate([x, -x[-64:]])
    got = run_op(op, "f32", x)
    with np.errstate(over="ignore"):
        want = reference(f, x).astype(np.float32)
    d = ulp_diff(got, want, "f32")
    assert d.max() <= 1, (op, int(d.max()), x[int(d.argmax())])


# The float functions of fmath's float kernels (Note [float kernels in float], Note [float exp in
# float]) and its double kernels with float-sized polynomials (sin, cos, tan): hx ufunc name,
# reference on long doubles, Loom op, hard region swept densely.
FLOAT_KERNELS = {
    "exp": (np.exp, "expf", (-104.0, 89.0)),
    "expm1": (np.expm1, "expm1f", (-2.0, 2.0)),
    "log": (np.log, "logf", (0.5, 2.0)),
    "log2": (np.log2, "log2f", (0.5, 2.0)),
    "log10": (np.log10, "log10f", (0.5, 2.0)),
    "log1p": (np.log1p, "log1pf", (-0.75, 1.0)),
    "sin": (np.sin, "sinf", (-100.0, 100.0)),
    "cos": (np.cos, "cosf", (-100.0, 100.0)),
    "tan": (np.tan, "tanf", (-100.0, 100.0)),
    "tanh": (np.tanh, "tanhf", (-10.0, 10.0)),
    "arcsin": (np.arcsin, "asinf", (-1.0, 1.0)),
    "arccos": (np.arccos, "acosf", (-1.0, 1.0)),
    "sinh": (np.sinh, "sinhf", (-90.0, 90.0)),
    "cosh": (np.cosh, "coshf", (-90.0, 90.0)),
}


def bit_pattern_inputs(name, n):
    """n random float32 bit patterns (every class), n floats spread over the hard region, specials."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    lo, hi = FLOAT_KERNELS[name][2]
    dense = rng.uniform(lo, hi, n).astype(np.float32)
    bits = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    special = np.array(EDGES + [2.0**-149, -(2.0**-149), 3.4028235e38, -3.4028235e38, 2.0**-24, 88.72283,
                                -17.328679, 2.0**19, 1.5707964, -0.99999994], np.float32)
    return np.concatenate([bits, dense, special])


@pytest.mark.parametrize("name", list(FLOAT_KERNELS))
def test_f32_float_kernels_within_1ulp_of_long_double(name):
    # The error measured against the long double value itself (not against its float rounding):
    # below 1 ulp means the correctly rounded float or its neighbour, whichever way a double
    # rounding would go. bench/math_accuracy.py runs the same check over 10^7 inputs.
    f = FLOAT_KERNELS[name][0]
    x = bit_pattern_inputs(name, 1 << 15)
    got = hx.to_numpy(getattr(hx, name)(hx.asarray(x)))
    wide = np.longdouble if np.finfo(np.longdouble).nmant > 52 else np.float64
    with np.errstate(all="ignore"):
        ref = f(x.astype(wide))
        r32 = ref.astype(np.float32)
    assert np.array_equal(np.isnan(got), np.isnan(ref)), name
    inf = np.isinf(r32) | np.isinf(got)
    assert np.array_equal(got[inf & ~np.isnan(ref)], r32[inf & ~np.isnan(ref)]), name
    fin = np.isfinite(r32) & np.isfinite(got)
    _, e = np.frexp(np.abs(r32[fin]))
    ulp = np.ldexp(wide(1), np.maximum(e.astype(np.int64) - 24, -149))
    err = np.abs(got[fin].astype(wide) - ref[fin]) / ulp
    bound = 1.0 if wide is np.longdouble else 1.0 + 2.0**-20  # float64: its own rounding, 2^-29 ulp
    assert err.max() < bound, (name, float(err.max()), x[fin][int(err.argmax())])
    zero = (r32 == 0) & (got == 0)
    assert np.array_equal(np.signbit(got[zero]), np.signbit(r32[zero])), name  # signed zeros kept


def test_f32_scalar_functions_give_the_array_forms_bits():
    # The Loom interpreter runs the scalar functions (T = float instances of the kernels); hx's
    # ufuncs the array forms (this host's widest clone): the same bits, NaNs included. A fresh
    # process, because a kernel compiled natively earlier in this one would stay native.
    code = """if True:
        import sys
        import numpy as np
        sys.path.insert(0, %r)
        import hrxarray as hx
        from test_loom_math import FLOAT_KERNELS, bit_pattern_inputs, kernel_source
        bad = []
        for name, (_, op, _) in FLOAT_KERNELS.items():
            x = bit_pattern_inputs(name, 1 << 13)
            k = hx.loom.ufunc(kernel_source(op, "f32", 1, False), "k")
            assert k.artifact.executor == "interpreter", k.artifact.executor
            a = hx.to_numpy(getattr(hx, name)(hx.asarray(x))).view(np.uint32)
            b = hx.to_numpy(k(x)).view(np.uint32)
            # The interpreter quiets a signalling NaN on the way in (the array forms return it
            # as it came, as before these kernels): compare NaNs with the quiet bit set.
            a = np.where(np.isnan(a.view(np.float32)), a | 0x400000, a)
            b = np.where(np.isnan(b.view(np.float32)), b | 0x400000, b)
            if not np.array_equal(a, b):
                bad.append((name, int((a != b).sum())))
        print(bad)
    """ % str(Path(__file__).resolve().parent)
    env = dict(os.environ, HRXARRAY_LOOM_NATIVE="0")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip().splitlines()[-1] == "[]", r.stdout


# --------------------------------------------------------------------------- accuracy (f64)

# The f64 functions with fmath64.h's kernels (Note [float64 kernels]): within 1 ulp of a reference
# with 11 more bits (np.longdouble on x86-64), over 2^14 inputs per op (random bit patterns over
# the domain, every exponent and subnormals included, uniform values, and the special values); the
# Loom op (the scalar function) and the hx ufunc (the array form, this host's widest clone) give
# the same bits. bench/math_accuracy_f64.py runs the same check over 10^7 inputs per op.
F64_KERNELS = {"expf": ("exp", 1032), "exp2f": ("exp2", 1033), "expm1f": ("expm1", 1032), "logf": ("log", 2046),
               "log2f": ("log2", 2046), "log10f": ("log10", 2046), "log1pf": ("log1p", 2046),
               "tanhf": ("tanh", 1030), "atanf": ("arctan", 2046), "sinf": ("sin", 2046),
               "cosf": ("cos", 2046), "tanf": ("tan", 2046), "asinf": ("arcsin", 1023), "acosf": ("arccos", 1023),
               "sinhf": ("sinh", 1032), "coshf": ("cosh", 1032)}
F64_SPECIALS = [0.0, -0.0, 1.0, -1.0, 5e-324, -5e-324, 2.2250738585072014e-308, np.inf, -np.inf, np.nan,
                709.782712893384, 709.7827128933841, -745.1332191019411, -745.1332191019412, 2.0**20, -(2.0**20),
                1.5707963267948966, 3.141592653589793, 1.0 + 2.0**-52, 1.0 - 2.0**-53, -1.0 + 2.0**-53, 1e300]


def f64_ulp_error(got, ref):
    """|got - ref| / ulp(ref as a double) for a np.longdouble reference; non-finite results must match."""
    with np.errstate(over="ignore"):
        ref_d = ref.astype(np.float64)
    fin = np.isfinite(ref_d) & np.isfinite(got)
    _, e = np.frexp(np.where(fin, ref, np.longdouble(1)))
    ulp = np.ldexp(np.longdouble(1), np.maximum(e.astype(np.int64) - 53, -1074))
    err = (np.abs(got.astype(np.longdouble) - np.where(fin, ref, 0)) / ulp).astype(np.float64)
    same = ((got == ref_d) & (np.signbit(got) == np.signbit(ref_d))) | (np.isnan(got) & np.isnan(ref_d))
    return np.where(fin, err, np.where(same, 0.0, np.inf))


@pytest.mark.skipif(np.finfo(np.longdouble).nmant < 63, reason="needs a long double wider than double")
@pytest.mark.parametrize("op", list(F64_KERNELS))
def test_f64_accuracy_bound(op):
    name, emax = F64_KERNELS[op]
    rng = np.random.default_rng(zlib.crc32(op.encode()))
    n = 1 << 14
    e = rng.integers(0, emax + 1, n // 2, dtype=np.uint64)
    m = rng.integers(0, 1 << 52, n // 2, dtype=np.uint64)
    sign = np.uint64(0) if op in ("logf", "log2f", "log10f") else rng.integers(0, 2, n // 2, dtype=np.uint64)
    bits = ((sign << np.uint64(63)) | (e << np.uint64(52)) | m).view(np.float64)
    lo, hi = {"expf": (-745.2, 709.8), "exp2f": (-1075, 1024), "expm1f": (-40, 709.8), "logf": (0, 10), "log2f": (0, 10),
              "log10f": (0, 10), "log1pf": (-1, 2), "tanhf": (-20, 20), "asinf": (-1, 1), "acosf": (-1, 1),
              "sinhf": (-711, 711), "coshf": (-711, 711)}.get(op, (-20, 20))
    x = np.concatenate([bits, rng.uniform(lo, hi, n // 2), F64_SPECIALS])
    if op == "log1pf":  # mostly in the domain, (-1, 0] included
        x[:n // 2] = np.where(x[:n // 2] < -1, -1 / (1 + np.abs(x[:n // 2])), x[:n // 2])
    got = run_op(op, "f64", x)
    with np.errstate(all="ignore"):
        ref = getattr(np, name)(x.astype(np.longdouble))
    err = f64_ulp_error(got, ref)
    assert err.max() <= 1.0, (op, float(err.max()), float(x[int(err.argmax())]).hex())
    if not hasattr(hx, name):  # exp2: a Loom op only
        return
    ufunc = hx.to_numpy(getattr(hx, name)(hx.asarray(x)))
    assert np.array_equal(ufunc.view(np.int64), got.view(np.int64)) or np.array_equal(
        np.where(np.isnan(got), 0, got).view(np.int64), np.where(np.isnan(ufunc), 0, ufunc).view(np.int64)), op


def test_f64_special_values_follow_numpy():
    # C99 Annex F results, as NumPy's float64 loops give them (NaN: any NaN).
    x = np.array(F64_SPECIALS + [-2.0, -1e300, 710.0, -746.0, 41.0, -40.0, 19.0, 20.0, 2.0**60, -(2.0**60)])
    with np.errstate(all="ignore"):
        for name in ("exp", "expm1", "log", "log2", "log10", "log1p", "tanh", "arctan", "sin", "cos", "tan",
                     "arcsin", "arccos", "sinh", "cosh"):
            got, want = hx.to_numpy(getattr(hx, name)(hx.asarray(x))), getattr(np, name)(x)
            special = ~np.isfinite(want) | (want == 0) | ~np.isfinite(x) | (x == 0)
            assert np.array_equal(np.isnan(got), np.isnan(want)), name
            ok = np.isnan(want) | ((got == want) & (np.signbit(got) == np.signbit(want)))
            assert ok[special].all(), (name, x[special & ~ok], got[special & ~ok], want[special & ~ok])
            close = np.abs(got - want) <= 2 * np.spacing(np.abs(want))
            assert close[~special].all(), (name, x[~special & ~close])


# --------------------------------------------------------------------------- binary kernels, erf

# arctan2 and power (float32 and float64) have vector kernels (the ufunc's contiguous
# loops, Loom's native code) and their scalar instances (the Loom interpreter): within 1 ulp of a
# long double reference, NumPy's special values, the same bits from the ufunc and the Loom op.
BIN_SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 1.5, -1.5,
                2.0**-149, -(2.0**-149), 2.0**-126, 3.4028235e38, -3.4028235e38, 2.0**25, -(2.0**25), 0.999, 7.0]


def binary_inputs(name, n, dtype):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    width = np.dtype(dtype).itemsize * 8
    udt = np.uint32 if width == 32 else np.uint64
    bits = lambda: rng.integers(0, 1 << width, n, dtype=np.uint64).astype(udt).view(dtype)  # noqa: E731
    u = lambda lo, hi: rng.uniform(lo, hi, n).astype(dtype)  # noqa: E731
    if name == "power":
        x = np.concatenate([bits(), u(0, 10), -u(0, 10)])
        y = np.concatenate([bits(), u(-40, 40), np.round(u(-40, 40))])
    else:
        x = np.concatenate([bits(), u(-5, 5), u(-1e-3, 1e-3)])
        y = np.concatenate([bits(), u(-5, 5), u(-5, 5)])
    sx, sy = np.meshgrid(np.array(BIN_SPECIALS, dtype), np.array(BIN_SPECIALS, dtype))
    return np.concatenate([x, sx.ravel()]), np.concatenate([y, sy.ravel()])


@pytest.mark.skipif(np.finfo(np.longdouble).nmant < 63, reason="needs a long double wider than double")
@pytest.mark.parametrize("name,op,dtype", [("arctan2", "atan2f", np.float32), ("arctan2", "atan2f", np.float64),
                                           ("power", "powf", np.float32), ("power", "powf", np.float64)])
def test_binary_kernels_within_1ulp_and_special_values(name, op, dtype):
    a, b = binary_inputs(name, 1 << 13, dtype)
    got = hx.to_numpy(getattr(hx, name)(hx.asarray(a), hx.asarray(b)))
    with np.errstate(all="ignore"):
        ref = getattr(np, name)(a.astype(np.longdouble), b.astype(np.longdouble))
        want = getattr(np, name)(a, b)  # NumPy's special values (NaN: any NaN)
    with np.errstate(all="ignore"):
        if dtype == np.float64:
            err = f64_ulp_error(got, ref)
        else:
            r32 = ref.astype(np.float32)
            fin = np.isfinite(r32) & np.isfinite(got)
            _, e = np.frexp(np.where(fin, r32, 1))
            ulp = np.ldexp(np.longdouble(1), np.maximum(e.astype(np.int64) - 24, -149))
            err = np.where(fin, np.abs(got.astype(np.longdouble) - np.where(fin, ref, 0)) / ulp, 0)
            err = err.astype(np.float64)
            assert np.array_equal(got[~fin & ~np.isnan(ref)], r32[~fin & ~np.isnan(ref)]), name
    assert err.max() < 1.0, (name, float(err.max()), a[int(err.argmax())], b[int(err.argmax())])
    assert np.array_equal(np.isnan(got), np.isnan(want)), (a[np.isnan(got) != np.isnan(want)][:5])
    zero = (want == 0) & ~np.isnan(got)
    assert np.array_equal(np.signbit(got[zero]), np.signbit(want[zero])), name
    # The Loom op (the scalar function, or native code's array form) gives the ufunc's bits.
    ty = "f32" if dtype == np.float32 else "f64"
    loom = run_op(op, ty, a, b)
    udt = np.uint32 if ty == "f32" else np.uint64
    ok = (loom.view(udt) == got.view(udt)) | (np.isnan(loom) & np.isnan(got))
    assert ok.all(), (name, a[~ok][:4], b[~ok][:4])


def test_power_of_two_is_the_square_and_scalar_exponents_broadcast():
    x = np.random.default_rng(5).standard_normal(1001).astype(np.float32) * 1e3
    xs = np.concatenate([x, np.float32([0, -0.0, np.inf, -np.inf, np.nan, 2.0**-149, 3e38])])
    with np.errstate(over="ignore"):
        sq = xs * xs
    ok = lambda got: ((got.view(np.uint32) == sq.view(np.uint32)) | (np.isnan(got) & np.isnan(sq))).all()  # noqa: E731
    assert ok(hx.to_numpy(hx.asarray(xs) ** 2))
    assert ok(hx.to_numpy(hx.pow(hx.asarray(xs), hx.asarray(np.float32(2)))))
    assert ok(hx.to_numpy(hx.pow(hx.asarray(xs), hx.asarray(np.full_like(xs, 2)))))
    # A scalar base or exponent (stride 0) gives the bits of the full arrays.
    y = np.linspace(-3, 3, 1001, dtype=np.float32)
    full = hx.to_numpy(hx.pow(hx.asarray(np.full_like(y, 1.7)), hx.asarray(y)))
    assert np.array_equal(hx.to_numpy(hx.pow(hx.asarray(np.float32(1.7)), hx.asarray(y))), full)
    full = hx.to_numpy(hx.pow(hx.asarray(np.abs(x)), hx.asarray(np.full_like(x, 0.37))))
    assert np.array_equal(hx.to_numpy(hx.pow(hx.asarray(np.abs(x)), hx.asarray(np.float32(0.37)))), full)


def test_erff_within_1ulp_of_double():
    # erf has no ufunc: the Loom op only (interpreter or native, the same kernel); float64 math.erf
    # (within an ulp of double) rounded to float, as in test_f32_accuracy_bound but with more
    # inputs in the hard region and every bit class.
    rng = np.random.default_rng(11)
    x = np.concatenate([rng.uniform(-4.5, 4.5, 1 << 14).astype(np.float32),
                        rng.integers(0, 1 << 32, 1 << 13, dtype=np.uint64).astype(np.uint32).view(np.float32),
                        np.float32(EDGES)])
    got = run_op("erff", "f32", x)
    ref = np.array([math.erf(float(v)) if np.isfinite(v) else (np.sign(v) if np.isinf(v) else np.nan)
                    for v in x])
    r32 = ref.astype(np.float32)
    assert np.array_equal(np.isnan(got), np.isnan(r32))
    fin = np.isfinite(r32)
    _, e = np.frexp(np.where(fin & (r32 != 0), r32, 1))
    ulp = np.ldexp(1.0, np.maximum(e - 24, -149))
    err = np.abs(got[fin].astype(np.float64) - ref[fin]) / ulp[fin]
    assert err.max() < 1.0 + 2.0**-20, (float(err.max()), x[fin][int(err.argmax())])
    zero = r32 == 0
    assert np.array_equal(np.signbit(got[zero]), np.signbit(x[zero]))


def _erf_centre_coefficients():
    """erf(c + h) = sum_k a_k h^k about c = 0, 1/8, ..., 6 (to h^24), computed in Python's decimal
    to 40 digits (Hermite polynomials times 2/sqrt(pi) e^-c^2, erf(c) by its series) and held as
    np.longdouble: the reference for float64 erf. Independent of fmath's own tables (other
    centres, other method for erf(c))."""
    from decimal import Decimal, getcontext
    getcontext().prec = 60
    # pi by the series in the decimal module's documentation
    getcontext().prec += 2
    lasts, t, s, n, na, d, da = 0, Decimal(3), 3, 1, 0, 0, 24
    while s != lasts:
        lasts = s
        n, na = n + na, na + 8
        d, da = d + da, da + 32
        t = (t * n) / d
        s += t
    getcontext().prec -= 2
    c2 = 2 / (+s).sqrt()
    rows = []
    for i in range(49):
        c = Decimal(i) / 8
        e, term, k = Decimal(0), c, 0
        while True:  # erf(c) = 2/sqrt(pi) sum (-1)^k c^(2k+1) / (k! (2k+1))
            e += term / (2 * k + 1)
            k += 1
            term = -term * c * c / k
            if abs(term) < Decimal(10) ** -55:
                break
        g = c2 * (-(c * c)).exp()
        h = [Decimal(1), 2 * c]
        for k in range(1, 25):
            h.append(2 * c * h[k] - 2 * k * h[k - 1])
        row, fact = [c2 * e], Decimal(1)
        for k in range(1, 25):
            fact *= k
            row.append(g * (-1) ** (k - 1) * h[k - 1] / fact)
        rows.append([np.longdouble(str(v)) for v in row])
    return np.array(rows, np.longdouble)


def erf_reference(x):
    """erf of doubles in np.longdouble (good to a few 2^-64 relative): the Taylor series about the
    nearest eighth (|h| <= 1/16), 1 beyond 6."""
    global _ERF_COEF
    if "_ERF_COEF" not in globals():
        _ERF_COEF = _erf_centre_coefficients()
    xl = np.asarray(x, np.float64).astype(np.longdouble)
    a = np.abs(xl)
    i = np.clip(np.round(np.where(np.isfinite(a), a, 0) * 8), 0, 48).astype(np.int64)
    h = np.where(a > 6.02, 0, a - i.astype(np.longdouble) / 8)
    acc = np.zeros_like(a)
    with np.errstate(invalid="ignore"):
        for k in range(24, -1, -1):
            acc = acc * h + _ERF_COEF[i, k]
    r = np.where(a > 6.02, np.longdouble(1), acc)
    r = np.where(np.isnan(xl), xl, r)
    return np.copysign(r, xl)


@pytest.mark.skipif(np.finfo(np.longdouble).nmant < 63, reason="needs a long double wider than double")
def test_erf_reference_agrees_with_the_c_library():
    # glibc's erf is within an ulp of double: the reference must be too (a check of the reference).
    x = np.random.default_rng(3).uniform(-6.5, 6.5, 2000)
    diff = np.abs(erf_reference(x) - np.vectorize(math.erf)(x).astype(np.longdouble))
    assert (diff <= np.spacing(np.abs(np.vectorize(math.erf)(x)))).all()


@pytest.mark.skipif(np.finfo(np.longdouble).nmant < 63, reason="needs a long double wider than double")
def test_erf_f64_within_1ulp_of_long_double():
    # fmath64.h's erf64 (the Loom op on f64: scalar function or array form) against erf_reference
    # (long double), over every magnitude, the Taylor/table switch at 1/2 and the point (5.921)
    # where erf starts to round to 1.
    rng = np.random.default_rng(17)
    n = 1 << 13
    bits = ((rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(63)) | (rng.integers(0, 1027, n, dtype=np.uint64)
            << np.uint64(52)) | rng.integers(0, 1 << 52, n, dtype=np.uint64)).view(np.float64)
    x = np.concatenate([bits, rng.uniform(-6.5, 6.5, n), 0.5 + rng.uniform(-1e-3, 1e-3, 256),
                        5.921 + rng.uniform(-1e-2, 1e-2, 256), F64_SPECIALS])
    got = run_op("erff", "f64", x)
    ref = erf_reference(x)
    err = f64_ulp_error(got, ref)
    assert err.max() <= 1.0, (float(err.max()), float(x[int(err.argmax())]).hex())
    assert np.array_equal(np.signbit(got[x == 0]), np.signbit(x[x == 0]))


# --------------------------------------------------------------------------- edge cases

def f32(*v):
    return np.array(v, np.float32)


def bits_equal(a, b):
    return np.array_equal(np.asarray(a, np.float32).view(np.int32), np.asarray(b, np.float32).view(np.int32))


def test_clampf_modes_treat_nan_and_zero_signs_as_documented():
    nan = np.nan
    x = f32(nan, 5, -5, 0.5, nan, 0.5, -0.0, 0.0)
    lo = f32(0, nan, 0, 0, 0, 1, 0.0, -0.0)
    hi = f32(1, 1, nan, nan, 1, 0, 1, 1)
    # ordered: compare-and-select, NaN comparisons false: a NaN value stays, NaN bounds do nothing;
    # lo > hi gives hi (the upper compare is last).
    got = run_op("clampf<ordered>", "f32", x, lo, hi)
    assert np.isnan(got[0]) and np.isnan(got[4])
    assert bits_equal(got[1:4], f32(1, 0, 0.5)) and bits_equal(got[5:], f32(0, -0.0, 0.0))
    # number: minnum(maxnum(x, lo), hi): NaNs select the numeric peer; -0 orders below +0.
    got = run_op("clampf<number>", "f32", x, lo, hi)
    assert bits_equal(got, f32(0, 1, 0, 0.5, 0, 0, 0.0, 0.0))
    # ieee: minimum(maximum(x, lo), hi): any NaN propagates.
    got = run_op("clampf<ieee>", "f32", x, lo, hi)
    assert np.isnan(got[:5]).all() and bits_equal(got[5:], f32(0, 0.0, 0.0))


def test_geluf_variants_and_scale():
    x = f32(-3, -1, -0.25, 0, 0.25, 1, 3, -np.inf, np.inf)
    d = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        erf = 0.5 * d * (1 + np.array([math.erf(v / math.sqrt(2)) if np.isfinite(v) else np.sign(v) for v in d]))
        tanh = 0.5 * d * (1 + np.tanh(math.sqrt(2 / math.pi) * (d + 0.044715 * d**3)))
    erf[7], tanh[7] = -0.0, -0.0  # the limit at -inf
    np.testing.assert_allclose(run_op("geluf<erf>", "f32", x), erf, rtol=1e-6, atol=0)
    np.testing.assert_allclose(run_op("geluf<tanh>", "f32", x), tanh, rtol=1e-6, atol=0)
    # The tanh form is an approximation of the erf one: close, not equal.
    assert 0 < np.abs(erf[:7] - tanh[:7]).max() < 1e-3
    # logistic: x * logistic(scale * x), scale 1.702 unless given.
    got = run_op("geluf<logistic>", "f32", x)
    assert np.allclose(got[:7], d[:7] / (1 + np.exp(-1.702 * d[:7])), rtol=1e-6, atol=0)
    assert got[7] == 0 and np.signbit(got[7]) and got[8] == np.inf
    src = kernel_source("geluf<logistic>", "f32", 1, False).replace(
        "scalar.geluf<logistic> %a0 : f32", "scalar.geluf<logistic> %a0 {scale = 2.5} : f32")
    got = hx.to_numpy(hx.loom.ufunc(src, "k")(x))
    assert np.allclose(got[:7], d[:7] / (1 + np.exp(-2.5 * d[:7])), rtol=1e-6, atol=0)


def test_rounding_ties_and_remf_and_signf():
    x = f32(0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.0, 8388609.0)
    assert bits_equal(run_op("roundf", "f32", x), f32(1, 2, 3, -1, -2, -3, 0, -0.0, 8388609.0))  # ties away
    assert bits_equal(run_op("roundevenf", "f32", x), f32(0, 2, 2, -0.0, -2, -2, 0, -0.0, 8388609.0))  # ties even
    assert bits_equal(run_op("truncf", "f32", f32(-1.7, 1.7, -0.3)), f32(-1, 1, -0.0))
    # remf is C fmod: the sign of the dividend, |r| < |divisor|; x % 0 and inf % y are NaN.
    got = run_op("remf", "f32", f32(7, -7, 7, -7, 5.5, 1, np.inf, -0.0), f32(3, 3, -3, -3, 2, 0, 2, 3))
    assert bits_equal(got[[0, 1, 2, 3, 4, 7]], f32(1, -1, 1, -1, 1.5, -0.0))
    assert np.isnan(got[5]) and np.isnan(got[6])
    got = run_op("signf", "f32", f32(-0.0, 0.0, np.nan, -3, 1e-45, -np.inf))
    assert bits_equal(got[[0, 1, 3, 4, 5]], f32(-0.0, 0.0, -1, 1, -1)) and np.isnan(got[2])


def test_min_max_nan_and_zero_rules():
    nan = np.nan
    a = f32(nan, 1, nan, -0.0, 0.0, 2)
    b = f32(1, nan, nan, 0.0, -0.0, -3)
    mn, mx = run_op("minnumf", "f32", a, b), run_op("maxnumf", "f32", a, b)
    assert bits_equal(mn[[0, 1, 3, 4, 5]], f32(1, 1, -0.0, -0.0, -3)) and np.isnan(mn[2])
    assert bits_equal(mx[[0, 1, 3, 4, 5]], f32(1, 1, 0.0, 0.0, 2)) and np.isnan(mx[2])
    mn, mx = run_op("minimumf", "f32", a, b), run_op("maximumf", "f32", a, b)
    assert np.isnan(mn[:3]).all() and bits_equal(mn[3:], f32(-0.0, -0.0, -3))
    assert np.isnan(mx[:3]).all() and bits_equal(mx[3:], f32(0.0, 0.0, 2))


def test_turns_are_exact_at_quarter_turns():
    x = f32(0, 0.25, 0.5, 0.75, 1, -0.25, -0.5, -1, 1e30, -1e30, 4194304.5)
    assert bits_equal(run_op("sinturnsf", "f32", x), f32(0, 1, 0, -1, 0, -1, -0.0, -0.0, 0, -0.0, 0))
    assert bits_equal(run_op("costurnsf", "f32", x), f32(1, 0, -1, 0, 1, 0, -1, 1, 1, 1, -1))


def test_fast_math_flags_are_permissions_with_strict_results():
    x = f32(-2, 0.5, np.inf, np.nan, 1e-40)
    strict = run_op("expf", "f32", x)
    for flags in ("fast", "nnan|ninf", "afn|contract|reassoc|nsz|arcp"):
        assert np.array_equal(run_op(f"expf<{flags}>", "f32", x), strict, equal_nan=True)
    lo, hi = f32(0, 0, 0, 0, 0), f32(1, 1, 1, 1, 1)
    assert np.array_equal(run_op("clampf<number, nnan|nsz>", "f32", x, lo, hi),
                          run_op("clampf<number>", "f32", x, lo, hi))


def test_ufuncs_and_loom_ops_give_the_same_bits():
    # One implementation (hrx::fmath) behind hx's float32 ufuncs and the Loom ops, huge
    # sin/cos arguments included.
    rng = np.random.default_rng(11)
    x = np.concatenate([rng.uniform(-100, 100, 300), rng.uniform(-3e38, 3e38, 100)]).astype(np.float32)
    pos = np.abs(x) + np.float32(1e-3)
    with np.errstate(all="ignore"):
        for name, op, arg in [("exp", "expf", x / 2), ("log", "logf", pos), ("sin", "sinf", x), ("cos", "cosf", x),
                              ("tan", "tanf", x), ("tanh", "tanhf", x), ("expm1", "expm1f", x / 2),
                              ("log1p", "log1pf", pos), ("arctan", "atanf", x), ("log2", "log2f", pos)]:
            arg = arg.astype(np.float32)
            assert bits_equal(hx.to_numpy(getattr(hx, name)(hx.asarray(arg))), run_op(op, "f32", arg)), name


# --------------------------------------------------------------------------- refusals

def _plan(src):
    return hx.loom.ufunc(src, "k")


def test_bad_modes_variants_and_flags_are_reported_at_compile_time():
    for op, code, word in [("clampf<bogus>", "PARSE/016", "bogus"), ("clampf", "PARSE/016", "mode"),
                           ("geluf<gelu>", "PARSE/016", "gelu"), ("geluf", "PARSE/016", "variant"),
                           ("expf<fastest>", "PARSE/017", "fastest"), ("expf<fast, nnan>", "PARSE/017", "nnan")]:
        nin = 3 if op.startswith("clampf") else 1
        with pytest.raises(hx.loom.LoomError, match=word) as e:
            _plan(kernel_source(op, "f32", nin, False))
        assert code in [d.code for d in e.value.diagnostics], op


def test_f8_math_is_refused_at_plan_time_naming_the_op():
    # The emulator holds no f8 arithmetic: refused when the kernel is compiled, not run wrongly.
    with pytest.raises(hx.loom.LoomError, match="not executed by the emulator") as e:
        _plan(kernel_source("expf", "f8E4M3", 1, False))
    assert any(d.code == "EMULATOR/001" and "scalar.expf" in d.message for d in e.value.diagnostics)
