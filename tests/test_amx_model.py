"""The AMX tile path of the bf16 matmul (Note [AMX tiles] in ext/core/kernels/amx.h).

No machine of the project has AMX, so the path's packing (pairs swapped to get the contract's
odd-index-first order), its 32 x 32 blocks, its 16-pair chunks with a shorter last chunk on a tile
configuration of its own, its column chunks and its thread split run here on a software model of
the tile unit (Intel's TDPBF16PS definition), and must give the dispatched and the portable
kernels' results bit for bit. On a CPU with AMX the hardware path is also checked in-process.
"""

import os
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrxarray._core import cpu_features
from hrxarray._core import numerics as raw

BF16 = np.dtype(ml_dtypes.bfloat16)


def assert_same_bits(x, y):
    """Bit-identical, except that which NaN (sign, payload) comes out is unspecified."""
    nan = np.isnan(x)
    np.testing.assert_array_equal(nan, np.isnan(y))
    np.testing.assert_array_equal(x[~nan].view(np.uint32), y[~nan].view(np.uint32))


def operands(rng, kind, shape):
    """bf16 bit patterns: normal values, tiny exponents (subnormals, products below FLT_MIN),
    any pattern (NaN/Inf/overflow), or small integers with signed zeros."""
    if kind == "normal":
        return rng.standard_normal(shape).astype(np.float32).astype(BF16).view(np.uint16)
    if kind == "tiny":
        bits = rng.integers(0, 1 << 16, size=shape, dtype=np.uint16)
        exp = rng.integers(0, 70, size=shape, dtype=np.uint16)
        return (bits & 0x807F) | (exp << 7)
    if kind == "bits":
        return rng.integers(0, 1 << 16, size=shape, dtype=np.uint16)
    ints = rng.integers(-3, 4, size=shape).astype(np.float32)
    ints[rng.random(shape) < 0.2] = -0.0
    return ints.astype(BF16).view(np.uint16)


def three_ways(a, b, m, k, n, ia=None, ib=None, batch=1):
    out = [np.empty((batch, m, n), np.float32) for _ in range(3)]
    raw.matmul_bf16(a, b, out[0], m, k, n, ia, ib, amx_model=True)
    raw.matmul_bf16(a, b, out[1], m, k, n, ia, ib)
    raw.matmul_bf16(a, b, out[2], m, k, n, ia, ib, portable=True)
    return out


# K around the 16-pair chunk (31..33, 63..65), odd and even; M and N around the 32 x 32 block and
# the 16 x 16 tile; (40, 64, 600) spans two column chunks of the model's 64 KiB; (70, 1100, 90)
# has one panel per column chunk and a short last chunk.
SHAPES = [(1, 1, 1), (1, 2, 1), (16, 31, 16), (32, 32, 32), (33, 33, 31), (31, 63, 33),
          (17, 64, 15), (48, 65, 70), (40, 64, 600), (70, 1100, 90), (5, 3, 200)]


@pytest.mark.parametrize("kind", ["normal", "tiny", "bits", "ints"])
@pytest.mark.parametrize("shape", SHAPES)
def test_model_matches_dispatched_and_portable_bitwise(shape, kind):
    m, k, n = shape
    rng = np.random.default_rng(hash((shape, kind)) % 2**32)
    a, b = operands(rng, kind, (m, k)), operands(rng, kind, (k, n))
    model, vec, port = three_ways(a, b, m, k, n)
    assert_same_bits(model, vec)
    assert_same_bits(model, port)


def test_model_keeps_the_pair_order_and_the_odd_k_pad():
    # Products [2**24, 0, 1, 2] give 2**24 + 4 only in the order 1, 0, 3, 2 (see
    # test_numerics_matmul.py); ascending k or even-first pairs give 2**24 + 2.
    a = np.array([[2.0**24, 0.0, 1.0, 2.0]], np.float32).astype(BF16).view(np.uint16)
    b = np.ones((4, 1), np.float32).astype(BF16).view(np.uint16)
    c = np.empty((1, 1), np.float32)
    raw.matmul_bf16(a, b, c, 1, 4, 1, amx_model=True)
    assert c[0, 0] == 2.0**24 + 4
    # -1.5 * 2**-126 + 2**-126 = -2**-127 flushes to -0; after an odd K the 0 * 0 pad step makes
    # it +0. With K = 34 and -0 * 1 products after it the -0 stays: a last chunk padded with zero
    # pairs (+0 products) would turn it into +0.
    a3 = np.array([[1.0, -1.5 * 2.0**-126, 1.0]], np.float32).astype(BF16).view(np.uint16)
    b3 = np.array([[2.0**-126], [1.0], [0.0]], np.float32).astype(BF16).view(np.uint16)
    raw.matmul_bf16(a3, b3, c, 1, 3, 1, amx_model=True)
    assert c.view(np.uint32)[0, 0] == 0
    a34 = np.full((1, 34), 0x8000, np.uint16)  # -0
    a34[0, :2] = a3[0, :2]
    b34 = np.full((34, 1), 0x3F80, np.uint16)  # 1.0
    b34[:2, 0] = b3[:2, 0]
    raw.matmul_bf16(a34, b34, c, 1, 34, 1, amx_model=True)
    assert c.view(np.uint32)[0, 0] == 0x80000000
    raw.matmul_bf16(a34, b34, c, 1, 34, 1, portable=True)
    assert c.view(np.uint32)[0, 0] == 0x80000000


def test_model_batches_and_broadcast_indices():
    rng = np.random.default_rng(7)
    m, k, n = 35, 70, 33
    a = operands(rng, "normal", (3, m, k))
    b = operands(rng, "normal", (2, k, n))
    ia = np.array([0, 1, 2, 2, 0], np.int64)
    ib = np.array([1, 1, 0, 1, 0], np.int64)
    model, vec, port = three_ways(a, b, m, k, n, ia, ib, batch=5)
    assert_same_bits(model, vec)
    assert_same_bits(model, port)
    zero_k = np.full((2, 4, 5), np.nan, np.float32)
    raw.matmul_bf16(np.empty(0, np.uint16), np.empty(0, np.uint16), zero_k, 4, 0, 5, amx_model=True)
    assert zero_k.view(np.uint32).max() == 0


def test_model_and_portable_are_exclusive_flags():
    a = np.zeros((2, 2), np.uint16)
    c = np.empty((2, 2), np.float32)
    with pytest.raises(ValueError, match="exclude each other"):
        raw.matmul_bf16(a, a, c, 2, 2, 2, portable=True, amx_model=True)


@settings(max_examples=25, deadline=None)
@given(m=st.integers(1, 70), k=st.integers(1, 140), n=st.integers(1, 70),
       kind=st.sampled_from(["normal", "tiny", "ints"]), seed=st.integers(0, 2**32 - 1))
def test_hypothesis_model_matches_portable(m, k, n, kind, seed):
    rng = np.random.default_rng(seed)
    a, b = operands(rng, kind, (m, k)), operands(rng, kind, (k, n))
    model, _, port = three_ways(a, b, m, k, n)
    assert_same_bits(model, port)


CPU = cpu_features()


@pytest.mark.skipif(not (CPU["amx_tile"] and CPU["amx_bf16"] and CPU["avx512_bf16"]),
                    reason="this CPU has no AMX-BF16 (the tile path is tested on the model above)")
def test_hardware_path_is_used_when_granted_and_can_be_turned_off():
    # Granted tile state and a passing first-use check give amx_bf16; a refused grant (or a
    # failed check) falls back to VDPBF16PS, and so does HRXARRAY_AMX=0.
    allowed = {"amx_bf16", "avx512_bf16"} if CPU["amx_permitted"] else {"avx512_bf16"}
    assert raw.kernel_paths()["matmul"] in allowed
    env = dict(os.environ, HRXARRAY_AMX="0")
    out = subprocess.run([sys.executable, "-c", "from hrxarray._core import numerics as r; "
                          "print(r.kernel_paths()['matmul'])"], env=env, capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == "avx512_bf16"
    # Whatever path runs, large products equal the portable kernels'.
    rng = np.random.default_rng(11)
    a, b = operands(rng, "normal", (96, 300)), operands(rng, "normal", (300, 64))
    _, vec, port = three_ways(a, b, 96, 300, 64)
    assert_same_bits(vec, port)
