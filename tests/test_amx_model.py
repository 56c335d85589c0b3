"""The tile order of the bf16 matmul (Note [AMX tiles] in ext/core/kernels/amx.h), and that only
``order="tile"`` ever takes it.

The AMX driver's packing, its 32 x 32 blocks, its 32-k chunks with a shorter last chunk on a tile
configuration of its own, its column chunks and its thread split run here on a software model of the
tile unit (TDPBF16PS as Intel's SDM defines it), which is checked bit for bit against this file's own
NumPy implementation of the documented tile order, and within the accumulation bound against float64.
The FMA path of the tile order (any CPU without usable tiles) is checked against the model bit for
bit. HRXARRAY_AMX=model makes a process on any CPU behave as one with AMX (the model stands where the
tiles would be): there the devices' matmuls must still give the pair order. On a CPU with AMX the
hardware tiles are checked too, in a subprocess.
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

from hrxarray import numerics as hn
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
    raw.matmul_bf16(a, b, c, m, k, n, ia, ib, order="tile", amx_model=True)
    return c


def pair_order_reference(a_bits, b_bits):
    """The pair order (k = 1, 0, 3, 2, ...; a 0 * 0 pad after an odd K) in float32 NumPy, for operands
    whose products and partial sums stay normal (then each add is the FMA's one rounding)."""
    a, b = as_f32(a_bits), as_f32(b_bits)
    k = a.shape[-1]
    acc = np.zeros(a.shape[:-1] + b.shape[-1:], np.float32)
    for s in range(k + (k % 2)):
        kk = s ^ 1
        if kk < k:
            acc = acc + a[..., :, kk:kk + 1] * b[..., kk:kk + 1, :]
    return acc


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
    raw.matmul_bf16(np.empty(0, np.uint16), np.empty(0, np.uint16), zero_k, 4, 0, 5, order="tile", amx_model=True)
    assert zero_k.view(np.uint32).max() == 0


def test_model_threads_and_column_chunks_change_nothing():
    # (70, 2200, 120) is large enough to run threaded (Note [AMX threads]) and has one panel per
    # column chunk; (40, 64, 600) spans several column chunks. The same products one column block at
    # a time (no split, one chunk) must give the same bits.
    rng = np.random.default_rng(9)
    for m, k, n in [(70, 2200, 120), (40, 64, 600)]:
        a, b = operands(rng, "tiny", (m, k)), operands(rng, "tiny", (k, n))
        whole = model(a, b, m, k, n)[0]
        for j0 in range(0, n, 32):
            bj = np.ascontiguousarray(b[:, j0:j0 + 32])
            assert_same_bits(whole[:, j0:j0 + 32], model(a, bj, m, k, bj.shape[1])[0])


def test_model_batches_of_small_products_on_threads_change_nothing():
    # 40 products of 64 x 256 x 64 are each too small for a thread split but together large enough
    # for one product per thread (Note [AMX threads]); each must be the product computed alone.
    rng = np.random.default_rng(11)
    m, k, n, batch = 64, 256, 64, 40
    a, b = operands(rng, "normal", (batch, m, k)), operands(rng, "normal", (batch, k, n))
    got = model(a, b, m, k, n, batch=batch)
    for t in range(batch):
        assert_same_bits(got[t], model(a[t], b[t], m, k, n)[0])


def test_raw_flags_are_checked():
    a = np.zeros((2, 2), np.uint16)
    c = np.full((2, 2), 7.0, np.float32)
    with pytest.raises(ValueError, match="exclude each other"):
        raw.matmul_bf16(a, a, c, 2, 2, 2, order="tile", portable=True, amx_model=True)
    with pytest.raises(ValueError, match="amx_model computes the tile order"):
        raw.matmul_bf16(a, a, c, 2, 2, 2, amx_model=True)
    with pytest.raises(ValueError, match="order must be 'pair' or 'tile', not 'amx'"):
        raw.matmul_bf16(a, a, c, 2, 2, 2, order="amx")
    assert (c == 7.0).all()


# --- the FMA path of the tile order ----------------------------------------------------------

# Besides SHAPES: K blocks of the FMA driver (384 k) crossed with odd and even tails.
FMA_SHAPES = SHAPES + [(9, 771, 40), (33, 385, 70), (40, 767, 33), (8, 384, 32)]


@pytest.mark.parametrize("portable", [False, True])
@pytest.mark.parametrize("kind", ["normal", "ints", "tiny", "any"])
@pytest.mark.parametrize("shape", FMA_SHAPES)
def test_fma_path_of_the_tile_order_is_the_model_bitwise(shape, kind, portable):
    m, k, n = shape
    rng = np.random.default_rng(abs(hash((shape, kind, "fma"))) % 2**32)
    a, b = operands(rng, kind, (m, k)), operands(rng, kind, (k, n))
    c = np.empty((1, m, n), np.float32)
    raw.matmul_bf16(a, b, c, m, k, n, order="tile", portable=portable)
    assert_same_bits(c, model(a, b, m, k, n))


@settings(max_examples=25, deadline=None)
@given(m=st.integers(1, 70), k=st.integers(1, 900), n=st.integers(1, 70), batch=st.integers(1, 3),
       kind=st.sampled_from(["normal", "ints", "tiny", "any"]), seed=st.integers(0, 2**32 - 1))
def test_hypothesis_numerics_matmul_order_tile_is_the_model(m, k, n, batch, kind, seed):
    rng = np.random.default_rng(seed)
    a, b = operands(rng, kind, (batch, m, k)), operands(rng, kind, (1, k, n))
    got = hn.matmul(a.view(BF16), b.view(BF16), order="tile")
    ib = np.zeros(batch, np.int64)
    assert_same_bits(got, model(a, b, m, k, n, ib=ib, batch=batch))
    if kind in ("normal", "ints"):
        assert_same_bits(got, np.stack([tile_order_reference(a[t], b[0]) for t in range(batch)]))


@settings(max_examples=25, deadline=None)
@given(m=st.integers(1, 70), k=st.integers(1, 140), n=st.integers(1, 70),
       kind=st.sampled_from(["normal", "ints"]), seed=st.integers(0, 2**32 - 1))
def test_hypothesis_model_is_the_tile_order(m, k, n, kind, seed):
    rng = np.random.default_rng(seed)
    a, b = operands(rng, kind, (m, k)), operands(rng, kind, (k, n))
    assert_same_bits(model(a, b, m, k, n)[0], tile_order_reference(a, b))


CPU = cpu_features()
HAS_AMX = CPU["amx_tile"] and CPU["amx_bf16"] and CPU["avx512_bf16"]


# What a process on a CPU with AMX computes: HRXARRAY_AMX=model puts the software tile model where
# the tiles would be (on any CPU), so large products find "AMX" usable. Every device matmul must still
# give the pair order; only order="tile" may take the tiles. Output: .npy files, one per result.
DEVICE_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import hrxarray as hx
    from hrxarray import numerics as hn
    from hrxarray._core import numerics as r
    out = sys.argv[1]
    a = np.load(out + "/a.npy").view(hx.bfloat16)
    b = np.load(out + "/b.npy").view(hx.bfloat16)
    m, k = a.shape
    n = b.shape[1]
    res = {}
    res["npu_lane"] = hx.matmul(hx.asarray(a), hx.asarray(b))          # Shared(npu): NPU lane
    hv = hx.HostVisible()
    res["gpu_lane"] = hx.matmul(hx.asarray(a, placement=hv), hx.asarray(b, placement=hv))
    res["npu_bfp16"] = hx.matmul(hx.asarray(a), hx.asarray(b), compute="bfp16")
    res["numerics"] = hn.matmul(a, b)
    res["numerics_bfp16"] = hn.matmul(a, b, compute="bfp16")
    c = np.empty((m, n), np.float32)
    r.matmul_bf16(a.view(np.uint16), b.view(np.uint16), c, m, k, n)
    res["raw"] = c
    c = np.empty((m, n), np.float32)
    r._matmul_typed(a.view(np.uint8).reshape(-1), b.view(np.uint8).reshape(-1), c.view(np.uint8).reshape(-1),
                    "bfloat16", "float32", m, k, n)
    res["raw_typed"] = c
    res["tile"] = hn.matmul(a, b, order="tile")
    # The NPU's own program: 8x8 blocks of the same operands through batched_gemm,
    # its plain-bf16 opt-in (gemm.bfp16 = 0): the pair order on unquantised operands.
    rt = hx.default_runtime()
    npu = rt.npu()
    blocks_a = np.ascontiguousarray(a[:8, :8])[None].repeat(4, 0)
    blocks_b = np.ascontiguousarray(b[:8, :8])[None].repeat(4, 0)
    art = hx.kernels.npu("batched_gemm", **{"gemm.batch": 4, "gemm.bfp16": 0})
    kern = npu.load_artifact(art, 1, art.contract)
    bufs = [rt.allocate(nbytes, hx.Shared(npu)) for nbytes in (4 * 128, 4 * 128, 4 * 256)]
    for buf, data in zip(bufs, (blocks_a, blocks_b)):
        with buf.map_write() as v:
            v[:] = data.view(np.uint8).reshape(-1)
    g = rt.graph()
    g.npu(kern, bufs)
    g.prepare().submit().result()
    with bufs[2].map_read() as v:
        res["npu_program"] = v.view(np.float32).reshape(4, 8, 8).copy()
    for name, x in res.items():
        np.save(f"{out}/{name}.npy", np.asarray(x))
    print(r.kernel_paths()["matmul"], r.kernel_paths()["matmul_tile"])
""")


def run_device_script(tmp_path, env_amx):
    """Run DEVICE_SCRIPT with HRXARRAY_AMX=env_amx (None: unset); return (kernel paths, results)."""
    rng = np.random.default_rng(21)
    m, k, n = 96, 304, 64  # K a multiple of 8 for compute="bfp16"
    np.save(tmp_path / "a.npy", operands(rng, "normal", (m, k)))
    np.save(tmp_path / "b.npy", operands(rng, "normal", (k, n)))
    env = {key: v for key, v in os.environ.items() if key != "HRXARRAY_AMX"}
    if env_amx is not None:
        env["HRXARRAY_AMX"] = env_amx
    # Outside the source tree, and bounded: a test must never hang.
    proc = subprocess.run([sys.executable, "-c", DEVICE_SCRIPT, str(tmp_path)], env=env, capture_output=True,
                          text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    names = ["npu_lane", "gpu_lane", "npu_bfp16", "numerics", "numerics_bfp16", "raw", "raw_typed", "tile",
             "npu_program"]
    return proc.stdout.split(), {name: np.load(tmp_path / f"{name}.npy") for name in names}


@pytest.mark.parametrize("env_amx", ["model", None])
def test_device_matmuls_give_the_pair_order_even_where_the_cpu_has_amx(tmp_path, env_amx):
    (path, tile_path), res = run_device_script(tmp_path, env_amx)
    a, b = np.load(tmp_path / "a.npy"), np.load(tmp_path / "b.npy")
    pair = pair_order_reference(a, b)
    tile = tile_order_reference(a, b)
    # The two orders differ on these operands, so each comparison below tells them apart.
    assert np.count_nonzero(pair != tile) > pair.size // 2
    for name in ("npu_lane", "gpu_lane", "numerics", "raw", "raw_typed"):
        assert_same_bits(res[name], pair)
    # bfp16: the pair order on the operands quantised along K (blocks of 8).
    qa = hn.to_bfloat16(hn.bfp16_quantize(as_f32(a))).view(np.uint16)
    qb = hn.to_bfloat16(hn.bfp16_quantize(as_f32(b).T).T.copy()).view(np.uint16)
    assert_same_bits(res["npu_bfp16"], pair_order_reference(qa, qb))
    assert_same_bits(res["numerics_bfp16"], pair_order_reference(qa, qb))
    np.testing.assert_array_equal(res["npu_program"], np.broadcast_to(pair_order_reference(a[:8, :8], b[:8, :8]),
                                                                      (4, 8, 8)))
    # The opt-in takes the tile order, on the model where "AMX" is usable.
    assert_same_bits(res["tile"], tile)
    assert path != "amx_bf16"
    if env_amx == "model":
        assert tile_path == "amx_model"


def test_no_amx_no_tile_path(tmp_path):
    if HAS_AMX and CPU["amx_permitted"]:
        pytest.skip("this CPU has AMX and Linux granted it")
    script = "from hrxarray._core import numerics as r; p = r.kernel_paths(); print(p['matmul'], p['matmul_tile'])"
    env = {k: v for k, v in os.environ.items() if k != "HRXARRAY_AMX"}
    # Outside the source tree, whose hrxarray/ has no compiled module in an installed checkout.
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                         check=True, cwd=tmp_path, timeout=120).stdout.split()
    assert "amx_bf16" not in out and "amx_model" not in out


@pytest.mark.skipif(not HAS_AMX, reason="this CPU has no AMX-BF16 (the tile path is tested on the model above)")
def test_hardware_path_matches_the_model_and_can_be_turned_off(tmp_path):
    # With the tile state granted and the first-use check passed, order="tile" runs large products on
    # the tiles and gives the model's bits; a refused grant, a failed check or HRXARRAY_AMX=0 leaves
    # them to the FMA path (the same bits). The default order never takes the tiles.
    script = textwrap.dedent("""
        import numpy as np
        from hrxarray._core import numerics as r
        rng = np.random.default_rng(3)
        a = rng.integers(0, 1 << 16, size=(96, 300), dtype=np.uint16) & 0xBFFF
        b = rng.integers(0, 1 << 16, size=(300, 64), dtype=np.uint16) & 0xBFFF
        c1 = np.empty((96, 64), np.float32); c2 = np.empty((96, 64), np.float32)
        r.matmul_bf16(a, b, c1, 96, 300, 64, order="tile")
        r.matmul_bf16(a, b, c2, 96, 300, 64, order="tile", amx_model=True)
        nan = np.isnan(c1) & np.isnan(c2)
        p = r.kernel_paths()
        print(p["matmul"], p["matmul_tile"], bool((c1.view(np.uint32) == c2.view(np.uint32))[~nan].all()))
    """)
    env = {k: v for k, v in os.environ.items() if k != "HRXARRAY_AMX"}
    for amx, tiles in ((None, {"amx_bf16", "avx512"} if CPU["amx_permitted"] else {"avx512"}),
                       ("0", {"avx512"})):
        run_env = env if amx is None else dict(env, HRXARRAY_AMX=amx)
        path, tile_path, same = subprocess.run([sys.executable, "-c", script], env=run_env, capture_output=True,
                                               text=True, check=True, cwd=tmp_path, timeout=300).stdout.split()
        # The pair order on VDPBF16PS, or as two AVX-512 FMAs per pair where those are faster
        # (Note [bf16 kit choice] in gemm.cpp); never on the tiles.
        assert path in ("avx512_bf16", "avx512")
        assert tile_path in tiles
        assert same == "True"
