"""hrxarray.numerics.matmul against NumPy float64 references (exact, and within the fp32 accumulation bound)."""

import os
import subprocess
import sys
import textwrap

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrxarray import _core
from hrxarray import numerics as hn
from hrxarray._core import numerics as raw

BF16 = np.dtype(ml_dtypes.bfloat16)
U = 2.0**-24  # unit roundoff of float32
RNG_SEED = 20260404


def bf16(x):
    return np.asarray(x, np.float32).astype(BF16)


def ref64(a, b):
    return np.matmul(np.asarray(a, np.float64), np.asarray(b, np.float64))


def bound(a, b):
    """|fl(sum) - sum| <= (K-1) u sum|a_k b_k| / (1 - (K-1) u) for recursive fp32 summation of
    exact products (bf16 x bf16 is exact in fp32); K u (1 + K u) is a safe upper form of it."""
    k = a.shape[-1]
    g = k * U * (1 + k * U)
    return g * ref64(np.abs(np.asarray(a, np.float64)), np.abs(np.asarray(b, np.float64)))


def quantize_along_k(a, b, rounding):
    """The test's own reference for compute='bfp16': blocks along K of both operands."""
    qa = hn.bfp16_quantize(np.asarray(a, np.float32), rounding)
    qb = np.swapaxes(hn.bfp16_quantize(np.swapaxes(np.asarray(b, np.float32), -1, -2), rounding), -1, -2)
    return qa, qb


# --- exactness and the error bound ------------------------------------------------


@pytest.mark.parametrize("order", hn.ORDERS)
@pytest.mark.parametrize("shape", [(8, 8, 8), (1, 1, 1), (7, 13, 70), (65, 130, 129), (3, 1000, 5)])
def test_integer_data_is_exact(shape, order):
    m, k, n = shape
    rng = np.random.default_rng(RNG_SEED)
    a = bf16(rng.integers(-3, 4, (4, m, k)))
    b = bf16(rng.integers(-3, 4, (4, k, n)))
    c = hn.matmul(a, b, order=order)
    assert c.dtype == np.float32 and c.shape == (4, m, n)
    np.testing.assert_array_equal(c, ref64(a, b))


def test_batched_8x8_integer_data_is_exact_and_threaded_split_is_invisible():
    rng = np.random.default_rng(RNG_SEED + 1)
    n = 50_000  # large enough for the thread pool
    a = bf16(rng.integers(-3, 4, (n, 8, 8)))
    b = bf16(rng.integers(-3, 4, (n, 8, 8)))
    np.testing.assert_array_equal(hn.matmul(a, b), ref64(a, b))


@pytest.mark.parametrize("order", hn.ORDERS)
@pytest.mark.parametrize("shape", [(8, 8, 8), (5, 64, 9), (70, 300, 130)])
def test_random_data_within_accumulation_bound(shape, order):
    m, k, n = shape
    rng = np.random.default_rng(RNG_SEED + 2)
    a = bf16(rng.standard_normal((3, m, k)) * 10.0 ** rng.integers(-3, 4, (3, m, k)))
    b = bf16(rng.standard_normal((3, k, n)))
    c = hn.matmul(a, b, order=order)
    err = np.abs(c - ref64(a, b))
    assert (err <= bound(a, b)).all()
    # The bound is not vacuous: a plain fp32 result is not exact here.
    assert err.max() > 0


def test_accumulation_order_is_pairs_odd_index_first():
    # k runs 1, 0, 3, 2, ... from +0 (one fp32 rounding per step). With products
    # [2**24, 0, 1, 2] that is 0, 2**24, 2**24 + 2, then 2**24 + 3 -> 2**24 + 4 (ties to
    # even); ascending k would give 2**24, 2**24, 2**24 (+1 ties down), 2**24 + 2.
    b = bf16([[1.0], [1.0], [1.0], [1.0]])
    assert hn.matmul(bf16([[2.0**24, 0.0, 1.0, 2.0]]), b)[0, 0] == 2.0**24 + 4
    # The same products with the pair's order flipped (even index first) give 2**24 + 2 as well.
    assert hn.matmul(bf16([[2.0**24, 0.0, 2.0, 1.0]]), b)[0, 0] == 2.0**24 + 2
    # Across pairs the order is ascending: the 1s of pair 0 are summed before 2**24 arrives.
    b3 = bf16([[1.0], [1.0], [1.0]])
    assert hn.matmul(bf16([[1.0, 1.0, 2.0**24]]), b3)[0, 0] == 2.0**24 + 2
    assert hn.matmul(bf16([[2.0**24, 1.0, 1.0]]), b3)[0, 0] == 2.0**24


@pytest.mark.parametrize("portable", [False, True])
def test_odd_k_pad_turns_a_flushed_negative_zero_into_plus_zero(portable):
    # -1.5 * 2**-126 + 2**-126 = -2**-127 flushes to -0; the zero pad step after an odd K then
    # gives -0 + 0 * 0 = +0 (Note [Paired k order]). K = 2 keeps the -0.
    a3 = bf16([[1.0, -1.5 * 2.0**-126, 1.0]]).view(np.uint16)
    b3 = bf16([[2.0**-126], [1.0], [0.0]]).view(np.uint16)
    c = np.empty((1, 1), np.float32)
    raw.matmul_bf16(a3, b3, c, 1, 3, 1, portable=portable)
    assert c.view(np.uint32)[0, 0] == 0
    c2 = np.empty((1, 1), np.float32)
    raw.matmul_bf16(np.ascontiguousarray(a3[:, :2]), np.ascontiguousarray(b3[:2]), c2, 1, 2, 1,
                    portable=portable)
    assert c2.view(np.uint32)[0, 0] == 0x80000000


def test_float32_operands_are_rounded_to_bf16_first():
    rng = np.random.default_rng(RNG_SEED + 3)
    a = rng.standard_normal((6, 16), dtype=np.float32)
    b = rng.standard_normal((16, 5), dtype=np.float32)
    np.testing.assert_array_equal(hn.matmul(a, b), hn.matmul(bf16(a), bf16(b)))


def test_no_denormals():
    tiny = 2.0**-130  # a float32 (and bf16) subnormal
    assert hn.matmul(bf16([[tiny]]), bf16([[1.0]]))[0, 0] == 0.0  # subnormal operand is zero
    # 2**-70 * 2**-70 = 2**-140: a subnormal result flushes to zero.
    assert hn.matmul(bf16([[2.0**-70]]), bf16([[2.0**-70]]))[0, 0] == 0.0
    # Cancellation down to a subnormal sum flushes too: 1.5 * 2**-126 - 2**-126.
    c = hn.matmul(bf16([[1.5 * 2.0**-126, 1.0]]), bf16([[1.0], [-(2.0**-126)]]))
    assert c[0, 0] == 0.0


# --- bfp16 compute -------------------------------------------------------------------


@pytest.mark.parametrize("rounding", ["floor", "even"])
@pytest.mark.parametrize("shape", [(8, 8, 8), (9, 32, 3), (40, 256, 33)])
def test_bfp16_compute_against_quantised_reference(rounding, shape):
    m, k, n = shape
    rng = np.random.default_rng(RNG_SEED + 4)
    a = bf16(rng.standard_normal((2, m, k)))
    b = bf16(rng.standard_normal((2, k, n)))
    qa, qb = quantize_along_k(a, b, rounding)
    c = hn.matmul(a, b, compute="bfp16", rounding=rounding)
    err = np.abs(c - ref64(qa, qb))
    assert (err <= bound(qa, qb)).all()
    # Quantisation is visible: the bf16 product differs.
    assert not np.array_equal(c, hn.matmul(a, b))


def test_bfp16_compute_integer_data_is_exact():
    # Small integers are exact in bfp16 when a block's maximum is within 7 binades.
    rng = np.random.default_rng(RNG_SEED + 5)
    a = bf16(rng.integers(-3, 4, (16, 64)))
    b = bf16(rng.integers(-3, 4, (64, 24)))
    np.testing.assert_array_equal(hn.matmul(a, b, compute="bfp16"), ref64(a, b))


def test_bfp16_blocks_run_along_k_of_b():
    # Column j of b as one block: a big value in row 0 swamps the small ones of its column only.
    b = np.ones((8, 2), np.float32) * 2.0**-10
    b[0, 0] = 1.0
    a = np.eye(8, dtype=np.float32)
    c = hn.matmul(a, b, compute="bfp16", rounding="even")
    assert c[1, 0] == 0.0  # 2**-10 is 10 binades below its block's max: rounds to 0
    assert c[1, 1] == 2.0**-10  # its own column's block keeps it


def test_bfp16_compute_errors():
    with pytest.raises(ValueError, match="multiple of 8"):
        hn.matmul(np.ones((2, 12), np.float32), np.ones((12, 2), np.float32), compute="bfp16")
    with pytest.raises(ValueError, match="NaN or Inf"):
        hn.matmul(np.full((2, 8), np.inf, np.float32), np.ones((8, 2), np.float32), compute="bfp16")


# --- shapes, broadcasting, strides, out -------------------------------------------


def test_batch_broadcasting():
    rng = np.random.default_rng(RNG_SEED + 6)
    a = bf16(rng.integers(-3, 4, (4, 1, 5, 8)))
    b = bf16(rng.integers(-3, 4, (3, 8, 6)))
    c = hn.matmul(a, b)
    assert c.shape == (4, 3, 5, 6)
    np.testing.assert_array_equal(c, ref64(a, b))
    # 2-d against a stack, both ways round.
    np.testing.assert_array_equal(hn.matmul(a[0, 0], b), ref64(a[0, 0], b))
    np.testing.assert_array_equal(hn.matmul(a, b[1]), ref64(a, b[1]))


def test_non_contiguous_inputs_and_out():
    rng = np.random.default_rng(RNG_SEED + 7)
    a = bf16(rng.integers(-3, 4, (6, 16, 20)))[::2, ::2, 1::2]  # (3, 8, 10)
    b = bf16(rng.integers(-3, 4, (9, 10, 3))).transpose(2, 1, 0)  # (3, 10, 9), Fortran-like
    out = np.zeros((3, 8, 18), np.float32)[:, :, ::2]
    r = hn.matmul(a, b, out=out)
    assert r is out
    np.testing.assert_array_equal(out, ref64(a, b))


def test_out_aliasing_an_input_is_safe():
    a = bf16(np.arange(64).reshape(8, 8) % 5 - 2)
    buf = a.astype(np.float32)
    expect = ref64(buf, a)
    hn.matmul(buf, a, out=buf)
    np.testing.assert_array_equal(buf, expect)


def test_empty_and_zero_k():
    assert hn.matmul(np.ones((0, 3), np.float32), np.ones((3, 4), np.float32)).shape == (0, 4)
    c = hn.matmul(np.ones((2, 0), np.float32), np.ones((0, 4), np.float32))
    np.testing.assert_array_equal(c, np.zeros((2, 4)))
    assert hn.matmul(np.ones((0, 2, 3), np.float32), np.ones((3, 4), np.float32)).shape == (0, 2, 4)


def test_errors():
    f = np.ones((4, 4), np.float32)
    with pytest.raises(TypeError, match="float64"):
        hn.matmul(f.astype(np.float64), f)
    with pytest.raises(ValueError, match="at least 2 axes"):
        hn.matmul(np.ones(4, np.float32), f)
    with pytest.raises(ValueError, match="last axis"):
        hn.matmul(np.ones((4, 3), np.float32), f)
    with pytest.raises(ValueError, match="broadcast"):
        hn.matmul(np.ones((2, 4, 4), np.float32), np.ones((3, 4, 4), np.float32))
    with pytest.raises(ValueError, match="compute"):
        hn.matmul(f, f, compute="fp8")
    for bad in ("amx", "Tile", None):
        with pytest.raises(ValueError, match=f"matmul\\(\\): order must be 'pair' or 'tile', got {bad!r}"):
            hn.matmul(f, f, order=bad)
    with pytest.raises(ValueError, match="rounding"):
        hn.matmul(f, f, rounding="up")
    with pytest.raises(ValueError, match="shape"):
        hn.matmul(f, f, out=np.empty((4, 5), np.float32))
    with pytest.raises(TypeError, match="dtype"):
        hn.matmul(f, f, out=np.empty((4, 4), np.float64))
    ro = np.empty((4, 4), np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        hn.matmul(f, f, out=ro)


def test_raw_binding_rejects_bad_sizes_and_indices():
    a = np.zeros(64, np.uint16)
    c = np.empty(64, np.float32)
    with pytest.raises(ValueError):
        raw.matmul_bf16(a, a, np.empty(63, np.float32), 8, 8, 8)
    with pytest.raises(ValueError, match="out of range"):
        raw.matmul_bf16(a, a, c, 8, 8, 8, np.array([1], np.int64), None)
    with pytest.raises(ValueError):
        raw.matmul_bf16_8x8_batched(a, a[:60], c)


# --- vector paths against the portable path ------------------------------------------


def assert_same_bits(x, y):
    """Bit-identical, except that which NaN (sign, payload) comes out is unspecified."""
    nan = np.isnan(x)
    np.testing.assert_array_equal(nan, np.isnan(y))
    np.testing.assert_array_equal(x[~nan].view(np.uint32), y[~nan].view(np.uint32))


def test_kernel_path_and_threads():
    # The AMX tiles serve only order="tile" (tests/test_amx_model.py).
    assert raw.kernel_paths()["matmul"] in ("avx512_bf16", "avx512", "avx2", "portable")
    assert raw.kernel_paths()["matmul_tile"] in ("amx_bf16", "avx512", "avx2", "portable")
    assert raw.matmul_num_threads() >= 1


# (9, 771, 40): K blocks of 384 with an odd tail; (200, 390, 260): threaded, partial tiles.
@pytest.mark.parametrize("shape", [(8, 8, 8), (13, 77, 150), (1, 5, 64), (9, 771, 40), (200, 390, 260)])
def test_vector_and_portable_paths_agree_bitwise(shape):
    m, k, n = shape
    rng = np.random.default_rng(RNG_SEED + 8)
    # Random bit patterns with exponents spread wide (overflow, tiny products, NaN/Inf included).
    bits_a = rng.integers(0, 1 << 16, size=(5, m, k), dtype=np.uint16)
    bits_b = rng.integers(0, 1 << 16, size=(5, k, n), dtype=np.uint16)
    normal_a = bf16(rng.standard_normal((5, m, k))).view(np.uint16)
    normal_b = bf16(rng.standard_normal((5, k, n))).view(np.uint16)
    for xa, xb in ((bits_a, bits_b), (normal_a, normal_b)):
        c_vec = np.empty((5, m, n), np.float32)
        c_port = np.empty((5, m, n), np.float32)
        raw.matmul_bf16(xa, xb, c_vec, m, k, n)
        raw.matmul_bf16(xa, xb, c_port, m, k, n, portable=True)
        assert_same_bits(c_vec, c_port)


# Note [bf16 kit choice] and Note [GEMM threads] in gemm.cpp: either bf16 kit (VDPBF16PS, or two FMAs per
# pair) and every thread split give the portable kernels' bits. The splits are planned for more threads
# than this host has (HRXARRAY_GEMM_PLAN_THREADS), so a 16- or 64-core host's grids run here too; c starts
# as NaN, so an output that no item computes fails as surely as a wrong one.
SPLIT_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    from hrxarray._core import numerics as raw
    rng = np.random.default_rng(int(sys.argv[1]))
    ok = True
    # (m, k, n, batch): threaded sizes with partial tiles, panels and K blocks, odd K, one B chunk
    # narrower than N (k = 4100: 8 MiB of packed B per chunk), and a batch sharing B.
    for m, k, n, batch in ((200, 390, 260, 1), (517, 129, 333, 1), (64, 1101, 96, 1), (33, 4100, 530, 1),
                           (96, 200, 200, 3), (1, 4096, 1024, 1), (700, 64, 40, 1)):
        for kind in ("bits", "normal"):
            if kind == "bits":
                a = rng.integers(0, 1 << 16, size=(batch, m, k), dtype=np.uint16)
                b = rng.integers(0, 1 << 16, size=(1, k, n), dtype=np.uint16)
            else:
                a = (rng.standard_normal((batch, m, k), dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)
                b = (rng.standard_normal((1, k, n), dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)
            ib = np.zeros(batch, np.int64)
            c_vec = np.full((batch, m, n), np.nan, np.float32)
            c_port = np.full((batch, m, n), np.nan, np.float32)
            raw.matmul_bf16(a, b, c_vec, m, k, n, None, ib)
            raw.matmul_bf16(a, b, c_port, m, k, n, None, ib, portable=True)
            nan = np.isnan(c_vec)
            same = (nan == np.isnan(c_port)).all() and (c_vec[~nan].view(np.uint32) == c_port[~nan].view(np.uint32)).all()
            if not same:
                print("differ", m, k, n, batch, kind, file=sys.stderr)
                ok = False
    print(raw.kernel_paths()["matmul"], ok)
""")


@pytest.mark.parametrize("kit", ["dp", "fma", "avx2"])
@pytest.mark.parametrize("plan_threads", [1, 3, 16, 64])
def test_bf16_kits_and_thread_splits_agree_bitwise(tmp_path, kit, plan_threads):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HRXARRAY_GEMM_")}
    env.update(HRXARRAY_GEMM_KIT=kit, HRXARRAY_GEMM_PLAN_THREADS=str(plan_threads))
    proc = subprocess.run([sys.executable, "-c", SPLIT_SCRIPT, str(plan_threads)], env=env, capture_output=True,
                          text=True, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    path, ok = proc.stdout.split()
    assert ok == "True", proc.stderr
    # The kit asked for serves the pair order where the CPU has it (else a lower path).
    best = _core.cpu_features()["kernel_path"]
    if kit == "fma":
        assert path != "avx512_bf16"
    elif kit == "dp" and best in ("avx512_bf16", "amx_bf16"):
        assert path == "avx512_bf16"
    elif kit == "avx2":
        assert path in ("avx2", "portable")


# HRXARRAY_GEMM_KIT=avx2 runs the AVX2 kernels on an AVX-512 host: the FMA families' two-rows-at-a-time
# micro-kernel (float32 and float16 blocked, float64) against the portable kernels, bit for bit.
TYPED_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    from hrxarray._core import numerics as raw
    rng = np.random.default_rng(7)
    ok = True
    for dt in (np.float32, np.float16, np.float64):
        for m, k, n in ((13, 77, 150), (9, 771, 40), (200, 390, 260), (1, 5, 33), (70, 1000, 31)):
            a = rng.standard_normal((m, k)).astype(dt)
            b = rng.standard_normal((k, n)).astype(dt)
            c_vec = np.full((m, n), np.nan, dt)
            c_port = np.full((m, n), np.nan, dt)
            u8 = lambda x: x.reshape(-1).view(np.uint8)
            raw._matmul_typed(u8(a), u8(b), u8(c_vec), np.dtype(dt).name, np.dtype(dt).name, m, k, n)
            raw._matmul_typed(u8(a), u8(b), u8(c_port), np.dtype(dt).name, np.dtype(dt).name, m, k, n,
                              portable=True)
            if not (c_vec.view(np.uint8) == c_port.view(np.uint8)).all():
                print("differ", dt, m, k, n, file=sys.stderr)
                ok = False
    print(raw.kernel_paths()["matmul"], ok)
""")


def test_avx2_kernels_agree_with_portable_bitwise(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HRXARRAY_GEMM_")}
    env["HRXARRAY_GEMM_KIT"] = "avx2"
    proc = subprocess.run([sys.executable, "-c", TYPED_SCRIPT], env=env, capture_output=True, text=True,
                          cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    path, ok = proc.stdout.split()
    assert ok == "True", proc.stderr
    assert path in ("avx2", "portable")


def test_batched_8x8_vector_and_portable_paths_agree_bitwise():
    rng = np.random.default_rng(RNG_SEED + 9)
    n = 20_000
    for a in (rng.integers(0, 1 << 16, size=(n, 64), dtype=np.uint16),
              bf16(rng.standard_normal((n, 64))).view(np.uint16)):
        b = np.roll(a, 1, axis=0)
        c_vec, c_port = np.empty((n, 64), np.float32), np.empty((n, 64), np.float32)
        raw.matmul_bf16_8x8_batched(a, b, c_vec)
        raw.matmul_bf16_8x8_batched(a, b, c_port, portable=True)
        assert_same_bits(c_vec, c_port)
        # The general entry point takes the same path for dense 8x8 stacks.
        c_gen = np.empty((n, 64), np.float32)
        raw.matmul_bf16(a, b, c_gen, 8, 8, 8, portable=True)
        assert_same_bits(c_gen, c_port)


# --- Hypothesis: shapes ------------------------------------------------------------------

dims = st.integers(1, 40)
batch_dims = st.lists(st.integers(1, 3), max_size=2)


@settings(max_examples=40, deadline=None)
@given(m=dims, k=dims, n=dims, ba=batch_dims, bb=batch_dims, seed=st.integers(0, 2**32 - 1))
def test_hypothesis_shapes_integer_exact(m, k, n, ba, bb, seed):
    # Make the batch shapes broadcastable: where both have an axis, one of them is 1.
    ba, bb = list(ba), list(bb)
    for i in range(1, min(len(ba), len(bb)) + 1):
        if ba[-i] != bb[-i]:
            bb[-i] = 1
    rng = np.random.default_rng(seed)
    a = bf16(rng.integers(-3, 4, (*ba, m, k)))
    b = bf16(rng.integers(-3, 4, (*bb, k, n)))
    c = hn.matmul(a, b)
    expect = ref64(a, b)
    assert c.shape == expect.shape
    np.testing.assert_array_equal(c, expect)


@settings(max_examples=25, deadline=None)
@given(m=dims, kb=st.integers(1, 6), n=dims, rounding=st.sampled_from(["floor", "even"]),
       seed=st.integers(0, 2**32 - 1))
def test_hypothesis_bfp16_within_bound(m, kb, n, rounding, seed):
    k = 8 * kb
    rng = np.random.default_rng(seed)
    a = bf16(rng.standard_normal((m, k)) * 4.0 ** rng.integers(-4, 5, (m, k)))
    b = bf16(rng.standard_normal((k, n)))
    qa, qb = quantize_along_k(a, b, rounding)
    c = hn.matmul(a, b, compute="bfp16", rounding=rounding)
    assert (np.abs(c - ref64(qa, qb)) <= bound(qa, qb)).all()
