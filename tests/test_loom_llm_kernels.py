"""The LLM-inference kernels of examples/loom/*.loom, each run through the public API
(``hx.loom.compile`` + ``Runtime.load_gpu_kernel`` + a graph, or ``hx.loom.ufunc``) at small sizes and
checked against NumPy.

References are float64 unless the kernel's order of operations is NumPy's own (add, RoPE: bit for bit).
Tolerances are forward-error bounds in units of float32's epsilon (EPS = 2^-23, so a rounding costs at
most EPS/2 relative): a sum of n terms accumulated in float32 is off by at most about n*EPS/2 times the
sum of the magnitudes, and each further rounded op adds EPS/2 of its result. Each bound below says which
terms it counts; the sizes vary under Hypothesis (few examples: CI has 2 cores).
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import hrxarray as hx

KERNEL_DIR = Path(__file__).resolve().parents[1] / "examples" / "loom"
sys.path.insert(0, str(KERNEL_DIR))
import loom_kernels as lk  # noqa: E402

EPS = float(np.finfo(np.float32).eps)
SMALL = settings(max_examples=20, deadline=None)


def _rng(seed):
    return np.random.default_rng(seed)


def test_every_kernel_file_is_listed_and_compiles_without_portability_warnings():
    files = sorted(p.stem for p in KERNEL_DIR.glob("*.loom"))
    assert files == sorted(lk.KERNELS)
    for name in files:
        module = hx.loom.parse(lk.source(name))
        assert not module.warnings, (name, module.warnings)
        art = lk.compile_kernel(name)
        assert art.symbol == name and art.target == "gfx1151"
        params = [p["name"] for p in art.manifest["functions"][0]["parameters"]]
        assert params[: len(lk.KERNELS[name][1])] == list(lk.KERNELS[name][1])


def test_launch_geometry_and_workgroup_memory():
    sm = lk.compile_kernel("softmax_rows").launch_config(17, 5)
    assert (sm.workgroups, sm.workgroup_size, sm.workgroup_storage_bytes) == ((3, 1, 1), (256, 1, 1), 0)
    mm = lk.compile_kernel("matmul_tiled").launch_config(33, 17, 5)  # 64 x 64 tiles: grid x over n, y over m
    assert (mm.workgroups, mm.workgroup_size, mm.workgroup_storage_bytes) == ((1, 1, 1), (16, 16, 1), 16384)
    fd = lk.compile_kernel("flash_decode").launch_config(32, 4096)
    assert (fd.workgroups, fd.workgroup_storage_bytes) == ((32, 1, 1), 64 + 8 * 128 * 4)
    assert lk.compile_kernel("rope").launch_config(3, 2, 8).workgroups == (1, 1, 1)
    with pytest.raises(ValueError):  # RoPE rotates pairs: an odd dimension breaks the launch program's promise
        lk.compile_kernel("rope").launch_config(3, 2, 7)


# --- elementwise ---------------------------------------------------------------------------------------

f32s = st.floats(-(2.0**60), 2.0**60, width=32)


@SMALL
@given(x=hnp.arrays(np.float32, st.integers(1, 3000), elements=f32s), seed=st.integers(0, 2**32 - 1))
def test_add_is_numpys_add_bit_for_bit(x, seed):
    y = _rng(seed).standard_normal(x.size, dtype=np.float32)
    out, = lk.run("add_f32", {"count": x.size}, [x, y, np.empty_like(x)], [2])
    np.testing.assert_array_equal(out, x + y)
    # The same source as a ufunc on host arrays.
    add = hx.loom.ufunc(lk.source("add_f32"), "add_f32")
    np.testing.assert_array_equal(hx.to_numpy(add(x, y)), x + y)


@SMALL
@given(x=hnp.arrays(np.float32, st.integers(1, 3000), elements=st.floats(-104, 89, width=32)))
def test_exp_is_within_one_ulp_of_the_correctly_rounded_exp(x):
    # One op: expf (glibc's, < 1 ulp) against float64 exp rounded once to float32.
    out = hx.to_numpy(hx.loom.ufunc(lk.source("exp_f32"), "exp_f32")(x))
    with np.errstate(over="ignore"):  # past float32's range the reference overflows to inf, as expf does
        want = np.exp(x.astype(np.float64)).astype(np.float32)
    finite = np.isfinite(want)
    assert np.array_equal(np.isinf(out), ~finite)
    ulps = np.abs(out[finite].view(np.int32).astype(np.int64) - want[finite].view(np.int32))
    assert ulps.max(initial=0) <= 1


# --- row reductions ---------------------------------------------------------------------------------

@SMALL
@given(rows=st.integers(1, 20), cols=st.integers(1, 300), spread=st.sampled_from([0.01, 3.0, 30.0]),
       seed=st.integers(0, 2**32 - 1))
def test_softmax_rows(rows, cols, spread, seed):
    x = (_rng(seed).standard_normal((rows, cols)) * spread).astype(np.float32)
    out, = lk.run("softmax_rows", {"rows": rows, "cols": cols}, [x, np.empty_like(x)], [1])
    d = x.astype(np.float64) - x.max(axis=1, keepdims=True)
    e = np.exp(d)
    want = e / e.sum(axis=1, keepdims=True)
    # x - m rounds (relative error EPS/2 of |d|, hence |d|*EPS/2 in exp), expf and the division add
    # about 1.5 EPS, the float32 sum of cols positive terms at most cols*EPS/2 relative. Results below
    # float32's normal range lose relative precision: the rounding of exp and of the quotient is then
    # absolute, half a subnormal step (2^-150) each.
    bound = want * EPS * (np.abs(d) + cols + 4) + 2.0 ** -149
    assert (np.abs(out - want) <= bound).all()
    np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=0, atol=(cols + 4) * EPS)


@SMALL
@given(rows=st.integers(1, 20), cols=st.integers(1, 300), eps=st.sampled_from([1e-6, 1e-5, 0.5]),
       seed=st.integers(0, 2**32 - 1))
def test_rms_norm(rows, cols, eps, seed):
    rng = _rng(seed)
    x = (rng.standard_normal((rows, cols)) * rng.choice([0.01, 1.0, 100.0], (rows, 1))).astype(np.float32)
    w = rng.standard_normal(cols).astype(np.float32)
    out, = lk.run("rms_norm", {"rows": rows, "cols": cols, "eps": eps}, [x, w, np.empty_like(x)], [2])
    x64 = x.astype(np.float64)
    want = x64 / np.sqrt((x64 ** 2).mean(axis=1, keepdims=True) + np.float32(eps)) * w
    # Sum of cols squares (positive terms): cols*EPS/2 relative, halved by the sqrt; the mean, the
    # sum with eps, sqrt, the reciprocal and two products: about 6 roundings of EPS/2.
    assert (np.abs(out - want) <= np.abs(want) * EPS * (cols / 4 + 4) + 1e-37).all()


def test_rms_norm_uses_eps():
    x = np.zeros((2, 40), np.float32)
    x[1] = 1e-3
    w = np.full(40, 2.0, np.float32)
    out, = lk.run("rms_norm", {"rows": 2, "cols": 40, "eps": 1.0}, [x, w, np.empty_like(x)], [2])
    assert (out[0] == 0).all()
    np.testing.assert_allclose(out[1], 2e-3 / np.sqrt(1e-6 + 1.0), rtol=4 * EPS)


# --- matmul, quantised matrix-vector, attention, RoPE -------------------------------------------------

@SMALL
@given(m=st.integers(1, 40), n=st.integers(1, 40), k=st.integers(1, 70), seed=st.integers(0, 2**32 - 1))
def test_tiled_matmul(m, n, k, seed):
    rng = _rng(seed)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c, = lk.run("matmul_tiled", {"m": m, "n": n, "k": k}, [a, b, np.full((m, n), np.nan, np.float32)], [2])
    want = a.astype(np.float64) @ b
    # k fused multiply-adds in k order: at most k roundings of EPS/2 of the running |sum| <= |a|@|b|.
    bound = (np.abs(a).astype(np.float64) @ np.abs(b)) * k * EPS / 2
    assert (np.abs(c - want) <= bound).all()


def test_tiled_matmul_is_race_free_in_checked_mode():
    rng = _rng(3)
    a = rng.standard_normal((33, 40)).astype(np.float32)
    b = rng.standard_normal((40, 19)).astype(np.float32)
    c, = lk.run("matmul_tiled", {"m": 33, "n": 19, "k": 40}, [a, b, np.empty((33, 19), np.float32)], [2],
                runtime=hx.Runtime(checked=True))
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=0, atol=40 * EPS * 64)


def q8_0(rng, rows, cols):
    """Random q8_0-style weights: int8 quants and one float16 scale per block of 32."""
    q = rng.integers(-127, 128, (rows, cols), dtype=np.int8)
    d = (rng.random((rows, cols // 32)) * 0.02 + 1e-3).astype(np.float16)
    return q, d


@SMALL
@given(rows=st.integers(1, 40), blocks=st.integers(1, 13), seed=st.integers(0, 2**32 - 1))
def test_q8_0_matvec(rows, blocks, seed):
    rng = _rng(seed)
    cols = 32 * blocks
    q, d = q8_0(rng, rows, cols)
    x = rng.standard_normal(cols).astype(np.float32)
    y, = lk.run("matvec_q8_0", {"rows": rows, "cols": cols}, [q, d, x, np.empty(rows, np.float32)], [3])
    w = (q.reshape(rows, blocks, 32).astype(np.float64) * d[..., None].astype(np.float64)).reshape(rows, cols)
    # The int8 -> float32 widening and the float16 scale are exact; what rounds: 4-term dots, the
    # scaled block sums and the subgroup's sum, fewer than cols + 8 roundings of the magnitudes' sum.
    bound = (np.abs(w) @ np.abs(x)) * (cols + 8) * EPS / 2
    assert (np.abs(y - w @ x) <= bound).all()


def test_q8_0_matvec_refuses_a_partial_block():
    # The launch program checks the width (whole blocks of 32), so the kernel never loads.
    with pytest.raises(ValueError, match=r"index.assume: assumption mul\(%cols, .*\) is false: %cols = 40"):
        lk.Launch("matvec_q8_0", {"rows": 2, "cols": 40}, [np.zeros((2, 40), np.int8), np.zeros((2, 2), np.float16),
                                                          np.zeros(40, np.float32), np.empty(2, np.float32)])


def attention(q, k, v, scale):
    """Decode-step attention in float64: softmax(scale * k q) weighted sum of v, per head."""
    s = np.einsum("hd,htd->ht", q.astype(np.float64), k) * scale
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return np.einsum("ht,htd->hd", p / p.sum(axis=1, keepdims=True), v), s


@settings(max_examples=10, deadline=None)
@given(heads=st.integers(1, 4), kv_len=st.integers(1, 200), checked=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_flash_decode(heads, kv_len, checked, seed):
    rng = _rng(seed)
    q = rng.standard_normal((heads, 128)).astype(np.float32)
    k = rng.standard_normal((heads, kv_len, 128)).astype(np.float32)
    v = rng.standard_normal((heads, kv_len, 128)).astype(np.float32)
    scale = float(np.float32(128 ** -0.5))
    out, = lk.run("flash_decode", {"heads": heads, "kv_len": kv_len, "scale": scale},
                  [q, k, v, np.empty((heads, 128), np.float32)], [3], runtime=hx.Runtime(checked=checked))
    want, s = attention(q, k, v, scale)
    # A score is a 128-term float32 dot product: off by at most 128*EPS/2 * scale*|q|.|k|, which is
    # also the relative error it gives its weight; the online rescaling, the normaliser (kv_len terms)
    # and the weighted sum (kv_len terms) add about (2 kv_len + 16) roundings of max|v|.
    ds = (np.einsum("hd,htd->ht", np.abs(q).astype(np.float64), np.abs(k)) * scale * 64 * EPS).max()
    bound = np.abs(v).max() * (2 * ds + (2 * kv_len + 16) * EPS / 2)
    assert np.abs(out - want).max() <= bound


def rope_tables(positions, dim, base=10000.0):
    """llama.cpp's rotation tables: angle[p, i] = p * base^(-2i/dim), as float32 cos and sin."""
    angle = np.arange(positions)[:, None] * base ** (-np.arange(0, dim, 2) / dim)
    return np.cos(angle).astype(np.float32), np.sin(angle).astype(np.float32)


def rope_reference(x, cos_t, sin_t, pos0):
    """RoPE in float32, NumPy's order: x0*c - x1*s and x0*s + x1*c, each op rounded."""
    c = cos_t[pos0: pos0 + x.shape[0], None, :]
    s = sin_t[pos0: pos0 + x.shape[0], None, :]
    x0, x1 = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = x0 * c - x1 * s
    out[..., 1::2] = x0 * s + x1 * c
    return out


@SMALL
@given(tokens=st.integers(1, 9), heads=st.integers(1, 5), half=st.integers(1, 40), pos0=st.integers(0, 300),
       seed=st.integers(0, 2**32 - 1))
def test_rope_is_bit_exact(tokens, heads, half, pos0, seed):
    dim = 2 * half
    x = _rng(seed).standard_normal((tokens, heads, dim)).astype(np.float32)
    cos_t, sin_t = rope_tables(pos0 + tokens, dim)
    out, = lk.run("rope", {"tokens": tokens, "heads": heads, "dim": dim, "pos0": pos0},
                  [x, cos_t, sin_t, np.empty_like(x)], [3])
    np.testing.assert_array_equal(out, rope_reference(x, cos_t, sin_t, pos0))


def test_softmax_and_rms_norm_pass_checked_mode_with_a_partial_last_workgroup():
    rng = _rng(9)
    x = rng.standard_normal((11, 45)).astype(np.float32)  # 11 rows: the second workgroup has 5 spare subgroups
    checked = hx.Runtime(checked=True)
    out, = lk.run("softmax_rows", {"rows": 11, "cols": 45}, [x, np.empty_like(x)], [1], runtime=checked)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=64 * EPS)
    w = np.ones(45, np.float32)
    out, = lk.run("rms_norm", {"rows": 11, "cols": 45, "eps": 1e-6}, [x, w, np.empty_like(x)], [2], runtime=checked)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(out, x64 / np.sqrt((x64 ** 2).mean(axis=1, keepdims=True) + 1e-6), rtol=32 * EPS)


# --- the example that chains them: examples/llm_layer.py -----------------------------------------------

EXAMPLE = KERNEL_DIR.parent / "llm_layer.py"


def run_example(*args, cwd):
    return subprocess.run([sys.executable, str(EXAMPLE), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env=os.environ.copy())


@pytest.mark.parametrize("args, kv", [([], 256), (["0"], 1), (["40"], 41)])
def test_llm_layer_example_matches_numpy(tmp_path, args, kv):
    out = run_example(*args, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    line = out.stdout.strip()
    assert line.startswith(f"position {kv - 1} (KV {kv}): max |loom - numpy| = "), line
    # The example asserts its own bounds; the printed errors are float32-sized, not zero by accident.
    err = float(line.split("= ")[1].split(" ")[0])
    paths = float(line.rsplit("differ by ", 1)[1])
    assert 0 < err < 1e-4 and 0 <= paths < 1e-4


@pytest.mark.parametrize("args, message", [(["4096"], "position must be in 0..=4095"), (["x"], "invalid integer 'x'"),
                                           (["1", "2"], "expected at most one argument, got 2")])
def test_llm_layer_example_bad_arguments(tmp_path, args, message):
    out = run_example(*args, cwd=tmp_path)
    assert out.returncode == 2 and message in out.stderr and "usage:" in out.stderr


# --- the barriers of the tiled matmul are both needed: checked mode reports each missing one ---------

BARRIER = "    kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)\n"


@pytest.mark.parametrize("drop, what", [(0, r"view.load: workgroup-memory race: reads"),
                                        (1, r"view.store: workgroup-memory race: writes")])
def test_matmul_without_either_barrier_races(drop, what):
    parts = lk.source("matmul_tiled").split(BARRIER)
    assert len(parts) == 3
    src = parts[0] + (BARRIER if drop == 1 else "") + parts[1] + (BARRIER if drop == 0 else "") + parts[2]
    art = hx.loom.compile(src, "matmul_tiled", target="gfx1151")
    rt = hx.Runtime(checked=True)
    # Two slices of k (of 32), so that the second one's copies meet the first one's reads.
    lc = art.launch_config(16, 16, 64)
    k = rt.load_gpu_kernel(art, lc.workgroups, lc.workgroup_size, art.contract_for(m=16, n=16, k=64))
    a, b = np.ones((16, 64), np.float32), np.ones((64, 16), np.float32)
    bufs = [rt.allocate(4 * 16 * 64, hx.HostVisible()) for _ in range(3)]
    for buf, x in zip(bufs, (a, b)):
        lk.Launch.write(buf, x)
    g = rt.graph()
    g.gpu(k, bufs)
    c = g.prepare().submit()
    assert c.wait(60)
    assert isinstance(c.exception(), hx.ExecutionError)
    assert re.search(what, str(c.exception()))


def test_readme_language_tour_quotes_the_kernels_as_they_are():
    readme = (KERNEL_DIR.parents[1] / "README.md").read_text()
    tour = readme[readme.index("#### Language tour"):]
    excerpt = tour[tour.index("```text\n") + 8:]
    excerpt = excerpt[: excerpt.index("```")]
    softmax = lk.source("softmax_rows").splitlines()
    lines = [line for line in excerpt.splitlines() if line.strip()]
    assert len(lines) > 20
    missing = [line for line in lines if line not in softmax]
    assert not missing, missing
    # The abridgement keeps the file's order.
    positions = [softmax.index(line) for line in lines if lines.count(line) == 1]
    assert positions == sorted(positions)
    assert BARRIER.rstrip("\n").strip() in tour and BARRIER in lk.source("matmul_tiled")
