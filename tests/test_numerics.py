"""hrxarray.numerics: BF16 conversion against ml_dtypes, BFP16 against a slow reference written from the spec."""

import threading

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrxarray import numerics as hn
from hrxarray._core import numerics as raw

BF16 = np.dtype(ml_dtypes.bfloat16)
RNG_SEED = 20261202


def f32(bits):
    """float32 array from uint32 bit patterns."""
    return np.asarray(bits, dtype=np.uint32).view(np.float32)


def bits32(x):
    return np.asarray(x, dtype=np.float32).view(np.uint32)


def bits16(x):
    return np.asarray(x).view(np.uint16)


# --- the BFP16 reference --------------------------------------------------
# Written from DESIGN.md "Numerics" / numerics.md A1 in float64 arithmetic
# (no bit shifts), deliberately unlike the kernel's integer implementation.


def ref_encode(x, rounding):
    x = np.asarray(x, dtype=np.float32)
    n = x.shape[-1]
    blocks = x.reshape(-1, 8)
    expo = (blocks.view(np.uint32) >> 23) & 0xFF
    v = np.where(expo == 0, 0.0, blocks.astype(np.float64))  # subnormals and -0 flush to +0
    e = expo.max(axis=1).astype(np.int64)  # largest biased exponent field
    scale = np.ldexp(1.0, e - 133)[:, None]
    if rounding == "floor":
        m = np.floor(v / scale)
    else:
        m = np.round(v / scale)  # numpy rounds half to even
        over = (m > 127).any(axis=1)
        bump = over & (e < 254)
        e = e + bump
        m = np.where(bump[:, None], np.round(v / (2 * scale)), m)
    m = np.where((e == 254)[:, None], np.clip(m, -127, 127), m)  # +-2**128 is beyond float32
    assert m.min(initial=0) >= -128 and m.max(initial=0) <= 127
    out = np.empty((blocks.shape[0], 9), np.uint8)
    out[:, 0] = e
    out[:, 1:] = m.astype(np.int8).view(np.uint8)
    return out.reshape(x.shape[:-1] + (n // 8, 9))


def ref_decode(blocks):
    blocks = np.asarray(blocks, dtype=np.uint8)
    e = blocks[..., 0].astype(np.int64)
    m = blocks[..., 1:].view(np.int8).astype(np.float64)
    with np.errstate(over="ignore"):
        y = (m * np.ldexp(1.0, e - 133)[..., None]).astype(np.float32)
    return y.reshape(blocks.shape[:-2] + (blocks.shape[-2] * 8,))


# --- BF16 -------------------------------------------------------------------


def test_bf16_to_f32_exhaustive():
    pats = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    x = pats.view(BF16)
    got = hn.from_bfloat16(x)
    assert got.dtype == np.float32 and got.shape == x.shape
    assert np.array_equal(bits32(got), pats.astype(np.uint32) << 16)  # exact, payloads kept
    want = x.astype(np.float32)
    nan = np.isnan(want)
    assert nan.sum() == 254  # exponent all ones, fraction nonzero, either sign
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(bits32(got)[~nan], bits32(want)[~nan])


def check_f32_to_bf16(x):
    got = hn.to_bfloat16(x)
    assert got.dtype == BF16 and got.shape == x.shape
    with np.errstate(all="ignore"):
        want = x.astype(BF16)
    nan = np.isnan(x)
    assert np.array_equal(np.isnan(got.astype(np.float32)), nan)
    assert np.array_equal(bits16(got)[~nan], bits16(want)[~nan])
    g = bits16(got)[nan]
    assert np.all((g & 0x7FFF) == 0x7FC0)  # quiet NaN ...
    assert np.array_equal(g >> 15, (bits32(x)[nan] >> 31).astype(np.uint16))  # ... with its sign


def test_f32_to_bf16_random_bit_patterns():
    rng = np.random.default_rng(RNG_SEED)
    check_f32_to_bf16(f32(rng.integers(0, 1 << 32, size=1 << 22, dtype=np.uint32)))


def test_f32_to_bf16_ties():
    rng = np.random.default_rng(RNG_SEED + 1)
    hi = rng.integers(0, 1 << 16, size=1 << 18, dtype=np.uint32)
    check_f32_to_bf16(f32((hi << 16) | 0x8000))  # exactly halfway: to even
    check_f32_to_bf16(f32((hi << 16) | 0x7FFF))
    check_f32_to_bf16(f32((hi << 16) | 0x8001))


def test_f32_to_bf16_special_values():
    fi = np.finfo(np.float32)
    vals = np.array(
        [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, fi.max, -fi.max, fi.tiny, -fi.tiny,
         fi.smallest_subnormal, -fi.smallest_subnormal, 1e-40, -1e-40, 1.0, -1.0,
         1 + 2**-8, 1 + 3 * 2**-8, 3.0e38, 3.4e38],
        dtype=np.float32,
    )
    pats = np.array([0x7F800001, 0xFF800001, 0x7FBFFFFF, 0x7FC00000, 0x7FFFFFFF, 0xFFFFFFFF,
                     0x7F7F8000, 0x7F7F7FFF, 0x00008000, 0x00018000, 0x807FFFFF, 0x3F808000],
                    dtype=np.uint32)
    x = np.concatenate([vals, f32(pats)])
    check_f32_to_bf16(x)
    got = bits16(hn.to_bfloat16(x))
    assert list(got[:4]) == [0x0000, 0x8000, 0x7F80, 0xFF80]
    assert got[6] == 0x7F80 and got[7] == 0xFF80  # FLT_MAX overflows to Inf
    assert got[12] == 0x0001  # 1e-40 stays a bf16 subnormal
    assert got[16] == 0x3F80 and got[17] == 0x3F82  # ties to even


def test_bf16_roundtrip_through_both():
    rng = np.random.default_rng(RNG_SEED + 2)
    h = rng.integers(0, 1 << 16, size=4096, dtype=np.uint16).view(BF16)
    h = h[~np.isnan(h.astype(np.float32))]
    assert np.array_equal(bits16(hn.to_bfloat16(hn.from_bfloat16(h))), bits16(h))


@pytest.mark.parametrize("layout", ["strided", "transposed", "reversed", "big_endian", "unaligned", "0d"])
def test_bf16_any_strides(layout):
    rng = np.random.default_rng(RNG_SEED + 3)
    base = rng.standard_normal((6, 10)).astype(np.float32)
    if layout == "strided":
        x = base[::2, 1::3]
    elif layout == "transposed":
        x = base.T
    elif layout == "reversed":
        x = base[::-1, ::-1]
    elif layout == "big_endian":
        x = base.astype(">f4")
    elif layout == "unaligned":
        buf = np.zeros(base.nbytes + 1, np.uint8)
        x = np.frombuffer(buf.data, np.float32, count=base.size, offset=1).reshape(base.shape)
        buf[1:] = base.view(np.uint8).reshape(-1)
        assert not x.flags.aligned
    else:
        x = np.float32(1.0 + 2**-8)
    want = np.asarray(x, dtype=np.float32).astype(BF16)
    got = hn.to_bfloat16(x)
    assert got.shape == want.shape and np.array_equal(bits16(got), bits16(want))
    assert np.array_equal(hn.from_bfloat16(got), want.astype(np.float32))
    assert np.array_equal(hn.from_bfloat16(want[..., ::-1] if want.ndim else want),
                          (want[..., ::-1] if want.ndim else want).astype(np.float32))


def test_bf16_empty():
    assert hn.to_bfloat16(np.zeros((0, 3), np.float32)).shape == (0, 3)
    assert hn.from_bfloat16(np.zeros((2, 0), BF16)).shape == (2, 0)


def test_bf16_out():
    x = np.linspace(-3, 3, 24, dtype=np.float32).reshape(4, 6)
    out = np.empty((4, 6), BF16)
    assert hn.to_bfloat16(x, out=out) is out
    assert np.array_equal(bits16(out), bits16(x.astype(BF16)))
    big = np.zeros((4, 12), BF16)
    view = big[:, ::2]  # non-contiguous out: filled in place, others untouched
    assert hn.to_bfloat16(x, out=view) is view
    assert np.array_equal(bits16(big[:, ::2]), bits16(x.astype(BF16)))
    assert not bits16(big[:, 1::2]).any()
    back = np.empty((6, 4), np.float32).T
    assert hn.from_bfloat16(out, out=back) is back
    assert np.array_equal(back, out.astype(np.float32))


def test_bf16_out_overlapping_input():
    buf = np.zeros(32, np.uint16)
    h = buf[:16].view(BF16)
    h[:] = np.arange(16, dtype=np.float32).astype(BF16)
    out = buf.view(np.float32)  # 16 float32 over the same bytes as h
    assert hn.from_bfloat16(h, out=out) is out
    assert np.array_equal(out, np.arange(16, dtype=np.float32))


@pytest.mark.parametrize(
    "func, x, out, exc, words",
    [
        ("to_bfloat16", np.zeros(3), None, TypeError, "float64"),
        ("to_bfloat16", np.zeros(3, np.int32), None, TypeError, "int32"),
        ("to_bfloat16", np.zeros(3, BF16), None, TypeError, "bfloat16"),
        ("to_bfloat16", np.zeros(3, np.float32), np.zeros(3, np.uint16), TypeError, "uint16"),
        ("to_bfloat16", np.zeros(3, np.float32), np.zeros(4, BF16), ValueError, "shape"),
        ("to_bfloat16", np.zeros(3, np.float32), [0, 0, 0], TypeError, "list"),
        ("from_bfloat16", np.zeros(3, np.float32), None, TypeError, "float32"),
        ("from_bfloat16", np.zeros(3, np.uint16), None, TypeError, "uint16"),
        ("from_bfloat16", np.zeros(3, BF16), np.zeros(3), TypeError, "float64"),
        ("from_bfloat16", np.zeros(3, BF16), np.zeros((3, 1), np.float32), ValueError, "shape"),
    ],
)
def test_bf16_errors(func, x, out, exc, words):
    with pytest.raises(exc, match=words):
        getattr(hn, func)(x, out=out)


def test_bf16_read_only_out():
    out = np.zeros(3, BF16)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        hn.to_bfloat16(np.zeros(3, np.float32), out=out)


def test_bf16_read_only_input():
    x = np.arange(4, dtype=np.float32)
    x.flags.writeable = False
    assert np.array_equal(hn.from_bfloat16(hn.to_bfloat16(x)), x)


# --- BFP16: fixed cases -------------------------------------------------------


def block(*vals):
    x = np.zeros(8, np.float32)
    x[: len(vals)] = vals
    return x


def mant(b):
    return b[..., 1:].view(np.int8)


@pytest.mark.parametrize("rounding", ["floor", "even"])
def test_bfp16_zero_and_subnormal_blocks(rounding):
    tiny = np.finfo(np.float32).smallest_subnormal
    x = np.stack([block(), block(-0.0, 0.0, -0.0), block(tiny, -tiny, 1e-39, -1e-39, 5e-40)])
    b = hn.bfp16_encode(x, rounding)
    assert b.shape == (3, 1, 9)
    assert not b.any()  # E = 0 and mantissas 0: subnormals flush
    y = hn.bfp16_decode(b)
    assert y.shape == (3, 8) and not bits32(y).any()  # +0.0 everywhere
    # A subnormal next to a normal value is flushed too, even when negative.
    b = hn.bfp16_encode(block(2.0**-126, -tiny, -1e-39), rounding)
    assert b[0, 0] == 1 and list(mant(b)[0, :3]) == [64, 0, 0]


@pytest.mark.parametrize("rounding", ["floor", "even"])
def test_bfp16_minus_128_mantissa(rounding):
    b = hn.bfp16_encode(block(-1.9999999, 1.0, -1.0, 0.5), rounding)
    assert b[0, 0] == 127
    assert list(mant(b)[0, :4]) == [-128, 64, -64, 32]
    assert hn.bfp16_decode(b)[0] == -2.0


def test_bfp16_exponent_bump():
    x = block(f32(0x3FFFFFFF), 0.5, -0.25, 2.0**-7, 2.0**-6)  # 1.9999999 tops the block
    b = hn.bfp16_encode(x, "floor")
    assert b[0, 0] == 127 and list(mant(b)[0, :5]) == [127, 32, -16, 0, 1]
    b = hn.bfp16_encode(x, "even")
    assert b[0, 0] == 128 and list(mant(b)[0, :5]) == [64, 16, -8, 0, 0]  # 0.5 LSB ties to 0
    # Exactly 127.5 LSB rounds to 128 (even) and bumps; 126.5 rounds to 126 and does not.
    assert hn.bfp16_encode(block(127.5 * 2**-6), "even")[0, 0] == 128
    b = hn.bfp16_encode(block(126.5 * 2**-6), "even")
    assert b[0, 0] == 127 and mant(b)[0, 0] == 126
    # A negative top value never bumps: -127.5 rounds to -128.
    b = hn.bfp16_encode(block(-127.5 * 2**-6), "even")
    assert b[0, 0] == 127 and mant(b)[0, 0] == -128


def test_bfp16_bump_saturates_at_top_exponent():
    fmax = np.finfo(np.float32).max
    for rounding in ("floor", "even"):
        b = hn.bfp16_encode(block(fmax, -fmax), rounding)
        assert b[0, 0] == 254 and list(mant(b)[0, :2]) == [127, -127]
        assert np.isfinite(hn.bfp16_decode(b)).all()
    # Just below the top binade the bump to E = 254 is ordinary.
    b = hn.bfp16_encode(block(f32(0x7EFFFFFF), -f32(0x7EFFFFFF)), "even")
    assert b[0, 0] == 254 and list(mant(b)[0, :2]) == [64, -64]


def test_bfp16_ties_and_floor_direction():
    lsb = 2.0**-6  # block max 1.0: E = 127
    x = block(1.0, 2.5 * lsb, -2.5 * lsb, 3.5 * lsb, -0.75 * lsb, 0.25 * lsb)
    assert list(mant(hn.bfp16_encode(x, "floor"))[0, :6]) == [64, 2, -3, 3, -1, 0]
    assert list(mant(hn.bfp16_encode(x, "even"))[0, :6]) == [64, 2, -2, 4, -1, 0]


def test_bfp16_wide_exponent_spread():
    x = block(1.0, 2.0**-40, -(2.0**-40), -(2.0**-100), 3.0 * 2**-20, 2.0**-6, -(2.0**-7))
    assert list(mant(hn.bfp16_encode(x, "floor"))[0, :7]) == [64, 0, -1, -1, 0, 1, -1]
    assert list(mant(hn.bfp16_encode(x, "even"))[0, :7]) == [64, 0, 0, 0, 0, 1, 0]


def test_bfp16_decode_exhaustive_over_exponent_and_mantissa():
    m = np.arange(256, dtype=np.uint8).reshape(32, 8)
    blocks = np.empty((256, 32, 9), np.uint8)
    blocks[:, :, 0] = np.arange(256, dtype=np.uint8)[:, None]
    blocks[:, :, 1:] = m
    got = hn.bfp16_decode(blocks)
    want = ref_decode(blocks)
    assert got.shape == (256, 256)
    assert np.array_equal(bits32(got), bits32(want))  # incl. subnormals for E < 7, Inf at E = 255
    assert np.isinf(got[255]).sum() == 129  # m >= 64 or m <= -64
    assert np.isinf(got[254]).sum() == 1  # m = -128: -2**128


def test_bfp16_quantize_matches_encode_decode_and_bf16_input():
    rng = np.random.default_rng(RNG_SEED + 4)
    x = rng.standard_normal((3, 5, 64)).astype(np.float32)
    for rounding in ("floor", "even"):
        q = hn.bfp16_quantize(x, rounding)
        assert q.dtype == np.float32 and q.shape == x.shape
        assert np.array_equal(q, ref_decode(ref_encode(x, rounding)))
        h = x.astype(BF16)
        assert np.array_equal(hn.bfp16_quantize(h, rounding),
                              hn.bfp16_quantize(h.astype(np.float32), rounding))
        # Quantising twice changes nothing, except in blocks holding m = -128: that
        # decodes to -2**(E-126), whose exponent field is E + 1, so E grows.
        has_min = (mant(hn.bfp16_encode(x, rounding)) == -128).any(axis=-1)
        same = (hn.bfp16_quantize(q, rounding) == q).reshape(has_min.shape + (8,)).all(axis=-1)
        assert same[~has_min].all()


def test_bfp16_floor_error_bias():
    rng = np.random.default_rng(RNG_SEED + 5)
    x = rng.standard_normal(1 << 16).astype(np.float32)
    err = {r: (hn.bfp16_quantize(x, r) - x).astype(np.float64) for r in ("floor", "even")}
    assert err["floor"].max() <= 0  # floor never rounds up
    rel = {r: np.sqrt(np.mean(e**2) / np.mean(x.astype(np.float64) ** 2)) for r, e in err.items()}
    assert 1.0e-2 < rel["floor"] < 1.5e-2 and 5e-3 < rel["even"] < 7.5e-3  # numerics.md A1


@pytest.mark.parametrize("layout", ["strided", "transposed", "reversed", "big_endian", "3d"])
def test_bfp16_any_strides(layout):
    rng = np.random.default_rng(RNG_SEED + 6)
    base = (rng.standard_normal((16, 32)) * np.exp2(rng.integers(-20, 20, (16, 32)))).astype(np.float32)
    x = {
        "strided": base[::2, ::2],
        "transposed": base.T,
        "reversed": base[::-1, ::-1],
        "big_endian": base.astype(">f4"),
        "3d": base.reshape(4, 4, 32)[:, ::-1, 8:24],
    }[layout]
    for rounding in ("floor", "even"):
        b = hn.bfp16_encode(x, rounding)
        assert np.array_equal(b, ref_encode(np.ascontiguousarray(x, np.float32), rounding))
        assert np.array_equal(hn.bfp16_decode(b[..., ::-1, :]), ref_decode(b[..., ::-1, :]))
        assert np.array_equal(hn.bfp16_decode(np.asfortranarray(b)), ref_decode(b))


def test_bfp16_empty():
    assert hn.bfp16_encode(np.zeros((3, 0), np.float32)).shape == (3, 0, 9)
    assert hn.bfp16_decode(np.zeros((2, 0, 9), np.uint8)).shape == (2, 0)


# --- BFP16: property tests against the reference -------------------------------

# Finite float32 bit patterns: every exponent field 0..254 (subnormals included).
finite_bits = st.builds(
    lambda s, e, f: (s << 31) | (e << 23) | f,
    st.integers(0, 1),
    st.integers(0, 254),
    st.one_of(st.integers(0, (1 << 23) - 1),
              st.sampled_from([0, 0x7FFFFF, 0x7F0000, 0x7E0000, 0x7F8000, 0x400000, 0x010000])),
)


@st.composite
def clustered_blocks(draw):
    """Blocks whose exponents sit within `spread` binades of a top one, with near-overflow mantissas."""
    nblocks = draw(st.integers(1, 6))
    out = []
    for _ in range(nblocks):
        top = draw(st.integers(1, 254))
        spread = draw(st.sampled_from([0, 1, 7, 8, 24, 40, 254]))
        for _ in range(8):
            e = draw(st.integers(max(0, top - spread), top))
            f = draw(st.one_of(st.integers(0, (1 << 23) - 1),
                               st.sampled_from([0x7FFFFF, 0x7F0000, 0x7F8000, 0x7EFFFF, 0x018000])))
            out.append((draw(st.integers(0, 1)) << 31) | (e << 23) | f)
    return f32(out).reshape(nblocks, 8)


@st.composite
def any_blocks(draw):
    rows = draw(st.integers(1, 3))
    nb = draw(st.integers(1, 4))
    return f32(draw(st.lists(finite_bits, min_size=rows * nb * 8, max_size=rows * nb * 8))).reshape(rows, nb * 8)


@settings(max_examples=60)
@given(x=st.one_of(any_blocks(), clustered_blocks()), rounding=st.sampled_from(["floor", "even"]))
def test_bfp16_encode_matches_reference(x, rounding):
    b = hn.bfp16_encode(x, rounding)
    want = ref_encode(x, rounding)
    assert np.array_equal(b, want), (b, want)
    portable = np.empty_like(b)
    assert raw.bfp16_encode(x, portable, rounding, portable=True) == -1
    assert np.array_equal(portable, want)
    assert np.array_equal(bits32(hn.bfp16_decode(b)), bits32(ref_decode(want)))


@settings(max_examples=40)
@given(blocks=st.lists(st.binary(min_size=9, max_size=9), min_size=1, max_size=16))
def test_bfp16_decode_matches_reference(blocks):
    b = np.frombuffer(b"".join(blocks), np.uint8).reshape(-1, 9)
    assert np.array_equal(bits32(hn.bfp16_decode(b)), bits32(ref_decode(b)))


def test_bfp16_large_random_matches_reference():
    rng = np.random.default_rng(RNG_SEED + 7)
    bits = rng.integers(0, 1 << 32, size=(1 << 18), dtype=np.uint32)
    bits[(bits >> 23 & 0xFF) == 0xFF] &= 0xFF7FFFFF  # make every value finite
    x = f32(bits).reshape(-1, 64)
    for rounding in ("floor", "even"):
        assert np.array_equal(hn.bfp16_encode(x, rounding), ref_encode(x, rounding))


# --- vector paths against the portable path ------------------------------------


def test_kernel_paths():
    paths = raw.kernel_paths()
    assert paths["bf16"] in ("avx512", "avx2", "portable")
    assert paths["bfp16"] in ("avx512", "portable")


def test_vector_and_portable_paths_agree():
    rng = np.random.default_rng(RNG_SEED + 9)
    bits = rng.integers(0, 1 << 32, size=(1 << 18) + 8, dtype=np.uint32)  # odd block count
    x = f32(bits)
    h_vec, h_port = np.empty(x.size, np.uint16), np.empty(x.size, np.uint16)
    raw.f32_to_bf16(x, h_vec)
    raw.f32_to_bf16(x, h_port, portable=True)
    assert np.array_equal(h_vec, h_port)
    y_vec, y_port = np.empty(x.size, np.float32), np.empty(x.size, np.float32)
    raw.bf16_to_f32(h_vec, y_vec)
    raw.bf16_to_f32(h_vec, y_port, portable=True)
    assert np.array_equal(y_vec.view(np.uint32), y_port.view(np.uint32))
    bits[(bits >> 23 & 0xFF) == 0xFF] &= 0xFF7FFFFF  # finite only
    near_top = (rng.integers(0, 2, bits.size, dtype=np.uint32) << 31) | np.uint32(0x7F7F0000) | \
        rng.integers(0, 1 << 16, bits.size, dtype=np.uint32)  # E = 254 blocks
    gauss = rng.standard_normal(bits.size).astype(np.float32)
    for data in (f32(bits), f32(near_top), gauss, gauss * np.float32(2.0**-120)):
        for rounding in ("floor", "even"):
            b_vec = np.empty(data.size // 8 * 9, np.uint8)
            b_port = np.empty_like(b_vec)
            assert raw.bfp16_encode(data, b_vec, rounding) == -1
            assert raw.bfp16_encode(data, b_port, rounding, portable=True) == -1
            assert np.array_equal(b_vec, b_port)
    junk = rng.integers(0, 256, size=9 * 4097, dtype=np.uint8)
    d_vec, d_port = np.empty(8 * 4097, np.float32), np.empty(8 * 4097, np.float32)
    raw.bfp16_decode(junk, d_vec)
    raw.bfp16_decode(junk, d_port, portable=True)
    assert np.array_equal(d_vec.view(np.uint32), d_port.view(np.uint32))
    assert np.array_equal(d_vec.view(np.uint32), bits32(ref_decode(junk.reshape(-1, 9))))


# --- BFP16: errors ------------------------------------------------------------


@pytest.mark.parametrize("rounding", ["nearest", "FLOOR", None, 0, ""])
def test_bfp16_bad_rounding(rounding):
    with pytest.raises(ValueError, match="rounding"):
        hn.bfp16_encode(np.zeros(8, np.float32), rounding)
    with pytest.raises(ValueError, match="rounding"):
        hn.bfp16_quantize(np.zeros(8, np.float32), rounding)


def test_bfp16_encode_errors():
    with pytest.raises(TypeError, match="float64"):
        hn.bfp16_encode(np.zeros(8))
    with pytest.raises(TypeError, match="int8"):
        hn.bfp16_encode(np.zeros(8, np.int8))
    with pytest.raises(ValueError, match="at least one axis"):
        hn.bfp16_encode(np.float32(1.0))
    with pytest.raises(ValueError, match=r"length 13, not a multiple of 8: block \(0, 1\)"):
        hn.bfp16_encode(np.zeros((2, 13), np.float32))
    with pytest.raises(ValueError, match=r"length 5, not a multiple of 8: block \(0\)"):
        hn.bfp16_quantize(np.zeros(5, np.float32))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, f32(0x7F800001)])
def test_bfp16_encode_rejects_non_finite_naming_the_block(bad):
    x = np.ones((3, 4, 16), np.float32)
    x[2, 1, 11] = bad
    x[2, 3, 0] = np.nan  # a later one is not reported
    with pytest.raises(ValueError, match=r"block \(2, 1, 1\), x\[2, 1, 8:16\], where x\[2, 1, 11\] = "):
        hn.bfp16_encode(x)
    with pytest.raises(ValueError, match=r"block \(2, 1, 1\)"):
        hn.bfp16_quantize(x, "even")
    # The index refers to x as given, also when x is a non-contiguous view.
    y = np.ones((16, 3), np.float32)
    y[9, 1] = bad
    with pytest.raises(ValueError, match=r"block \(1, 1\), x\[1, 8:16\], where x\[1, 9\]"):
        hn.bfp16_encode(y.T)


def test_bfp16_decode_errors():
    with pytest.raises(TypeError, match="int8"):
        hn.bfp16_decode(np.zeros((1, 9), np.int8))
    with pytest.raises(ValueError, match=r"\(\.\.\., nb, 9\)"):
        hn.bfp16_decode(np.zeros((1, 8), np.uint8))
    with pytest.raises(ValueError, match=r"\(\.\.\., nb, 9\)"):
        hn.bfp16_decode(np.zeros(9, np.uint8))


@pytest.mark.parametrize("offset", [0, 1, 3, 8, 15])
def test_bfp16_large_decode_streams_at_any_alignment(offset):
    # 2**20 + 3 blocks decode to just over 32 MiB, which takes the streaming-store path
    # (split over the pool); the output starts `offset` floats into a 64-byte aligned buffer.
    rng = np.random.default_rng(RNG_SEED + 20 + offset)
    nb = (1 << 20) + 3
    blocks = rng.integers(0, 256, size=(nb, 9), dtype=np.uint8)
    blocks[::7, 0] = rng.integers(0, 7, size=blocks[::7].shape[0])  # tiny scales (the double path)
    base = np.empty(nb * 8 + 32, np.float32)
    start = (-(base.ctypes.data // 4)) % 16 + offset
    out = base[start:start + nb * 8]
    assert out.ctypes.data % 64 == offset * 4
    base[:] = np.float32(7.0)
    assert hn.bfp16_decode(blocks, out=out) is out
    assert np.array_equal(bits32(out), bits32(ref_decode(blocks)))
    # Nothing outside the output was written.
    assert (base[:start] == 7.0).all() and (base[start + nb * 8:] == 7.0).all()


def test_bfp16_decode_out():
    rng = np.random.default_rng(RNG_SEED + 30)
    blocks = rng.integers(0, 256, size=(3, 5, 9), dtype=np.uint8)
    want = ref_decode(blocks)
    out = np.full((3, 40), np.nan, np.float32)
    assert hn.bfp16_decode(blocks, out=out) is out
    assert np.array_equal(bits32(out), bits32(want))
    # A non-contiguous out gets the values too.
    wide = np.zeros((3, 80), np.float32)
    assert hn.bfp16_decode(blocks, out=wide[:, ::2]).base is wide
    assert np.array_equal(bits32(wide[:, ::2]), bits32(want)) and not wide[:, 1::2].any()
    # An out sharing memory with the blocks sees the decode of the blocks as they were.
    buf = np.zeros(4 * 40 * 3, np.uint8)
    src = buf[: blocks.size].reshape(blocks.shape)
    src[...] = blocks
    assert np.array_equal(bits32(hn.bfp16_decode(src, out=buf.view(np.float32).reshape(3, 40))), bits32(want))
    # Bad outs are refused, and nothing is written.
    keep = np.full((3, 40), 5.0, np.float32)
    for bad, exc, msg in ((keep.astype(np.float64), TypeError, "dtype float32"),
                          (keep[:, :39], ValueError, "shape"),
                          (np.zeros(5), TypeError, "dtype"),
                          ([0.0] * 120, TypeError, "numpy.ndarray")):
        with pytest.raises(exc, match=msg):
            hn.bfp16_decode(blocks, out=bad)
    ro = keep.copy()
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        hn.bfp16_decode(blocks, out=ro)
    assert (ro == 5.0).all()


def test_raw_kernels_check_sizes_and_overlap():
    x = np.zeros(16, np.float32)
    with pytest.raises(ValueError, match="size"):
        raw.f32_to_bf16(x, np.zeros(15, np.uint16))
    with pytest.raises(ValueError, match="overlap"):
        raw.f32_to_bf16(x, x.view(np.uint16)[:16])
    with pytest.raises(ValueError, match="rounding"):
        raw.bfp16_encode(x, np.zeros(18, np.uint8), "up")
    with pytest.raises(ValueError, match="9 bytes"):
        raw.bfp16_encode(x, np.zeros(17, np.uint8), "floor")
    with pytest.raises(TypeError):  # no silent conversion of an output
        raw.bf16_to_f32(np.zeros(4, np.uint16), np.zeros(4, np.float64))
    assert raw.bfp16_first_nonfinite_block(x) == -1
    x[13] = np.inf
    assert raw.bfp16_first_nonfinite_block(x) == 1


def test_kernels_run_concurrently_from_threads():
    rng = np.random.default_rng(RNG_SEED + 8)
    x = rng.standard_normal((4, 1 << 16)).astype(np.float32)
    want_h = [bits16(row.astype(BF16)) for row in x]
    want_b = [ref_encode(row, "even") for row in x]
    got = [None] * 4

    def work(i):
        for _ in range(3):
            got[i] = (bits16(hn.to_bfloat16(x[i])), hn.bfp16_encode(x[i], "even"))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for (h, b), wh, wb in zip(got, want_h, want_b):
        assert np.array_equal(h, wh) and np.array_equal(b, wb)


POOL_STRESS = r"""
import sys, threading
import numpy as np, ml_dtypes
from hrxarray import numerics as hn
from hrxarray._core import numerics as raw
assert raw.matmul_num_threads() == 8, raw.matmul_num_threads()
rng = np.random.default_rng(5)
# Sizes on both sides of the thread thresholds: jobs of 1, a few and many items, tile and pair orders.
cases = []
for n in (40, 96, 200, 300):
    a = rng.standard_normal((n, n), dtype=np.float32).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((n, n), dtype=np.float32).astype(ml_dtypes.bfloat16)
    for order in ("pair", "tile"):
        cases.append((a, b, order, hn.matmul(a, b, order=order)))
# Jobs of sleeping items from every thread too: all pool threads then get a CPU and claim items, so a
# caller that returned before its items finished, or an item run twice, shows.
probes = []
x = rng.standard_normal(1 << 21).astype(np.float32)
want_bits = hn.to_bfloat16(x).view(np.uint16).copy()
errors = []

def work(w):
    try:
        for it in range(12):
            a, b, order, want = cases[(w + it) % len(cases)]
            got = hn.matmul(a, b, order=order)
            if not np.array_equal(got.view(np.uint32), want.view(np.uint32)):
                errors.append(("matmul", w, it, order, a.shape))
            if not np.array_equal(hn.to_bfloat16(x).view(np.uint16), want_bits):
                errors.append(("to_bfloat16", w, it))
            once, finished, used = raw._pool_probe(24, 300)
            probes.append(used)
            if not (once and finished):
                errors.append(("pool_probe", w, it, once, finished))
    except BaseException as e:
        errors.append(repr(e))

threads = [threading.Thread(target=work, args=(w,)) for w in range(6)]
for t in threads:
    t.start()
for t in threads:
    t.join()
# One probe alone holds the pool: its sleeping items spread over several of its 8 threads.
if raw._pool_probe(64, 500)[2] < 2:
    errors.append("a lone probe ran on one thread")
print("errors", errors, "threads per probe", sorted(set(probes)))
sys.exit(1 if errors else 0)
"""


def test_pool_jobs_from_many_threads_with_more_pool_threads_than_cores(tmp_path):
    # Note [Claims, not check-ins] in kernels/pool.cpp: 6 Python threads start pool jobs at once (one
    # job runs on the pool, the others inline) on a pool of 8 threads, more than this host's cores;
    # every result must be the bits computed before, and nothing may hang.
    import os
    import subprocess
    import sys

    script = tmp_path / "pool_stress.py"
    script.write_text(POOL_STRESS)
    env = {**os.environ, "HRXARRAY_POOL_THREADS": "8"}
    proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_numerics_and_bfloat16_are_reachable_from_the_package():
    import ml_dtypes

    import hrxarray

    assert hrxarray.bfloat16 is ml_dtypes.bfloat16
    assert hrxarray.numerics.to_bfloat16 is hn.to_bfloat16
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        hrxarray.nonexistent  # noqa: B018


def test_bfp16_threaded_split_matches_single_threaded_portable_path():
    # 2**21 values is above the size where encode/decode are split over the pool.
    rng = np.random.default_rng(RNG_SEED + 8)
    scale = np.exp2(rng.integers(-30, 31, (1 << 18, 1))).astype(np.float32)
    x = (rng.standard_normal((1 << 18, 8), dtype=np.float32) * scale).reshape(-1)
    for rounding in ("floor", "even"):
        fast = np.empty((1 << 18) * 9, np.uint8)
        port = np.empty_like(fast)
        assert raw.bfp16_encode(x, fast, rounding) == -1
        raw.bfp16_encode(x, port, rounding, portable=True)
        assert np.array_equal(fast, port)
    d_fast = np.empty_like(x)
    d_port = np.empty_like(x)
    raw.bfp16_decode(fast, d_fast)
    raw.bfp16_decode(fast, d_port, portable=True)
    assert np.array_equal(d_fast.view(np.uint32), d_port.view(np.uint32))
