"""The built-in programs as Loom sources: shipped in the package (hrxarray/programs/*.loom),
embedded byte for byte in the library, each built-in program a root symbol of its module with
the configuration keys and defaults that hx.kernels uses, every module parsing and
specialising, and hx.kernels' programs running these sources (through the provider's Loom
frontend and executor) with the results of Note [Built-in program semantics]."""

from __future__ import annotations

import re
from importlib import resources

import pytest

import hrxarray as hx
from hrxarray import _core

NPU = ("copy", "gemm", "batched_gemm")
GPU = ("transform_i32", "euler_bf16", "add_f32")


def shipped():
    folder = resources.files("hrxarray") / "programs"
    return {p.name[: -len(".loom")]: p.read_text(encoding="utf-8") for p in folder.iterdir() if p.name.endswith(".loom")}


def test_package_ships_the_sources_the_library_embeds():
    files = shipped()
    assert set(files) == {"copy", "gemm", "elementwise"}
    assert _core.kernels._builtin_sources() == files


@pytest.mark.parametrize("name", NPU + GPU)
def test_each_builtin_is_a_root_symbol_of_its_module(name):
    stem, symbol = _core.kernels._builtin_source(name)
    assert symbol == name
    text = shipped()[stem]
    kind = "pipeline.def" if name in NPU else "kernel.def"
    assert re.search(rf"^{re.escape(kind)}\b[^\n]*@{name}\(", text, re.MULTILINE), (stem, name)


def test_unknown_builtin_source_is_refused():
    with pytest.raises(ValueError, match="'scale' is not a built-in program"):
        _core.kernels._builtin_source("scale")


def source_defaults(text):
    return {key: int(value) for key, value in re.findall(r"^config\.def @([\w.]+) = (-?\d+) : index$", text, re.MULTILINE)}


@pytest.mark.parametrize("name", NPU)
def test_source_config_defaults_are_the_artifacts(name):
    # Every key of the artifact is declared in the source with the same default.
    stem, _ = _core.kernels._builtin_source(name)
    defaults = source_defaults(shipped()[stem])
    config = hx.kernels.npu(name).config
    assert config and {k: defaults[k] for k in config} == config


def test_gemm_source_follows_the_fixture_numerics():
    # gemm.bfp16 defaults to 1: both operands encoded to bfp16ebs8 before vector.mma; the
    # rounding comes from the encoding schema (flush_subnormal = floor, nearest_even = even).
    text = shipped()["gemm"]
    assert source_defaults(text)["gemm.bfp16"] == 1
    assert text.count("element_format=bfp16ebs8") == 2
    assert "rounding=nearest_even" in text and "rounding=flush_subnormal" in text
    assert len(re.findall(r"= vector\.encode %[ab]_values using", text)) == 4


@pytest.mark.parametrize("name", NPU + GPU)
def test_sources_parse_and_specialise_with_the_artifacts_config(name):
    loom = getattr(_core, "loom", None)
    if loom is None or not hasattr(loom, "parse"):
        pytest.skip("the Loom frontend (hrxarray._core.loom.parse) is not built in yet")
    stem, symbol = _core.kernels._builtin_source(name)
    module = loom.parse(shipped()[stem])
    target = hx.kernels.NPU_TARGET if name in NPU else "gfx1151"
    spec = module.specialize(symbol, target, {})
    # NPU programs: the source's defaults are the artifact's; GPU kernels take their
    # size and scalars at launch (workload, constant block), no config.
    assert spec["config"] == (hx.kernels.npu(name).config if name in NPU else {})


# --- the built-ins run their Loom sources --------------------------------------------------
# hx.kernels' programs are compiled from hrxarray/programs/*.loom by the provider's Loom
# frontend and run by its executor, through the lanes' provider queues; their results must
# be those of Note [Built-in program semantics], checked here against NumPy, ml_dtypes and
# hrxarray.numerics (tests/test_kernels.py has the exhaustive semantic tests).

import numpy as np  # noqa: E402
from hypothesis import given, settings, strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

from hrxarray import numerics as hn  # noqa: E402

BF16 = hx.bfloat16


@pytest.fixture(scope="module")
def mrt():
    """One runtime for the Hypothesis tests (function-scoped fixtures do not mix with @given)."""
    return hx.Runtime()


def run_kernel(rt, kernel, inputs, out_bytes, placement):
    """Run `kernel` once in a graph over fresh buffers holding `inputs` (and zeroed outputs of
    `out_bytes`); return every binding's bytes afterwards."""
    data = [np.ascontiguousarray(x).view(np.uint8).reshape(-1) for x in inputs]
    bufs = [rt.allocate(d.size, placement) for d in data] + [rt.allocate(n, placement) for n in out_bytes]
    for buf, d in zip(bufs, data):
        with buf.map_write() as m:
            m[:] = d
    g = rt.graph()
    (g.npu if isinstance(kernel, hx.NpuKernel) else g.gpu)(kernel, bufs)
    g.prepare().submit().result()
    out = []
    for buf in bufs:
        with buf.map_read() as m:
            out.append(np.array(m))
    return out


def run_gpu(rt, name, inputs, out_bytes, **config):
    return run_kernel(rt, hx.kernels.gpu(name, runtime=rt, **config), inputs, out_bytes, hx.HostVisible())


def run_npu(rt, name, inputs, out_bytes, **config):
    npu = rt.npu()
    art = hx.kernels.npu(name, **config)
    return run_kernel(rt, npu.load_artifact(art, 1, art.contract), inputs, out_bytes, hx.Shared(npu))


def euler_reference(x, v, dt):
    # the product and the sum each rounded to float32, the sum then to bfloat16 (RNE)
    step = np.float32(dt) * v.astype(np.float32)
    return (x.astype(np.float32) + step).astype(BF16)


def gemm_reference(a, b, bfp16, rounding):
    kw = {"compute": "bfp16", "rounding": ("floor", "even")[rounding]} if bfp16 else {}
    return np.stack([np.asarray(hn.matmul(x, y, **kw), np.float32) for x, y in zip(a, b)])


f32 = st.floats(-1e6, 1e6, width=32)


@given(x=hnp.arrays(np.int32, st.integers(1, 700)))
@settings(max_examples=20, deadline=None)
def test_transform_i32_runs_its_source(mrt, x):
    out = run_gpu(mrt, "transform_i32", [x], [4 * x.size], elements=x.size)[1].view(np.int32)
    assert np.array_equal(out, (x.astype(np.int64) * 3 + 7).astype(np.int32))


@given(x=hnp.arrays(np.float32, st.integers(1, 700), elements=f32), dt=f32, seed=st.integers(0, 2**32 - 1))
@settings(max_examples=20, deadline=None)
def test_euler_bf16_runs_its_source(mrt, x, dt, seed):
    x16 = x.astype(BF16)
    v16 = np.random.default_rng(seed).standard_normal(x.size).astype(np.float32).astype(BF16)
    out = run_gpu(mrt, "euler_bf16", [x16, v16], [], elements=x.size, dt=float(dt))[0]
    assert np.array_equal(out.view(np.uint16), euler_reference(x16, v16, dt).view(np.uint16))


@given(c=hnp.arrays(np.float32, st.integers(1, 700), elements=f32), delta=f32)
@settings(max_examples=20, deadline=None)
def test_add_f32_runs_its_source(mrt, c, delta):
    out = run_gpu(mrt, "add_f32", [c], [], elements=c.size, delta=float(delta))[0]
    assert np.array_equal(out.view(np.float32), c + np.float32(delta))


@given(packets=st.integers(1, 5), seed=st.integers(0, 2**32 - 1))
@settings(max_examples=10, deadline=None)
def test_copy_runs_its_source(mrt, packets, seed):
    src = np.random.default_rng(seed).integers(0, 256, packets * 4096, dtype=np.uint8)
    out = run_npu(mrt, "copy", [src], [packets * 4096], **{"copy.packets": packets})[1]
    assert np.array_equal(out, src)


@given(batch=st.sampled_from([None, 1, 3, 17]), bfp16=st.integers(0, 1), rounding=st.integers(0, 1),
       seed=st.integers(0, 2**32 - 1))
@settings(max_examples=20, deadline=None)
def test_gemm_runs_its_source(mrt, batch, bfp16, rounding, seed):
    rng = np.random.default_rng(seed)
    count = batch or 1
    scale = 2.0 ** rng.integers(-6, 7, (count, 8, 8))
    a, b = ((rng.standard_normal((count, 8, 8)) * scale).astype(np.float32).astype(BF16) for _ in range(2))
    config = {"gemm.bfp16": bfp16, "gemm.rounding": rounding}
    if batch is not None:
        config["gemm.batch"] = batch
    out = run_npu(mrt, "gemm" if batch is None else "batched_gemm", [a, b], [256 * count], **config)[2]
    ref = gemm_reference(a, b, bfp16, rounding)
    assert np.array_equal(out.view(np.uint32), ref.view(np.uint32).reshape(-1))


def test_loom_gemm_data_check_poisons_only_the_output():
    # Note [Data checks are not device faults]: an Inf in lhs fails the invocation's data check
    # (a ValueError naming the element) and poisons only the output (tests/test_rules.py).
    rt = hx.Runtime()
    npu = rt.npu()
    art = hx.kernels.npu("batched_gemm", **{"gemm.batch": 2})
    k = npu.load_artifact(art, 1, art.contract)
    a, b, c = (rt.allocate(n, hx.Shared(npu)) for n in (256, 256, 512))
    lhs = np.ones((2, 8, 8), BF16)
    lhs[1, 2, 3] = np.inf
    with a.map_write() as m:
        m[:] = lhs.view(np.uint8).reshape(-1)
    g = rt.graph()
    g.npu(k, [a, b, c])
    eg = g.prepare()
    done = eg.submit()
    assert done.wait(30)
    exc = done.exception()
    assert isinstance(exc, hx.ExecutionError) and type(exc.__cause__) is ValueError
    assert "lhs element (1, 2, 3) = inf" in str(exc.__cause__)
    assert not eg.quarantined and not a.poisoned and not b.poisoned and c.poisoned


def test_sources_keep_their_promises_in_checked_mode():
    # On a checked runtime the built-ins run in loom.md §4.4's checked mode: every
    # index.assume, alignment promise and footprint of the sources holds on a tail-heavy
    # size (the last workgroup mostly masked off) and a batch.
    rt = hx.Runtime(checked=True)
    x = np.arange(-300, 301, dtype=np.int32)
    out = run_gpu(rt, "transform_i32", [x], [4 * x.size], elements=x.size)[1]
    assert np.array_equal(out.view(np.int32), x * 3 + 7)
    c = np.linspace(-2, 2, 257, dtype=np.float32)
    assert np.array_equal(run_gpu(rt, "add_f32", [c], [], elements=c.size, delta=0.5)[0].view(np.float32), c + 0.5)
    v = np.linspace(1, -1, 257, dtype=np.float32).astype(BF16)
    out = run_gpu(rt, "euler_bf16", [c.astype(BF16), v], [], elements=c.size, dt=0.25)[0]
    assert np.array_equal(out.view(np.uint16), euler_reference(c.astype(BF16), v, 0.25).view(np.uint16))
    a = np.arange(3 * 64, dtype=np.float32).reshape(3, 8, 8).astype(BF16)
    b = a[::-1].copy()
    out = run_npu(rt, "batched_gemm", [a, b], [3 * 256], **{"gemm.batch": 3})[2]
    assert np.array_equal(out.view(np.uint32), gemm_reference(a, b, 1, 0).view(np.uint32).reshape(-1))
    src = np.arange(2 * 4096, dtype=np.uint32).astype(np.uint8)
    assert np.array_equal(run_npu(rt, "copy", [src], [2 * 4096], **{"copy.packets": 2})[1], src)
