"""The AMX tile path of the bf16 matmul (Note [AMX tiles] in ext/core/kernels/amx.h).

No machine of the project has AMX, so the path's packing, its 32 x 32 blocks, its 32-k chunks with a
shorter last chunk on a tile configuration of its own, its column chunks and its thread split run
here on a software model of the tile unit (TDPBF16PS as Intel's SDM defines it). The model is checked
bit for bit against this file's own NumPy implementation of the documented tile order, and within the
accumulation bound against float64 and the other paths. On a CPU with AMX the hardware path is also
checked, in a subprocess (the rest of the suite runs with HRXARRAY_AMX=0: tests/conftest.py).
"""

import os
import subprocess
import sys
import textwrap

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrxarray._core import cpu_features
from hrxarray._core import numerics as raw

BF16 = np.dtype(ml_dtypes.bfloat16)
U = 2.0**-24
CHUNK = 32  # k per TDPBF16PS (16 pairs)


def assert_same_bits(x, y):
    """Bit-identical, except that which NaN (sign, payload) comes out is unspecified."""
    nan = np.isnan(x)
    np.testing.assert_array_equal(nan, np.isnan(y))
    np.testing.assert_array_equal(x[~nan].view(np.uint32), y[~nan].view(np.uint32))


def operands(rng, kind, shape):
    """bf16 bit patterns: normal values, small integers (signed zeros included), tiny exponents
    (subnormals, products below FLT_MIN), or any pattern (NaN/Inf/overflow)."""
    if kind == "normal":
        return rng.standard_normal(shape).astype(np.float32).astype(BF16).view(np.uint16)
    if kind == "ints":
        ints = rng.integers(-3, 4, size=shape).astype(np.float32)
        ints[rng.random(shape) < 0.2] = -0.0
        return ints.astype(BF16).view(np.uint16)
    if kind == "tiny":
        bits = rng.integers(0, 1 << 16, size=shape, dtype=np.uint16)
        exp = rng.integers(0, 70, size=shape, dtype=np.uint16)
        return (bits & 0x807F) | (exp << 7)
    return rng.integers(0, 1 << 16, size=shape, dtype=np.uint16)


def as_f32(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def tile_order_reference(a_bits, b_bits):
    """The documented tile order, in float32 NumPy: per chunk of 32 k, the even-k and the odd-k
    products each summed from +0 in ascending k (an odd K's zero pad last in the odd sum), then
    acc = acc + (even + odd) from acc = +0. Exact for operands whose products and partial sums stay
    normal (bf16 x bf16 products are exact in float32, so each add is the FMA's one rounding)."""
    a, b = as_f32(a_bits), as_f32(b_bits)
    m, k = a.shape
    n = b.shape[1]
    acc = np.zeros((m, n), np.float32)
    for c0 in range(0, k, CHUNK):
        even = np.zeros((m, n), np.float32)
        odd = np.zeros((m, n), np.float32)
        for kk in range(c0, min(c0 + CHUNK, k)):
            prod = a[:, kk:kk + 1] * b[kk:kk + 1, :]
            if kk % 2 == 0:
                even = even + prod
            else:
                odd = odd + prod
        if k % 2 and c0 + CHUNK >= k:
            odd = odd + np.float32(0) * np.float32(0)
        acc = acc + (even + odd)
    return acc


def model(a, b, m, k, n, ia=None, ib=None, batch=1):
    c = np.empty((batch, m, n), np.float32)
    raw.matmul_bf16(a, b, c, m, k, n, ia, ib, amx_model=True)
    return c


# K around the 32-k chunk (31..33, 63..65), odd and even; M and N around the 32 x 32 block and the
# 16 x 16 tile; (40, 64, 600) spans two column chunks of the model's 64 KiB; (70, 1100, 90) has one
# panel per column chunk and a short last chunk.
SHAPES = [(1, 1, 1), (1, 2, 1), (16, 31, 16), (32, 32, 32), (33, 33, 31), (31, 63, 33),
          (17, 64, 15), (48, 65, 70), (40, 64, 600), (70, 1100, 90), (5, 3, 200)]


@pytest.mark.parametrize("kind", ["normal", "ints"])
@pytest.mark.parametrize("shape", SHAPES)
def test_model_is_the_documented_tile_order_bitwise(shape, kind):
    m, k, n = shape
    rng = np.random.default_rng(abs(hash((shape, kind))) % 2**32)
    a, b = operands(rng, kind, (m, k)), operands(rng, kind, (k, n))
    assert_same_bits(model(a, b, m, k, n)[0], tile_order_reference(a, b))


def bound(a_bits, b_bits):
    a, b = as_f32(a_bits).astype(np.float64), as_f32(b_bits).astype(np.float64)
    k = a.shape[-1] + 2
    return k * U * (1 + k * U) * (np.abs(a) @ np.abs(b))


@pytest.mark.parametrize("shape", [(40, 75, 37), (70, 1100, 90), (33, 64, 65)])
def test_model_within_the_accumulation_bound_and_exact_on_integers(shape):
    m, k, n = shape
    rng = np.random.default_rng(5)
    a, b = operands(rng, "normal", (m, k)), operands(rng, "normal", (k, n))
    exact = as_f32(a).astype(np.float64) @ as_f32(b).astype(np.float64)
    got = model(a, b, m, k, n)[0].astype(np.float64)
    assert np.all(np.abs(got - exact) <= bound(a, b))
    # The contract path obeys the same bound; the two orders differ somewhere on such data.
    contract = np.empty((1, m, n), np.float32)
    raw.matmul_bf16(a, b, contract, m, k, n, portable=True)
    assert np.all(np.abs(contract[0].astype(np.float64) - exact) <= bound(a, b))
    assert np.any(contract[0] != got)
    ai, bi = operands(rng, "ints", (m, k)), operands(rng, "ints", (k, n))
    exact_i = as_f32(ai).astype(np.float64) @ as_f32(bi).astype(np.float64)
    np.testing.assert_array_equal(model(ai, bi, m, k, n)[0], exact_i)


def test_the_tile_order_differs_from_the_pair_order_as_documented():
    # Products [2**24, 0, 1, 2]: the pair order (1, 0, 3, 2) gives 2**24 + 4; the tile order sums
    # the even k (2**24 + 1 -> 2**24, ties to even) and the odd k (0 + 2) apart: 2**24 + 2.
    a = np.array([[2.0**24, 0.0, 1.0, 2.0]], np.float32).astype(BF16).view(np.uint16)
    b = np.ones((4, 1), np.float32).astype(BF16).view(np.uint16)
    assert model(a, b, 1, 4, 1)[0, 0, 0] == 2.0**24 + 2
    c = np.empty((1, 1), np.float32)
    raw.matmul_bf16(a, b, c, 1, 4, 1, portable=True)
    assert c[0, 0] == 2.0**24 + 4
    # Chunks: 2**24 at k = 0 and 1s at k = 2, 3 (first chunk) and 32, 33 (second). Chunk 0: even
    # 2**24 + 1 -> 2**24 (ties to even), odd 1, their sum 2**24 + 1 -> 2**24; chunk 1: 1 + 1 = 2,
    # exact on top: 2**24 + 2. The pair order loses every 1 to rounding: 2**24.
    a = np.zeros((1, 40), np.float32)
    a[0, [0, 2, 3, 32, 33]] = [2.0**24, 1.0, 1.0, 1.0, 1.0]
    a = a.astype(BF16).view(np.uint16)
    b = np.ones((40, 1), np.float32).astype(BF16).view(np.uint16)
    got = model(a, b, 1, 40, 1)[0]
    assert got[0, 0] == 2.0**24 + 2
    assert_same_bits(got, tile_order_reference(a, b))
    raw.matmul_bf16(a, b, c, 1, 40, 1, portable=True)
    assert c[0, 0] == 2.0**24


def test_the_short_last_chunk_adds_no_zero_pairs():
    # K = 66: chunk 0 makes acc = 2**-126; chunk 1 adds -1.5 * 2**-126, which flushes acc to -0;
    # the last chunk (k = 64, 65) has products -2**-130 that flush both of its sums to -0, and
    # -0 + (-0 + -0) stays -0. Zero pairs padding that chunk would make its sums +0 and acc +0.
    a = np.zeros((1, 66), np.float32)
    b = np.ones((66, 1), np.float32)
    a[0, 0], a[0, 32] = 2.0**-126, -1.5 * 2.0**-126
    a[0, 64] = a[0, 65] = -(2.0**-65)
    b[64, 0] = b[65, 0] = 2.0**-65
    got = model(a.astype(BF16).view(np.uint16), b.astype(BF16).view(np.uint16), 1, 66, 1)
    assert got.view(np.uint32)[0, 0, 0] == 0x80000000


def test_model_batches_and_broadcast_indices():
    rng = np.random.default_rng(7)
    m, k, n = 35, 70, 33
    a = operands(rng, "normal", (3, m, k))
    b = operands(rng, "normal", (2, k, n))
    ia = np.array([0, 1, 2, 2, 0], np.int64)
    ib = np.array([1, 1, 0, 1, 0], np.int64)
    got = model(a, b, m, k, n, ia, ib, batch=5)
    for t in range(5):
        assert_same_bits(got[t], tile_order_reference(a[ia[t]], b[ib[t]]))
    zero_k = np.full((2, 4, 5), np.nan, np.float32)
    raw.matmul_bf16(np.empty(0, np.uint16), np.empty(0, np.uint16), zero_k, 4, 0, 5, amx_model=True)
    assert zero_k.view(np.uint32).max() == 0


def test_model_threads_and_column_chunks_change_nothing():
    # (70, 1100, 90) and (40, 64, 600) run threaded over several column chunks; the same products
    # one column block at a time (no split, one chunk) must give the same bits.
    rng = np.random.default_rng(9)
    for m, k, n in [(70, 1100, 90), (40, 64, 600)]:
        a, b = operands(rng, "tiny", (m, k)), operands(rng, "tiny", (k, n))
        whole = model(a, b, m, k, n)[0]
        for j0 in range(0, n, 32):
            bj = np.ascontiguousarray(b[:, j0:j0 + 32])
            assert_same_bits(whole[:, j0:j0 + 32], model(a, bj, m, k, bj.shape[1])[0])


def test_model_and_portable_are_exclusive_flags():
    a = np.zeros((2, 2), np.uint16)
    c = np.empty((2, 2), np.float32)
    with pytest.raises(ValueError, match="exclude each other"):
        raw.matmul_bf16(a, a, c, 2, 2, 2, portable=True, amx_model=True)


@settings(max_examples=25, deadline=None)
@given(m=st.integers(1, 70), k=st.integers(1, 140), n=st.integers(1, 70),
       kind=st.sampled_from(["normal", "ints"]), seed=st.integers(0, 2**32 - 1))
def test_hypothesis_model_is_the_tile_order(m, k, n, kind, seed):
    rng = np.random.default_rng(seed)
    a, b = operands(rng, kind, (m, k)), operands(rng, kind, (k, n))
    assert_same_bits(model(a, b, m, k, n)[0], tile_order_reference(a, b))


CPU = cpu_features()
HAS_AMX = CPU["amx_tile"] and CPU["amx_bf16"] and CPU["avx512_bf16"]


def test_no_amx_no_tile_path(tmp_path):
    if HAS_AMX and CPU["amx_permitted"]:
        pytest.skip("this CPU has AMX and Linux granted it")
    script = "from hrxarray._core import numerics as r; print(r.kernel_paths()['matmul'])"
    env = {k: v for k, v in os.environ.items() if k != "HRXARRAY_AMX"}
    # Outside the source tree, whose hrxarray/ has no compiled module in an installed checkout.
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                         check=True, cwd=tmp_path).stdout.strip()
    assert out != "amx_bf16"


@pytest.mark.skipif(not HAS_AMX, reason="this CPU has no AMX-BF16 (the tile path is tested on the model above)")
def test_hardware_path_matches_the_model_and_can_be_turned_off(tmp_path):
    # With the tile state granted and the first-use check passed the path is amx_bf16, and large
    # products give the model's bits; a refused grant or a failed check falls back to VDPBF16PS,
    # and so does HRXARRAY_AMX=0.
    script = textwrap.dedent("""
        import numpy as np
        from hrxarray._core import numerics as r
        rng = np.random.default_rng(3)
        a = rng.integers(0, 1 << 16, size=(96, 300), dtype=np.uint16) & 0xBFFF
        b = rng.integers(0, 1 << 16, size=(300, 64), dtype=np.uint16) & 0xBFFF
        c1 = np.empty((96, 64), np.float32); c2 = np.empty((96, 64), np.float32)
        r.matmul_bf16(a, b, c1, 96, 300, 64)
        r.matmul_bf16(a, b, c2, 96, 300, 64, amx_model=True)
        nan = np.isnan(c1) & np.isnan(c2)
        print(r.kernel_paths()['matmul'], bool((c1.view(np.uint32) == c2.view(np.uint32))[~nan].all()))
    """)
    env = {k: v for k, v in os.environ.items() if k != "HRXARRAY_AMX"}
    path, same = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                                text=True, check=True, cwd=tmp_path).stdout.split()
    allowed = {"amx_bf16", "avx512_bf16"} if CPU["amx_permitted"] else {"avx512_bf16"}
    assert path in allowed
    if path == "amx_bf16":
        assert same == "True"
    off = subprocess.run([sys.executable, "-c", "from hrxarray._core import numerics as r; "
                          "print(r.kernel_paths()['matmul'])"], env=dict(env, HRXARRAY_AMX="0"),
                         capture_output=True, text=True, check=True, cwd=tmp_path).stdout.strip()
    assert off == "avx512_bf16"
