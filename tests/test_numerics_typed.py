"""The GPU compute lane's generic matmul (_core.numerics._matmul_typed) against NumPy and float64."""

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrxarray._core import numerics as raw

BF16 = np.dtype(ml_dtypes.bfloat16)
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float16", "float32", "float64"]
OUT = {"bfloat16": "float32"}
RNG = 20260405


def mm(a, b, *, portable=False, ia=None, ib=None, batch=None):
    """Run _matmul_typed on stacks a (..., m, k) and b (..., k, n); returns c (batch, m, n)."""
    a = np.ascontiguousarray(a)
    b = np.ascontiguousarray(b)
    m, k = a.shape[-2:]
    n = b.shape[-1]
    name = a.dtype.name
    out = np.dtype(OUT.get(name, name))
    if batch is None:
        batch = math.prod(a.shape[:-2])
    c = np.full((batch, m, n), 7, out)  # garbage the kernel must overwrite
    raw._matmul_typed(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8), c.reshape(-1).view(np.uint8),
                      name, out.name, m, k, n, ia, ib, portable=portable)
    return c


def gamma(k, u):
    return k * u * (1 + k * u)


def rand(rng, dtype, shape):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.3
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    return rng.standard_normal(shape).astype(dtype)


# --- exact types -------------------------------------------------------------


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("shape", [(1, 1, 1), (5, 7, 3), (33, 70, 65), (9, 300, 40)])
def test_integers_wrap_exactly_like_numpy(dtype, shape):
    m, k, n = shape
    rng = np.random.default_rng(RNG)
    a, b = rand(rng, dtype, (2, m, k)), rand(rng, dtype, (2, k, n))
    c = mm(a, b)
    assert c.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(c, np.matmul(a, b))


@pytest.mark.parametrize("shape", [(1, 1, 1), (6, 9, 40), (40, 130, 33)])
def test_bool_is_or_of_ands(shape):
    m, k, n = shape
    rng = np.random.default_rng(RNG + 1)
    a, b = rng.random((3, m, k)) < 0.05, rng.random((3, k, n)) < 0.05
    c = mm(a, b)
    assert c.dtype == np.bool_
    np.testing.assert_array_equal(c, np.matmul(a, b))
    assert set(np.unique(c.view(np.uint8))) <= {0, 1}


def test_bool_counts_any_nonzero_byte_as_true():
    a = np.array([[2, 0]], np.uint8).view(np.bool_)
    b = np.array([[255], [1]], np.uint8).view(np.bool_)
    assert mm(a, b).view(np.uint8).tolist() == [[[1]]]


def test_int64_large_values_wrap():
    a = np.array([[2**62, 3]], np.int64)
    b = np.array([[4], [2**62]], np.int64)
    # 2**64 + 3 * 2**62 = 3 * 2**62 (mod 2**64), which is -2**62 as int64
    assert mm(a, b)[0, 0, 0] == -(2**62)


# --- floating point ---------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS + ["bfloat16"])
@pytest.mark.parametrize("shape", [(1, 1, 1), (7, 13, 70), (65, 300, 129)])
def test_floats_within_accumulation_bound(dtype, shape):
    m, k, n = shape
    rng = np.random.default_rng(RNG + 2)
    dt = BF16 if dtype == "bfloat16" else np.dtype(dtype)
    a, b = rng.standard_normal((2, m, k)).astype(dt), rng.standard_normal((2, k, n)).astype(dt)
    c = mm(a, b)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    exact = np.matmul(a64, b64)
    mag = np.matmul(np.abs(a64), np.abs(b64))
    u = 2.0**-53 if dtype == "float64" else 2.0**-24
    tol = gamma(k, u) * mag
    if dtype == "float16":
        # fp32 accumulation, then one rounding to float16 (half an ulp, relative 2**-11)
        tol = tol + 2.0**-11 * (np.abs(exact) + tol) + 2.0**-25
    err = np.abs(c.astype(np.float64) - exact)
    assert np.all(err <= tol), float(np.max(err - tol))


def test_float32_integer_data_exact_and_order_is_ascending_k():
    rng = np.random.default_rng(RNG + 3)
    a = rng.integers(-3, 4, (40, 200)).astype(np.float32)
    b = rng.integers(-3, 4, (200, 50)).astype(np.float32)
    np.testing.assert_array_equal(mm(a, b)[0], a.astype(np.float64) @ b)
    # 1 + 2**-24 + 2**-24: ascending order rounds each step to 1 (ties to even), the
    # other orders would not.
    a = np.array([[1.0, 2.0**-24, 2.0**-24]], np.float32)
    b = np.ones((3, 1), np.float32)
    assert mm(a, b)[0, 0, 0] == np.float32(1.0)
    a = np.array([[2.0**-24, 2.0**-24, 1.0]], np.float32)
    assert mm(a, b)[0, 0, 0] == np.float32(1.0 + 2.0**-23)


def test_fused_multiply_add_per_step():
    # (1 + 2**-12)**2 = 1 + 2**-11 + 2**-24; minus (1 + 2**-11) leaves 2**-24 only if fused.
    x = np.float32(1 + 2.0**-12)
    a = np.array([[-(1 + 2.0**-11), x]], np.float32)
    b = np.array([[1.0], [x]], np.float32)
    assert mm(a, b)[0, 0, 0] == np.float32(2.0**-24)
    a64 = np.array([[-(1 + 2.0**-26), 1 + 2.0**-27]])
    b64 = np.array([[1.0], [1 + 2.0**-27]])
    assert mm(a64, b64)[0, 0, 0] == 2.0**-54


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_floats_keep_denormals(dtype):
    tiny = {"float32": 2.0**-140, "float64": 2.0**-1070, "float16": 2.0**-20}[dtype]
    a = np.array([[tiny, tiny]], dtype)
    b = np.array([[1.0], [0.5]], dtype)
    got = mm(a, b)[0, 0, 0]
    assert got == np.asarray(1.5 * tiny, dtype) and got != 0


def test_bf16_pair_is_matmul_bf16_bit_for_bit():
    rng = np.random.default_rng(RNG + 4)
    a = rng.standard_normal((3, 20, 75)).astype(BF16)
    b = rng.standard_normal((3, 75, 33)).astype(BF16)
    c = np.empty((3, 20, 33), np.float32)
    raw.matmul_bf16(a.view(np.uint16), b.view(np.uint16), c, 20, 75, 33)
    np.testing.assert_array_equal(mm(a, b).view(np.uint32), c.view(np.uint32))
    # and bf16 flushes denormals where float32 keeps them
    t = np.array([[2.0**-130]], np.float32)
    assert mm(t.astype(BF16), np.ones((1, 1), BF16))[0, 0, 0] == 0
    assert mm(t, np.ones((1, 1), np.float32))[0, 0, 0] == np.float32(2.0**-130)


def test_float16_rounds_once_at_the_end():
    # 2048 + 1 + 1 in float16 steps would stay 2048 (ulp 2); fp32 accumulation gives 2050.
    a = np.array([[2048.0, 1.0, 1.0]], np.float16)
    b = np.ones((3, 1), np.float16)
    assert mm(a, b)[0, 0, 0] == np.float16(2050)
    # overflow of the final rounding only
    a = np.array([[60000.0, 60000.0, -60000.0]], np.float16)
    assert mm(a, b)[0, 0, 0] == np.float16(60000)
    assert np.isinf(mm(np.array([[60000.0, 60000.0]], np.float16), np.ones((2, 1), np.float16))[0, 0, 0])


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "bfloat16", "int32", "int8", "uint64", "bool"])
def test_vector_and_portable_paths_agree_bitwise(dtype):
    rng = np.random.default_rng(RNG + 5)
    dt = BF16 if dtype == "bfloat16" else np.dtype(dtype)
    m, k, n = 37, 530, 70  # several K blocks, ragged tiles
    if dt.kind in "biu":
        a, b = rand(rng, dt, (m, k)), rand(rng, dt, (k, n))
    else:
        a, b = rng.standard_normal((m, k)).astype(dt), rng.standard_normal((k, n)).astype(dt)
    fast, port = mm(a, b), mm(a, b, portable=True)
    np.testing.assert_array_equal(fast.view(np.uint8), port.view(np.uint8))


def test_threaded_large_product_matches_portable():
    rng = np.random.default_rng(RNG + 6)
    a = rng.standard_normal((300, 400)).astype(np.float32)
    b = rng.standard_normal((400, 500)).astype(np.float32)
    np.testing.assert_array_equal(mm(a, b).view(np.uint32), mm(a, b, portable=True).view(np.uint32))


# --- shapes and broadcasting --------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "int16", "bool", "float16"])
def test_k_zero_gives_zeros_and_empty_shapes_do_nothing(dtype):
    a = np.zeros((2, 3, 0), dtype)
    b = np.zeros((2, 0, 4), dtype)
    c = mm(a, b)
    assert c.shape == (2, 3, 4) and not np.any(c.view(np.uint8))
    for shape_a, shape_b in (((2, 0, 5), (2, 5, 4)), ((2, 3, 5), (2, 5, 0))):
        c = mm(np.zeros(shape_a, dtype), np.zeros(shape_b, dtype))
        assert c.size == 0


def test_index_maps_broadcast_without_copies():
    rng = np.random.default_rng(RNG + 7)
    a = rng.integers(-50, 50, (2, 4, 6)).astype(np.int32)
    b = rng.integers(-50, 50, (3, 6, 5)).astype(np.int32)
    ia = np.array([0, 1, 0, 1, 0, 1], np.int64)
    ib = np.array([0, 0, 1, 1, 2, 2], np.int64)
    c = mm(a, b, ia=ia, ib=ib, batch=6)
    for t in range(6):
        np.testing.assert_array_equal(c[t], a[ia[t]] @ b[ib[t]])
    # one B for every batch (folded into a single taller product)
    ib0 = np.zeros(2, np.int64)
    c = mm(a, b, ib=ib0, batch=2)
    np.testing.assert_array_equal(c, a @ b[0])


@given(m=st.integers(1, 40), k=st.integers(0, 90), n=st.integers(1, 70),
       dtype=st.sampled_from(["int8", "uint16", "int64", "bool", "float32", "float64"]), seed=st.integers(0, 2**32 - 1))
def test_hypothesis_shapes_against_numpy(m, k, n, dtype, seed):
    rng = np.random.default_rng(seed)
    if dtype.startswith("float"):
        a = rng.integers(-8, 9, (m, k)).astype(dtype)
        b = rng.integers(-8, 9, (k, n)).astype(dtype)
    else:
        a, b = rand(rng, dtype, (m, k)), rand(rng, dtype, (k, n))
    np.testing.assert_array_equal(mm(a, b)[0], np.matmul(a, b))


# --- errors ------------------------------------------------------------------------


def test_errors_name_the_problem_and_write_nothing():
    a = np.ones(6, np.float32)
    c = np.full(4, 9, np.float32)
    u8 = lambda x: x.view(np.uint8)  # noqa: E731
    with pytest.raises(ValueError, match="unknown element type 'float128'"):
        raw._matmul_typed(u8(a), u8(a), u8(c), "float128", "float32", 2, 3, 2)
    with pytest.raises(ValueError, match="does not implement float32 -> float64"):
        raw._matmul_typed(u8(a), u8(a), u8(c), "float32", "float64", 2, 3, 2)
    with pytest.raises(ValueError, match="bfp16"):
        raw._matmul_typed(u8(a), u8(a), u8(c), "bfp16", "float32", 2, 3, 2)
    with pytest.raises(ValueError, match="a size is not a multiple"):
        raw._matmul_typed(u8(a[:5]), u8(a), u8(c), "float32", "float32", 2, 3, 2)
    with pytest.raises(ValueError, match="whole elements"):
        raw._matmul_typed(u8(a)[:7], u8(a), u8(c), "float32", "float32", 2, 3, 2)
    with pytest.raises(ValueError, match="ib has an entry out of range"):
        raw._matmul_typed(u8(a), u8(a), u8(c), "float32", "float32", 2, 3, 2, None, np.array([1], np.int64))
    with pytest.raises(ValueError, match="overlap"):
        raw._matmul_typed(u8(a), u8(a), u8(a)[:16], "float32", "float32", 2, 3, 2)
    assert np.all(c == 9)


# --- blocked accumulation (issue 28) ------------------------------------------------------------------------

KC = 384  # Note [Blocked accumulation]: K blocks of 384 products, each summed from +0


@pytest.mark.parametrize("dtype, tiny", [("float32", 2.0**-24), ("float64", 2.0**-53)])
@pytest.mark.parametrize("portable", [False, True])
def test_each_k_block_sums_from_zero_then_adds_to_the_total(dtype, tiny, portable):
    # Block 0 holds 1.0; block 1 holds 384 halves of an ulp of 1. One chain over K would round each
    # 1 + tiny back to 1 (ties to even); blocks sum the tinies exactly first, then add 384 * tiny once.
    a = np.zeros((1, 2 * KC), dtype)
    a[0, 0] = 1.0
    a[0, KC:] = tiny
    for n in (1, 3):  # a matrix-vector product and a general one
        b = np.ones((2 * KC, n), dtype)
        c = mm(a, b, portable=portable)[0]
        np.testing.assert_array_equal(c, np.full((1, n), 1 + KC * tiny, dtype))


def test_long_k_float32_error_is_within_twice_numpys():
    """X.T @ X for 2^20 x 8 float32 against float64: blocks keep the error near NumPy's (BLAS)."""
    rng = np.random.default_rng(RNG + 7)
    x = rng.random((1 << 20, 8), dtype=np.float32)
    exact = x.T.astype(np.float64) @ x.astype(np.float64)
    ours = mm(np.ascontiguousarray(x.T), x)[0]
    err = np.max(np.abs(ours - exact) / np.abs(exact))
    err_np = np.max(np.abs((x.T @ x) - exact) / np.abs(exact))
    assert err <= max(2 * err_np, 2e-6), (err, err_np)
    np.testing.assert_array_equal(ours.view(np.uint32), mm(np.ascontiguousarray(x.T), x, portable=True)[0].view(np.uint32))
