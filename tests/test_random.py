"""hx.random: bit-exact against a plain-Python model of the generator, reproducible across
thread counts, statistically sound (fixed seeds, generous bounds), and strict about its arguments."""

import math
import os
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import hrxarray as hx

# --- the plain-Python model (Note [Random streams], ext/core/kernels/random.h) ----------------

M32 = 0xFFFFFFFF


def philox(ctr, key):
    """Philox4x32-10 from the paper's description: ctr 4 words, key 2 words."""
    x0, x1, x2, x3 = ctr
    k0, k1 = key
    for r in range(10):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
        p0, p1 = 0xD2511F53 * x0, 0xCD9E8D57 * x2
        x0, x1, x2, x3 = (p1 >> 32) ^ x1 ^ k0, p1 & M32, (p0 >> 32) ^ x3 ^ k1, p0 & M32
    return [x0, x1, x2, x3]


def block(key, slot, attempt=0):
    return philox([slot & M32, (slot >> 32) & M32, attempt, 0], [key & M32, key >> 32])


def w64(b, h):
    return (b[2 * h] << 32) | b[2 * h + 1]


def model_random(key, counter, n, f32=False, a=0.0, b=1.0):
    out = []
    if f32:
        for i in range(n):
            u = (block(key, counter + i // 4)[i % 4] >> 8) * 2.0**-24
            out.append(np.float32(a + b * u))
        return np.array(out, dtype=np.float32)
    for i in range(n):
        out.append(a + b * ((w64(block(key, counter + i // 2), i % 2) >> 11) * 2.0**-53))
    return np.array(out)


LN2_HI, LN2_LO = float.fromhex("0x1.62e42fee00000p-1"), float.fromhex("0x1.a39ef35793c76p-33")


def model_log(x):
    bits = struct.unpack("<Q", struct.pack("<d", x))[0]
    e = (bits >> 52) & 0x7FF
    m = struct.unpack("<d", struct.pack("<Q", (bits & ~(0x7FF << 52)) | (1022 << 52)))[0]
    ex = e - 1022
    if m < 0.70710678118654752440:
        m, ex = m * 2.0, ex - 1
    f = (m - 1.0) / (m + 1.0)
    f2 = f * f
    p = 1.0 / 23.0
    for k in range(10, -1, -1):
        p = p * f2 + 1.0 / (2 * k + 1)
    return ex * LN2_HI + (ex * LN2_LO + 2.0 * f * p)


def model_normal(key, counter, n, a=0.0, b=1.0):
    out = []
    for j in range((n + 1) // 2):
        attempt = 0
        while True:
            blk = block(key, counter + j, attempt)
            u = (w64(blk, 0) >> 11) * 2.0**-52 - 1.0
            v = (w64(blk, 1) >> 11) * 2.0**-52 - 1.0
            s = u * u + v * v
            if 0.0 < s < 1.0:
                break
            attempt += 1
        f = math.sqrt(-2.0 * model_log(s) / s)
        out += [a + b * (u * f), a + b * (v * f)]
    return np.array(out[:n])


def model_bounded(key, slot, lane, rng, narrow=None):
    """Lemire's multiply-and-reject over rng values (0: 2**64) for value `lane` of its slot, on
    32-bit words (narrow: the range's own regime by default) or 64-bit halves."""
    narrow = 0 < rng <= 1 << 32 if narrow is None else narrow
    attempt = 0
    while True:
        blk = block(key, slot, attempt)
        if narrow:
            m = blk[lane] * rng
            if m & M32 >= ((1 << 32) - rng) % rng:
                return m >> 32
        else:
            x = w64(blk, lane)
            if rng == 0:
                return x
            m = x * rng
            if m & ((1 << 64) - 1) >= ((1 << 64) - rng) % rng:
                return m >> 64
        attempt += 1


def model_integers(key, counter, n, low, high_incl, dtype):
    rng = (high_incl - low + 1) % (1 << 64)
    per = 4 if 0 < rng <= 1 << 32 else 2
    vals = [low + model_bounded(key, counter + i // per, i % per, rng) for i in range(n)]
    return np.array(vals, dtype=dtype)


def integer_blocks(n, rng):
    per = 4 if 0 < rng <= 1 << 32 else 2
    return -(-n // per)


def model_sample(key, counter, n, k, weights=None):
    if weights is None and k <= n // 16:  # Floyd's algorithm, then one key each for the order
        kept, order = set(), []
        for j in range(k):
            t = model_bounded(key, counter + j, 0, n - k + j + 1)
            pick = t if t not in kept else n - k + j
            kept.add(pick)
            order.append(pick)
        keyed = [(w64(block(key, counter + k + j), 0), order[j]) for j in range(k)]
        return [i for _, i in sorted(keyed)]
    keys = []
    for i in range(n):
        kb = w64(block(key, counter + i), 0)
        if weights is not None:
            u = ((kb >> 11) + 1) * 2.0**-53
            e = (0.0 - model_log(u)) / weights[i] if weights[i] > 0 else math.inf
            kb = struct.unpack("<Q", struct.pack("<d", e))[0]
        keys.append((kb, i))
    return [i for _, i in sorted(keys)[:k]]


def model_choice_cdf(key, counter, n, cdf):
    u = model_random(key, counter, n)
    return np.minimum(np.searchsorted(cdf, u, side="right"), len(cdf) - 1)


def same_bits(x, y):
    x, y = np.asarray(x), np.asarray(y)
    assert x.dtype == y.dtype and x.shape == y.shape
    assert x.tobytes() == y.tobytes(), (x[:8], y[:8])


# --- the model itself ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ctr, key, want",
    [  # Random123's known-answer vectors for philox4x32 10 (its tests/kat_vectors)
        ([0, 0, 0, 0], [0, 0], [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]),
        ([M32] * 4, [M32, M32], [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]),
        ([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344], [0xA4093822, 0x299F31D0],
         [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]),
    ],
)
def test_model_philox_known_answers(ctr, key, want):
    assert philox(ctr, key) == want


@given(st.floats(min_value=1e-300, max_value=1e300))
def test_model_log_is_accurate(x):
    assert model_log(x) == pytest.approx(math.log(x), rel=4e-16, abs=1e-300)


# --- bit-exact against the model ---------------------------------------------------------------


def test_random_float64_matches_the_model_bit_for_bit():
    g = hx.random.default_rng(2024)
    s = g.state
    same_bits(g.random(301), model_random(s["key"], s["counter"], 301))
    assert g.state["counter"] == s["counter"] + 151  # two values a block
    s = g.state
    same_bits(g.random((5, 7)), model_random(s["key"], s["counter"], 35).reshape(5, 7))


def test_random_float32_matches_the_model_bit_for_bit():
    g = hx.random.default_rng(7)
    s = g.state
    same_bits(g.random(203, dtype=np.float32), model_random(s["key"], s["counter"], 203, f32=True))
    assert g.state["counter"] == s["counter"] + 51  # four values a block


def test_uniform_matches_the_model_bit_for_bit():
    g = hx.random.default_rng(8)
    s = g.state
    same_bits(g.uniform(-3.0, 5.5, 99), model_random(s["key"], s["counter"], 99, a=-3.0, b=8.5))


def test_standard_normal_matches_the_model_bit_for_bit():
    g = hx.random.default_rng(11)
    s = g.state
    same_bits(g.standard_normal(301), model_normal(s["key"], s["counter"], 301))
    s = g.state
    same_bits(g.standard_normal(64, dtype=np.float32),
              model_normal(s["key"], s["counter"], 64).astype(np.float32))
    s = g.state
    same_bits(g.normal(10.0, 0.5, 33), model_normal(s["key"], s["counter"], 33, a=10.0, b=0.5))


@pytest.mark.parametrize(
    "low, high, dtype",
    [(0, 10, np.int64), (-5, 1000, np.int32), (0, 2**32, np.int64), (3, 2**40 + 17, np.int64),
     (-(2**63), 2**63, np.int64), (0, 2**64, np.uint64), (-128, 128, np.int8), (0, 2, np.bool_),
     (100, 60000, np.uint16)],
)
def test_integers_match_the_model_bit_for_bit(low, high, dtype):
    g = hx.random.default_rng(5)
    s = g.state
    got = g.integers(low, high, 257, dtype=dtype)
    same_bits(got, model_integers(s["key"], s["counter"], 257, low, high - 1, dtype))
    assert g.state["counter"] == s["counter"] + integer_blocks(257, (high - low) % 2**64)


@given(st.integers(-(2**62), 2**62), st.integers(1, 2**62 - 1), st.booleans(), st.integers(0, 40))
def test_integers_any_range_matches_the_model(low, span, endpoint, n):
    g = hx.random.default_rng(n)
    s = g.state
    high = low + span
    got = g.integers(low, high, n, endpoint=endpoint)
    same_bits(got, model_integers(s["key"], s["counter"], n, low, high if endpoint else high - 1, np.int64))


def model_integers_each(key, counter, lows, tops, dtype):
    rngs = [(t - lo + 1) % 2**64 for lo, t in zip(lows, tops)]
    per = 4 if all(0 < r <= 1 << 32 for r in rngs) else 2
    vals = [lo + model_bounded(key, counter + i // per, i % per, r, per == 4) for i, (lo, r) in enumerate(zip(lows, rngs))]
    return np.array(vals, dtype=dtype)


def test_integers_with_array_bounds_match_the_model():
    g = hx.random.default_rng(17)
    low = np.array([[-5], [0], [1]])
    high = np.array([2, 7, 2000, 2**31])
    s = g.state
    got = g.integers(low, high)  # shape (3, 4)
    lows, highs = np.broadcast_arrays(low, high)
    same_bits(got, model_integers_each(s["key"], s["counter"], lows.ravel().tolist(),
                                       (highs.ravel() - 1).tolist(), np.int64).reshape(3, 4))
    assert g.state["counter"] == s["counter"] + 3  # 12 narrow values, four a block
    s = g.state  # a wide range among them: two a block
    got = g.integers(0, hx.asarray(np.array([10, 2**40, 3])), size=(2, 3), endpoint=True, dtype=np.uint64)
    same_bits(got, model_integers_each(s["key"], s["counter"], [0] * 6, [10, 2**40, 3] * 2, np.uint64).reshape(2, 3))
    assert g.state["counter"] == s["counter"] + 3
    # equal bounds in an array give the scalar path's bits
    a, b = hx.random.default_rng(18), hx.random.default_rng(18)
    same_bits(a.integers(np.full(9, 3), 50), b.integers(3, 50, 9))
    assert a.integers([], 5).shape == (0,)


def test_choice_and_permutation_match_the_model():
    g = hx.random.default_rng(99)
    s = g.state
    same_bits(g.choice(300, 50, replace=False), np.array(model_sample(s["key"], s["counter"], 300, 50)))
    assert g.state["counter"] == s["counter"] + 300  # one key per population element
    s = g.state
    same_bits(g.permutation(200), np.array(model_sample(s["key"], s["counter"], 200, 200)))
    s = g.state  # a small sample of a large population: Floyd's algorithm, 2k blocks
    same_bits(g.choice(10**9, 40, replace=False), np.array(model_sample(s["key"], s["counter"], 10**9, 40)))
    assert g.state["counter"] == s["counter"] + 80
    s = g.state
    same_bits(g.choice(2**40, 30, replace=False, shuffle=False),
              np.sort(model_sample(s["key"], s["counter"], 2**40, 30)))
    p = np.array([0.5, 0.0, 0.25, 0.125, 0.125])
    s = g.state
    same_bits(g.choice(5, 3, replace=False, p=p), np.array(model_sample(s["key"], s["counter"], 5, 3, p)))
    s = g.state
    same_bits(g.choice(5, 3, replace=False, p=p, shuffle=False),
              np.sort(model_sample(s["key"], s["counter"], 5, 3, p)))
    s = g.state
    same_bits(g.choice(5, 200, p=p), model_choice_cdf(s["key"], s["counter"], 200, np.cumsum(p)))
    s = g.state
    same_bits(g.choice(9, 100), model_integers(s["key"], s["counter"], 100, 0, 8, np.int64))


def test_choice_of_an_array_gathers_rows():
    g = hx.random.default_rng(3)
    a = np.arange(60, dtype=np.float32).reshape(20, 3)
    s = g.state
    got = g.choice(hx.asarray(a), (4, 2))
    idx = model_integers(s["key"], s["counter"], 8, 0, 19, np.int64)
    same_bits(got, a[idx].reshape(4, 2, 3))
    s = g.state
    perm = g.permutation(a)
    same_bits(perm, a[model_sample(s["key"], s["counter"], 20, 20)])
    # a strided population is gathered from a dense copy
    s = g.state
    got = g.choice(hx.asarray(a)[::2, 1], 6)
    same_bits(got, a[::2, 1][model_integers(s["key"], s["counter"], 6, 0, 9, np.int64)])


# --- reproducibility ---------------------------------------------------------------------------

CHILD = textwrap.dedent(
    """
    import hashlib, numpy as np, hrxarray as hx
    g = hx.random.default_rng(1234)
    h = hashlib.sha256()
    for x in (g.random(200_003), g.random(100_001, dtype=np.float32), g.standard_normal(150_001),
              g.integers(-7, 10**12, 90_001), g.choice(1000, 70_000, p=np.full(1000, 1e-3)),
              g.permutation(80_000), g.choice(np.arange(50_000.0), 40_000, replace=False)):
        h.update(np.asarray(x).tobytes())
    print(h.hexdigest())
    """
)


def child_digest(threads):
    env = dict(os.environ)
    env.pop("HRXARRAY_NUM_THREADS", None)
    if threads is not None:
        env["HRXARRAY_NUM_THREADS"] = str(threads)
    proc = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_same_bits_for_every_thread_count():
    # Each draw spans several of the kernels' pool items (32,768 elements each).
    one, default = child_digest(1), child_digest(None)
    assert one == default
    assert len(one) == 64


def test_same_seed_same_stream_different_seeds_differ():
    a, b, c = hx.random.default_rng(42), hx.random.default_rng(42), hx.random.default_rng(43)
    same_bits(a.random(100), b.random(100))
    same_bits(a.integers(0, 100, 50), b.integers(0, 100, 50))
    assert not np.array_equal(np.asarray(a.random(100)), np.asarray(c.random(100)))
    # successive calls continue the stream instead of repeating it
    assert not np.array_equal(np.asarray(b.random(100)), np.asarray(b.random(100)))


def test_seeding_follows_numpy_seed_sequence():
    same_bits(hx.random.default_rng(np.random.SeedSequence(42)).random(10), hx.random.default_rng(42).random(10))
    same_bits(hx.random.default_rng([1, 2, 3]).random(10), hx.random.default_rng([1, 2, 3]).random(10))
    g = hx.random.default_rng(5)
    assert hx.random.default_rng(g) is g
    e1, e2 = hx.random.default_rng(), hx.random.default_rng()
    assert not np.array_equal(np.asarray(e1.random(8)), np.asarray(e2.random(8)))  # OS entropy
    kids = hx.random.default_rng(5).spawn(3)
    draws = [np.asarray(k.random(16)) for k in kids] + [np.asarray(hx.random.default_rng(5).random(16))]
    assert len({d.tobytes() for d in draws}) == 4
    same_bits(hx.random.default_rng(5).spawn(3)[1].random(16), draws[1])
    with pytest.raises(ValueError, match="default_rng"):
        hx.random.default_rng(-1)


# --- statistics (fixed seeds, generous bounds) ------------------------------------------------


def ks_statistic(sample, cdf):
    x = np.sort(sample)
    f = cdf(x)
    n = len(x)
    return max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n))


N = 200_000
KS_BOUND = 2.0 / math.sqrt(N)  # p ~ 1e-3.5 for the asymptotic Kolmogorov distribution


def test_uniform_statistics():
    g = hx.random.default_rng(100)
    for dt in (np.float64, np.float32):
        x = np.asarray(g.random(N, dtype=dt)).astype(np.float64)
        assert x.min() >= 0.0 and x.max() < 1.0
        assert abs(x.mean() - 0.5) < 0.005 and abs(x.var() - 1 / 12) < 0.002
        assert ks_statistic(x, lambda t: t) < KS_BOUND
    y = np.asarray(g.uniform(-2.0, 6.0, N))
    assert y.min() >= -2.0 and y.max() < 6.0
    assert ks_statistic(y, lambda t: (t + 2.0) / 8.0) < KS_BOUND


def test_normal_statistics():
    g = hx.random.default_rng(101)
    normal_cdf = np.vectorize(lambda t: 0.5 * math.erfc(-t / math.sqrt(2.0)))
    for dt in (np.float64, np.float32):
        z = np.asarray(g.standard_normal(N, dtype=dt)).astype(np.float64)
        assert abs(z.mean()) < 0.01 and abs(z.var() - 1.0) < 0.015
        assert abs(np.mean(z**3)) < 0.03 and abs(np.mean(z**4) - 3.0) < 0.1
        assert ks_statistic(z, normal_cdf) < KS_BOUND
    y = np.asarray(g.normal(5.0, 3.0, N))
    assert abs(y.mean() - 5.0) < 0.03 and abs(y.std() - 3.0) < 0.03
    assert ks_statistic(y, lambda t: normal_cdf((t - 5.0) / 3.0)) < KS_BOUND


def chi_square(counts, expected):
    counts, expected = np.asarray(counts, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    return float(np.sum((counts - expected) ** 2 / expected))


# chi-square bounds: well beyond the 99.99th percentile for the degrees of freedom used
def test_integers_chi_square():
    g = hx.random.default_rng(102)
    x = np.asarray(g.integers(-3, 7, N))  # 10 values, 9 degrees of freedom: 99.99% at 33.7
    assert x.min() == -3 and x.max() == 6
    assert chi_square(np.bincount(x + 3, minlength=10), np.full(10, N / 10)) < 45
    # a range that is not a power of two and needs 64-bit words: top bits by decile
    y = np.asarray(g.integers(0, 3 * 2**61 + 5, N))
    assert chi_square(np.bincount(y // ((3 * 2**61 + 5) // 10 + 1), minlength=10), np.full(10, N / 10)) < 45
    b = np.asarray(g.integers(0, 2, N, dtype=np.bool_))
    assert abs(b.mean() - 0.5) < 0.01


def test_choice_with_p_chi_square():
    g = hx.random.default_rng(103)
    p = np.array([0.05, 0.1, 0.15, 0.2, 0.0, 0.5])
    x = np.asarray(g.choice(6, N, p=p))
    counts = np.bincount(x, minlength=6)
    assert counts[4] == 0
    keep = p > 0  # 4 degrees of freedom: 99.99% at 23.5
    assert chi_square(counts[keep], N * p[keep]) < 35


def test_sampling_without_replacement_is_uniform_over_ordered_pairs():
    g = hx.random.default_rng(104)
    draws = [tuple(np.asarray(g.choice(5, 2, replace=False))) for _ in range(3000)]
    assert all(a != b for a, b in draws)
    pairs = {(a, b): 0 for a in range(5) for b in range(5) if a != b}
    for d in draws:
        pairs[d] += 1
    # 19 degrees of freedom: 99.99% at 48.0
    assert chi_square(list(pairs.values()), np.full(20, 3000 / 20)) < 60


def test_small_samples_without_replacement_are_uniform_too():
    # Floyd's path (k <= n / 16): every ordered pair of 40 values equally likely in the first two places
    g = hx.random.default_rng(107)
    draws = [np.asarray(g.choice(40, 2, replace=False)) for _ in range(4000)]
    assert all(len(set(d.tolist())) == 2 for d in draws)
    firsts = np.bincount([int(d[0]) for d in draws], minlength=40)
    seconds = np.bincount([int(d[1]) for d in draws], minlength=40)
    for counts in (firsts, seconds):  # 39 degrees of freedom: 99.99% at 77
        assert chi_square(counts, np.full(40, 4000 / 40)) < 90
    big = np.asarray(g.choice(10**6, 50_000, replace=False))
    assert len(np.unique(big)) == 50_000 and big.min() >= 0 and big.max() < 10**6
    assert chi_square(np.bincount(big // 100_000, minlength=10), np.full(10, 5000)) < 45


def test_weighted_sampling_without_replacement_first_draw_follows_p():
    g = hx.random.default_rng(105)
    p = np.array([0.1, 0.2, 0.3, 0.4])
    firsts = np.array([int(np.asarray(g.choice(4, 2, replace=False, p=p))[0]) for _ in range(3000)])
    assert chi_square(np.bincount(firsts, minlength=4), 3000 * p) < 30  # 3 dof: 99.99% at 21.1


def test_permutation_is_a_permutation():
    g = hx.random.default_rng(106)
    x = np.asarray(g.permutation(100_000))
    assert x.dtype == np.int64
    np.testing.assert_array_equal(np.sort(x), np.arange(100_000))
    assert abs(np.corrcoef(x, np.arange(100_000))[0, 1]) < 0.02


# --- shapes, dtypes, devices, asynchrony -------------------------------------------------------


def test_shapes_and_dtypes():
    g = hx.random.default_rng(0)
    assert g.random().shape == () and g.random().dtype == np.float64
    assert g.random(3).shape == (3,)
    assert g.random((2, 0, 4)).shape == (2, 0, 4)
    assert g.random([2, 3], dtype="float32").dtype == np.float32
    assert g.standard_normal((4, 1), dtype=np.float32).dtype == np.float32
    assert g.normal(size=5).dtype == np.float64 and g.uniform(size=(1, 2)).shape == (1, 2)
    assert g.integers(5, size=3).dtype == np.int64
    for dt in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64, np.bool_):
        assert g.integers(0, 2, 4, dtype=dt).dtype == dt
    assert g.choice(5).shape == () and g.choice(5).dtype == np.int64
    a = hx.asarray(np.arange(12, dtype=np.int16).reshape(4, 3))
    assert g.choice(a).shape == (3,) and g.choice(a, (2, 5)).shape == (2, 5, 3)
    assert g.choice(a).dtype == np.int16
    assert g.choice(5, 0, replace=False).shape == (0,) and g.choice(0, 0).shape == (0,)
    assert g.permutation(0).shape == (0,)
    assert g.permutation([1.5, 2.5]).dtype == np.float64


SIZES = st.one_of(st.none(), st.integers(0, 5), st.lists(st.integers(0, 4), max_size=3).map(tuple))


@given(SIZES, st.sampled_from(["random", "standard_normal", "normal", "uniform", "integers", "choice"]),
       st.sampled_from([np.float32, np.float64, np.bool_, np.int8, np.uint16, np.int64]))
def test_result_shapes_and_dtypes_are_numpys(size, method, dtype):
    kind = np.dtype(dtype).kind
    if (method in ("random", "standard_normal") and kind != "f") or (method == "integers" and kind == "f"):
        return  # both refuse these dtypes (tested with the errors)
    g, ref = hx.random.default_rng(0), np.random.default_rng(0)
    if method in ("random", "standard_normal"):
        args, kwargs = (), {"size": size, "dtype": dtype}
    elif method == "integers":
        args, kwargs = (0, 2), {"size": size, "dtype": dtype}
    elif method == "choice":
        args, kwargs = (np.arange(12).astype(dtype).reshape(6, 2),), {"size": size}
    else:
        args, kwargs = (1.0, 2.0), {"size": size}
    want = getattr(ref, method)(*args, **kwargs)
    got = getattr(g, method)(*(hx.asarray(a) if isinstance(a, np.ndarray) else a for a in args), **kwargs)
    assert isinstance(got, hx.DeviceArray)
    assert got.shape == np.shape(want)
    # NumPy gives a Python scalar for size=None where it draws one value; hx gives a 0-d array of the dtype
    want_dtype = np.dtype(dtype) if method in ("random", "standard_normal", "integers") else np.asarray(want).dtype
    if method in ("normal", "uniform"):
        want_dtype = np.dtype(np.float64)
    assert got.dtype == want_dtype


def test_device_and_placement():
    rt = hx.default_runtime()
    g = hx.random.default_rng(0)
    assert g.random(3).placement == hx.Shared(rt.npu())
    for where in (hx.GpuLocal(), hx.HostVisible(), hx.Shared(rt.npu())):
        assert g.random(3, device=where).placement == where
        assert g.integers(0, 3, 4, placement=where).placement == where
    x = g.standard_normal(1000, device=hx.GpuLocal())
    assert abs(float(np.asarray(hx.to_numpy(x.to(hx.HostVisible()))).mean())) < 0.2
    a = hx.asarray(np.arange(10), placement=hx.HostVisible())
    assert g.choice(a, 3).placement == hx.HostVisible()  # the population's placement by default
    assert g.choice(a, 3, device=hx.GpuLocal()).placement == hx.GpuLocal()
    s = g.state
    with pytest.raises(TypeError, match=r"Generator.random: device=.*placement=.*differ"):
        g.random(3, device=hx.GpuLocal(), placement=hx.HostVisible())
    with pytest.raises(hx.UnsupportedError, match="Generator.random"):
        g.random(3, device=hx.NpuLocal(rt.npu()))
    with pytest.raises(TypeError, match="Generator.uniform"):
        g.uniform(size=3, device="cpu")
    assert g.state == s  # refused calls consume nothing


def test_array_parameters_broadcast_and_give_the_scalar_path_bits():
    g, h = hx.random.default_rng(41), hx.random.default_rng(41)
    loc = np.array([[0.0], [10.0]])
    scale = [1.0, 2.0, 0.5]
    x = g.normal(loc, scale)  # shape (2, 3), as NumPy broadcasts the parameters
    z = np.asarray(h.standard_normal((2, 3)))
    same_bits(x, loc + np.asarray(scale) * z)
    # constant arrays give the bits of the kernel's scalar path
    same_bits(g.normal(np.full(5, 3.0), 2.0), h.normal(3.0, 2.0, 5))
    same_bits(g.uniform(hx.asarray(np.full(4, -1.0)), 3.0), h.uniform(-1.0, 3.0, 4))
    u = g.uniform([0.0, 5.0], [[1.0], [10.0]], size=(3, 2, 2))
    ref = np.asarray(h.random((3, 2, 2)))
    lo, hi = np.array([0.0, 5.0]), np.array([[1.0], [10.0]])
    same_bits(u, lo + (hi - lo) * ref)
    assert g.normal(hx.asarray(np.zeros(3), placement=hx.HostVisible()), 1.0).shape == (3,)
    s = g.state
    with pytest.raises(ValueError, match="Generator.normal: scale"):
        g.normal(0.0, [1.0, -1.0])
    with pytest.raises(ValueError, match="Generator.normal: the parameters' shapes"):
        g.normal([0.0, 1.0], 1.0, size=3)
    with pytest.raises(ValueError, match="Generator.uniform: high - low"):
        g.uniform([0.0, -np.inf], 1.0)
    with pytest.raises(TypeError, match="Generator.uniform: low"):
        g.uniform("a", 1.0)
    assert g.state == s


def test_out_fills_an_existing_array():
    g, h = hx.random.default_rng(31), hx.random.default_rng(31)
    out = hx.empty((3, 5), np.float32, placement=hx.GpuLocal())
    assert g.random(out=out, dtype=np.float32) is out
    same_bits(out.to(hx.HostVisible()), np.asarray(h.random((3, 5), dtype=np.float32)))
    z = hx.zeros(7)
    assert g.standard_normal(7, out=z) is z
    same_bits(z, np.asarray(h.standard_normal(7)))
    s = g.state
    with pytest.raises(TypeError, match="Generator.random: out's dtype"):
        g.random(out=z, dtype=np.float32)
    with pytest.raises(ValueError, match="Generator.random: size"):
        g.random(8, out=z)
    with pytest.raises(TypeError, match="Generator.standard_normal: out must be a DeviceArray"):
        g.standard_normal(out=np.zeros(7))
    with pytest.raises(ValueError, match="Generator.random: the result must be C-contiguous"):
        g.random(out=hx.zeros(8)[::2])
    assert g.state == s


def test_results_are_usable_before_they_complete():
    g, h = hx.random.default_rng(77), hx.random.default_rng(77)
    x = g.random(1_000_000)
    y = hx.add(x, 1.0)  # ordered after the generator's region by the runtime's hazards
    z = hx.multiply(g.standard_normal(1_000_000), 2.0)
    ref = np.asarray(h.random(1_000_000))
    same_bits(y, ref + 1.0)
    same_bits(z, np.asarray(h.standard_normal(1_000_000)) * 2.0)


# --- errors: name the function and the argument, change nothing --------------------------------


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda g: g.random(-1), ValueError, r"Generator.random: size"),
        (lambda g: g.random((2, -3)), ValueError, r"Generator.random: size"),
        (lambda g: g.random("3"), TypeError, r"Generator.random: size"),
        (lambda g: g.random(3, dtype=np.int32), TypeError, r"Generator.random: dtype"),
        (lambda g: g.standard_normal(3, dtype=np.float16), TypeError, r"Generator.standard_normal: dtype"),
        (lambda g: g.normal(0.0, -1.0, 3), ValueError, r"Generator.normal: scale"),
        (lambda g: g.normal(None, 1.0), TypeError, r"Generator.normal: loc"),
        (lambda g: g.uniform(0.0, math.inf, 3), ValueError, r"Generator.uniform: high - low"),
        (lambda g: g.integers(5, 5, 3), ValueError, r"Generator.integers: low >= high"),
        (lambda g: g.integers(6, 5, 3, endpoint=True), ValueError, r"Generator.integers: low > high"),
        (lambda g: g.integers(0, 300, 3, dtype=np.uint8), ValueError, r"Generator.integers: high=300"),
        (lambda g: g.integers(-1, 3, 3, dtype=np.uint8), ValueError, r"Generator.integers: low=-1"),
        (lambda g: g.integers(0, 3, 3, dtype=np.float32), TypeError, r"Generator.integers: dtype"),
        (lambda g: g.integers(0.5, 3), TypeError, r"Generator.integers: low must be an integer"),
        (lambda g: g.integers(0, [3.0]), TypeError, r"Generator.integers: high must be an integer"),
        (lambda g: g.integers([0, 5], [3, 4]), ValueError, r"Generator.integers: low >= high"),
        (lambda g: g.integers(0, [3, 300], dtype=np.uint8), ValueError, r"Generator.integers: high=300"),
        (lambda g: g.integers([0, 1], [3, 4, 5]), ValueError, r"Generator.integers: the shapes of low and high"),
        (lambda g: g.choice(3, 2, p=[0.5, 0.2, 0.2]), ValueError, r"Generator.choice: p must sum to 1"),
        (lambda g: g.choice(3, 2, p=[0.5, 0.5]), ValueError, r"Generator.choice: p must be 1-dimensional"),
        (lambda g: g.choice(3, 2, p=[1.5, -0.5, 0.0]), ValueError, r"Generator.choice: p must hold"),
        (lambda g: g.choice(3, 4, replace=False), ValueError, r"Generator.choice: cannot take a sample of 4"),
        (lambda g: g.choice(3, 2, replace=False, p=[1.0, 0.0, 0.0]), ValueError,
         r"Generator.choice: p has fewer non-zero entries"),
        (lambda g: g.choice(0, 1), ValueError, r"Generator.choice: a is empty"),
        (lambda g: g.choice(-2), ValueError, r"Generator.choice: a must be"),
        (lambda g: g.choice(np.float32(3.0)), ValueError, r"Generator.choice: a must be"),
        (lambda g: g.permutation(-1), ValueError, r"Generator.permutation: x"),
    ],
)
def test_bad_arguments_are_refused_and_consume_nothing(call, exc, match):
    g = hx.random.default_rng(1)
    before = g.state
    with pytest.raises(exc, match=match):
        call(g)
    assert g.state == before
    same_bits(g.random(5), hx.random.default_rng(1).random(5))


def test_public_names_are_documented():
    assert hx.random.__all__ == ["default_rng", "Generator", "Philox4x32"]
    assert hx.random.Philox4x32.__doc__ and hx.random.Philox4x32.spawn.__doc__
    assert "random" in hx.__all__ and hx.random.__doc__
    for name in ("random", "standard_normal", "normal", "uniform", "integers", "choice", "permutation", "spawn"):
        assert getattr(hx.random.Generator, name).__doc__
    assert hx.random.default_rng.__doc__


def test_philox4x32_bit_generator_is_the_generators_key_and_shares_state():
    # default_rng(Philox4x32(s)) is default_rng(s)'s stream; Generators from one bit generator share it.
    same_bits(hx.random.default_rng(hx.random.Philox4x32(7)).random(20), hx.random.default_rng(7).random(20))
    bg = hx.random.Philox4x32(np.random.SeedSequence(9))
    g1, g2 = hx.random.default_rng(bg), hx.random.default_rng(bg)
    assert g1 is g2
    ref = hx.random.default_rng(9)
    same_bits(g1.random(5), ref.random(5))
    same_bits(g2.random(5), ref.random(5))  # continues, as one NumPy bit generator's state would
    kids = bg.spawn(2)
    assert [k.seed_seq.spawn_key for k in kids] == [(0,), (1,)]
    same_bits(hx.random.default_rng(kids[1]).random(4),
              hx.random.default_rng(np.random.SeedSequence(9).spawn(2)[1]).random(4))
    with pytest.raises(TypeError, match="Philox4x32: bad seed"):
        hx.random.Philox4x32("seed")

