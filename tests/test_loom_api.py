"""hx.loom.compile, Artifact's Loom interface (contract, manifest, launch_config,
pack_constants), loading (npu.load_artifact, Runtime.load_gpu_kernel), Loom
kernels in graphs, and checked mode. The programs are tests/loom_programs.py;
layouts are compared with plain-Python models (struct), results with NumPy.
"""

import os
import struct
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hrxarray as hx
from loom_programs import AXPY_F32, DOUBLE_I32, PEAK_F32, PEAK_F32_CAS, SCALE_F32, workgroups

loom = hx.loom
NPU = "amd.xdna.strix_halo.17f0_11"
READ, WRITE = hx.Access.READ, hx.Access.WRITE
T = 30.0  # seconds: bounded waits only


def scale():
    return loom.compile(SCALE_F32, "scale_f32", target="gfx1151")


def double(records=2):
    return loom.compile(DOUBLE_I32, "double_i32", target="xdna", config={"double.records": records})


def write(buf, array):
    data = np.ascontiguousarray(array).view(np.uint8).reshape(-1)
    with buf.map_write() as m:
        m[: data.size] = data


def read(buf, dtype, count):
    with buf.map_read() as m:
        return np.array(m[: count * np.dtype(dtype).itemsize]).view(dtype)


def no_none(value):
    """Missing manifest facts are omitted, never None."""
    if isinstance(value, dict):
        return all(v is not None and no_none(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(v is not None and no_none(v) for v in value)
    return value is not None


# --- compile ---------------------------------------------------------------------------


def test_compile_targets_and_artifact_identity():
    gpu = scale()
    assert isinstance(gpu, hx.Artifact) and gpu.is_loom
    assert (gpu.target, gpu.symbol, gpu.engine) == ("gfx1151", "scale_f32", "gpu")
    npu = double()
    assert (npu.target, npu.symbol, npu.engine) == (NPU, "double_i32", "npu")
    # The exact profile string names the same target, and the same specialisation is one object.
    assert loom.compile(DOUBLE_I32, "double_i32", target=NPU, config={"double.records": 2}) is npu
    assert scale() is gpu
    # The built-in programs are Artifacts of the same class.
    assert type(hx.kernels.npu("copy")) is type(npu) and not hx.kernels.npu("copy").is_loom


@pytest.mark.parametrize("target", ["gfx1100", "npu", "GFX1151", "", "amd.xdna.strix_halo"])
def test_compile_unknown_target_is_a_value_error_naming_it(target):
    with pytest.raises(ValueError, match=f"unknown target {target!r}"):
        loom.compile(SCALE_F32, "scale_f32", target=target)


def test_compile_wrong_root_for_target_and_unknown_symbol():
    with pytest.raises(loom.LoomError):
        loom.compile(SCALE_F32, "scale_f32", target="xdna")
    with pytest.raises(loom.LoomError):
        loom.compile(DOUBLE_I32, "double_i32", target="gfx1151", config={"double.records": 1})
    with pytest.raises(loom.LoomError) as info:
        loom.compile(SCALE_F32, "missing", target="gfx1151")
    assert info.value.diagnostics and isinstance(info.value.diagnostics[0], loom.Diagnostic)


def test_config_value_types_are_spelled_for_loom():
    a = double(3)
    assert a.config == {"double.records": 3}
    # A string spelling and an int of the same value: one canonical artifact.
    assert loom.compile(DOUBLE_I32, "double_i32", target="xdna", config={"double.records": "3"}) is a
    assert loom.compile(DOUBLE_I32, "double_i32", target="xdna", config={"double.records": np.int64(3)}) is a
    # Keys the pipeline does not reach are ignored (HRX's require-resolved policy).
    assert loom.compile(DOUBLE_I32, "double_i32", target="xdna",
                        config={"double.records": 3, "unused.key": True, "other": 1.5}) is a
    with pytest.raises(TypeError, match="config key 'double.records' must be an int, float, bool or str"):
        loom.compile(DOUBLE_I32, "double_i32", target="xdna", config={"double.records": [3]})
    with pytest.raises(ValueError):  # outside range(%value, 1, 4096)
        double(4097)
    with pytest.raises(ValueError):  # required and missing
        loom.compile(DOUBLE_I32, "double_i32", target="xdna")


def test_loom_error_on_bad_source():
    with pytest.raises(loom.LoomError) as info:
        loom.compile("kernel.def @broken( {", "broken", target="gfx1151")
    assert isinstance(info.value, ValueError)
    d = info.value.diagnostics[0]
    assert d.line >= 1 and d.code


# --- contract and manifest ---------------------------------------------------------------


@given(records=st.integers(1, 4096))
@settings(max_examples=25, deadline=None)
def test_npu_contract_is_the_footprint_model(records):
    c = double(records).contract
    assert [(b.bytes, b.access) for b in c.bindings] == [(records * 64, READ), (records * 64, WRITE)]
    assert all(b.alignment >= 1 and b.alignment & (b.alignment - 1) == 0 for b in c.bindings)
    assert c.constants == b""


def test_gpu_contract_needs_the_device_scalars():
    a = scale()
    with pytest.raises(ValueError, match=r"contract_for\(count=\.\.\., alpha=\.\.\.\)"):
        a.contract
    c = a.contract_for(count=1000, alpha=2.0)
    assert [(b.bytes, b.alignment, b.access) for b in c.bindings] == [(4000, 4, READ), (4000, 4, WRITE)]
    assert c.constants == struct.pack("<If", 1000, 2.0)


def test_manifest_fields():
    m = scale().manifest
    assert no_none(m)
    assert (m["kind"], m["schema_version"]) == ("loom.artifact_manifest", 1)
    assert m["mode"] in ("summary", "details", "analysis")
    assert m["targets"][0]["name"] == "gfx1151"
    (fn,) = m["functions"]
    assert fn["interface"] == {"parameter_count": 4, "binding_count": 2, "constant_byte_length": 8}
    # The device ABI model: scalars packed in signature order, each at its natural
    # alignment (index carried in 32 bits on gfx1151), buffers as pointer bindings.
    model = [("count", "constant", "index", 0, 0, 4, 4), ("alpha", "constant", "f32", 1, 4, 4, 4)]
    got = [(p["name"], p["kind"], p["type"], p["index"], p["byte_offset"], p["byte_length"], p["byte_alignment"])
           for p in fn["parameters"] if p["kind"] == "constant"]
    assert got == model
    assert [(p["name"], p["kind"], p["index"]) for p in fn["parameters"] if p["kind"] == "pointer"] == [
        ("x", "pointer", 0), ("y", "pointer", 1)]
    assert fn["execution"]["subgroup_size"] == 32
    n = double().manifest
    assert no_none(n)
    assert n["functions"][0]["interface"] == {"parameter_count": 2, "binding_count": 2, "constant_byte_length": 0}


# --- launch_config and pack_constants -------------------------------------------------


@given(count=st.integers(1, 1 << 30))
@settings(max_examples=50, deadline=None)
def test_launch_config_is_the_launch_program(count):
    lc = scale().launch_config(count)
    assert lc.workgroups == (workgroups(count), 1, 1)
    assert lc.workgroup_size == (256, 1, 1)
    assert lc.cluster_size == (1, 1, 1)
    assert lc.subgroup_size == 32 and lc.workgroup_storage_bytes == 0


def test_launch_config_errors():
    a = scale()
    with pytest.raises(ValueError, match="workload argument"):
        a.launch_config()
    with pytest.raises(ValueError, match="workload argument"):
        a.launch_config(1, 2)
    with pytest.raises(ValueError):  # violates range(%count, 1, ...)
        a.launch_config(0)
    with pytest.raises(ValueError, match="must be an integer"):
        a.launch_config(1.5)
    with pytest.raises(TypeError):
        a.launch_config("1")
    with pytest.raises(ValueError, match="NPU pipeline"):
        double().launch_config()


@given(count=st.integers(0, 2**31 - 1), alpha=st.floats(width=32, allow_nan=False))
@settings(max_examples=50, deadline=None)
def test_pack_constants_is_the_struct_layout(count, alpha):
    assert scale().pack_constants(count=count, alpha=alpha) == struct.pack("<If", count, alpha)


def test_pack_constants_errors():
    a = scale()
    with pytest.raises(ValueError, match="device scalar 'alpha' \\(f32\\) is required"):
        a.pack_constants(count=1)
    with pytest.raises(ValueError, match="unknown device scalar 'beta'"):
        a.pack_constants(count=1, alpha=1.0, beta=2.0)
    with pytest.raises(ValueError, match="out of range for index"):
        a.pack_constants(count=2**31, alpha=1.0)
    with pytest.raises(ValueError, match="out of range for f32"):
        a.pack_constants(count=1, alpha=1e39)
    with pytest.raises(ValueError, match="must be an integer"):
        a.pack_constants(count=1.0, alpha=1.0)
    with pytest.raises(TypeError):
        a.pack_constants(count=1, alpha="1")


# --- loading --------------------------------------------------------------------------------


def test_load_gpu_kernel_and_its_mismatches():
    rt = hx.Runtime()
    a = scale()
    c = a.contract_for(count=1000, alpha=2.0)
    k = rt.load_gpu_kernel(a, (4, 1, 1), (256, 1, 1), c)
    assert isinstance(k, hx.GpuKernel) and k.runtime is rt and k.contract == c
    rt.load_gpu_kernel(a, 4, 256, c)  # ints mean (n, 1, 1)
    msg = "GPU metadata does not match contract"
    with pytest.raises(ValueError, match=msg + ": grid \\(5, 1, 1\\) differs from the launch program's workgroups"):
        rt.load_gpu_kernel(a, 5, 256, c)
    with pytest.raises(ValueError, match=msg + ": block \\(128, 1, 1\\) differs .* workgroup_size"):
        rt.load_gpu_kernel(a, 8, 128, c)
    with pytest.raises(ValueError, match=msg + ": the kernel has 2 buffer bindings, the contract 1"):
        rt.load_gpu_kernel(a, 4, 256, hx.KernelContract(c.bindings[:1], c.constants))
    with pytest.raises(ValueError, match=msg + ": the kernel's constant block is 8 bytes, the contract's 4"):
        rt.load_gpu_kernel(a, 4, 256, hx.KernelContract(c.bindings, c.constants[:4]))
    # An explicit workload overrides the one read from the constants.
    with pytest.raises(ValueError, match=msg + ": grid \\(4, 1, 1\\) differs"):
        rt.load_gpu_kernel(a, 4, 256, c, workload=[2000])
    # A contract that does not cover the footprints.
    small = hx.KernelContract([hx.BindingContract(400, 4, READ), c.bindings[1]], c.constants)
    with pytest.raises(hx.ContractError, match="does not cover"):
        rt.load_gpu_kernel(a, 4, 256, small)
    with pytest.raises(ValueError, match="positive"):
        rt.load_gpu_kernel(a, (4, 0, 1), 256, c)
    with pytest.raises(TypeError):
        rt.load_gpu_kernel(a, (4, 1), 256, c)
    # Wrong engine / target.
    with pytest.raises(hx.UnsupportedError):
        rt.load_gpu_kernel(double(), 1, 1, double().contract)
    with pytest.raises(hx.UnsupportedError):
        rt.load_gpu_kernel(hx.kernels.npu("copy"), 1, 1, hx.kernels.npu("copy").contract)


# SCALE_F32 with a third buffer between %x and %y that its code never touches, and DOUBLE_I32 with
# an unused middle binding: HRX's launch buffer lists contain only used bindings.
SCALE_UNUSED = SCALE_F32.replace("%x: buffer, %y: buffer", "%x: buffer, %spare: buffer, %y: buffer")
DOUBLE_UNUSED = DOUBLE_I32.replace("launch(%src: buffer, %dst: buffer)", "launch(%src: buffer, %spare: buffer, %dst: buffer)")
UNUSED_RULE = r"launch buffer lists must contain only used bindings: binding 1 \(%spare\) of @{} is never used"


def test_an_unused_binding_is_refused_by_hrx_rule():
    assert SCALE_UNUSED != SCALE_F32 and DOUBLE_UNUSED != DOUBLE_I32
    rt = hx.Runtime(memory_budget=hx.MemoryBudget(1 << 20))
    gpu = loom.compile(SCALE_UNUSED, "scale_f32", target="gfx1151")
    npu = loom.compile(DOUBLE_UNUSED, "double_i32", target="xdna", config={"double.records": 2})
    before = rt.statistics().as_dict(), rt.memory_budget.used
    rule = UNUSED_RULE.format("scale_f32")
    with pytest.raises(ValueError, match=rule) as info:
        gpu.contract_for(count=16, alpha=1.0)
    assert "0 bytes" not in str(info.value)
    given = hx.KernelContract([hx.BindingContract(64, 4, READ)] * 2 + [hx.BindingContract(64, 4, WRITE)],
                              struct.pack("<If", 16, 1.0))
    with pytest.raises(ValueError, match=rule):
        rt.load_gpu_kernel(gpu, 1, 256, given)
    rule = UNUSED_RULE.format("double_i32")
    with pytest.raises(ValueError, match=rule):
        npu.contract
    given = hx.KernelContract([hx.BindingContract(128, 4, READ)] * 2 + [hx.BindingContract(128, 4, WRITE)])
    with pytest.raises(ValueError, match=rule):
        rt.npu().load_artifact(npu, 1, given)
    assert (rt.statistics().as_dict(), rt.memory_budget.used) == before


def test_a_binding_spanning_zero_bytes_is_refused_by_name():
    with pytest.raises(ValueError, match=r"binding 0 \(%x\) of @scale_f32 spans 0 bytes as view<\[%count\]xf32> "
                                         r"under these constants; HRX refuses zero-length bindings"):
        scale().contract_for(count=0, alpha=1.0)


def test_load_npu_artifact_rules():
    rt = hx.Runtime()
    a = double(2)
    k = rt.npu().load_artifact(a, 1, a.contract)
    assert isinstance(k, hx.NpuKernel) and k.columns == 1
    with pytest.raises(hx.UnsupportedError):
        rt.npu().load_artifact(a, 9, a.contract)
    with pytest.raises(hx.UnsupportedError):
        rt.npu().load_artifact(scale(), 1, scale().contract_for(count=1, alpha=1.0))
    short = hx.KernelContract([hx.BindingContract(64, 64, READ), a.contract.bindings[1]])
    with pytest.raises(hx.ContractError):
        rt.npu().load_artifact(a, 1, short)
    with pytest.raises(hx.ContractError):
        rt.npu().load_artifact(a, 1, hx.KernelContract(a.contract.bindings[:1]))


def test_kernel_of_another_runtime_is_refused_by_a_graph():
    rt, other = hx.Runtime(), hx.Runtime()
    a = scale()
    c = a.contract_for(count=16, alpha=1.0)
    k = rt.load_gpu_kernel(a, 1, 256, c)
    x, y = (other.allocate(64, hx.HostVisible()) for _ in range(2))
    with pytest.raises(ValueError, match="another runtime"):
        other.graph().gpu(k, [x, y])


# --- graphs -------------------------------------------------------------------------------


def test_gpu_kernel_feeds_npu_pipeline_in_one_graph():
    """A Loom GPU kernel writes what a Loom NPU pipeline reads: the graph orders them."""
    rt = hx.Runtime()
    npu = rt.npu()
    n = 64  # 4 records of 16
    g_art, n_art = scale(), double(n // 16)
    gk = rt.load_gpu_kernel(g_art, 1, 256, g_art.contract_for(count=n, alpha=3.0))
    nk = npu.load_artifact(n_art, 1, n_art.contract)
    x, y, z = (rt.allocate(4 * n, hx.Shared(npu)) for _ in range(3))
    xs = np.arange(-n // 2, n // 2, dtype=np.int32)
    write(x, xs.astype(np.float32))
    g = rt.graph()
    g.gpu(gk, [x, y])
    # The pipeline reads y's float32 bits as int32 and doubles them.
    g.npu(nk, [y, z])
    c = g.prepare().submit()
    assert c.wait(T)
    assert c.exception() is None
    y_ref = np.float32(3.0) * xs.astype(np.float32)
    np.testing.assert_array_equal(read(y, np.float32, n), y_ref)
    np.testing.assert_array_equal(read(z, np.int32, n), y_ref.view(np.int32) * np.int32(2))


def test_checked_mode_failure_poisons_what_the_kernel_wrote():
    rt = hx.Runtime(checked=True)
    assert rt.checked
    a = scale()
    k = rt.load_gpu_kernel(a, 1, 256, a.contract_for(count=16, alpha=float("nan")))
    x, y = (rt.allocate(64, hx.Shared(rt.npu())) for _ in range(2))
    g = rt.graph()
    g.gpu(k, [x, y])
    c = g.prepare().submit()
    assert c.wait(T)
    exc = c.exception()
    assert isinstance(exc, hx.ExecutionError)
    with pytest.raises(hx.DeviceLostError):
        with y.map_read():
            pass
    # Unchecked, the same kernel runs (a NaN alpha makes NaN results).
    rt2 = hx.Runtime(checked=False)
    k2 = rt2.load_gpu_kernel(a, 1, 256, a.contract_for(count=16, alpha=float("nan")))
    x2, y2 = (rt2.allocate(64, hx.HostVisible()) for _ in range(2))
    write(x2, np.ones(16, np.float32))
    g2 = rt2.graph()
    g2.gpu(k2, [x2, y2])
    c2 = g2.prepare().submit()
    assert c2.wait(T) and c2.exception() is None
    assert np.isnan(read(y2, np.float32, 16)).all()


# The placements a GPU kernel can bind, and whether the GPU reaches each on coherent backing
# (HRX's allocate_shared): HostVisible is coherent host-local memory, and adopting it into Shared
# keeps that backing (the NPU joins through a dma-buf alias); GpuLocal and Shared are cacheable.
PEAK_PLACEMENTS = {"HostVisible": True, "Shared": False, "GpuLocal": False, "Shared adopted from HostVisible": True}


def peak_buffer(rt, name):
    if name == "HostVisible":
        return rt.allocate(64, hx.HostVisible())
    if name == "Shared":
        return rt.allocate(64, hx.Shared(rt.npu()))
    if name == "GpuLocal":
        return rt.allocate(64, hx.GpuLocal())
    return rt.adopt(rt.allocate(64, hx.HostVisible()), hx.Shared(rt.npu()))


def run_peak(rt, source, symbol, xs, peak, start):
    """Runs a peak kernel over xs (on HostVisible: coherent, though only read) into peak[0] = start; the
    completion and peak[0] afterwards (None when the run failed)."""
    art = loom.compile(source, symbol, target="gfx1151")
    k = rt.load_gpu_kernel(art, workgroups(len(xs), 64), 64, art.contract_for(count=len(xs)))
    x = rt.allocate(4 * len(xs), hx.HostVisible())
    write(x, xs)
    host = rt.allocate(64, hx.HostVisible())  # GpuLocal is not host-mapped: stage through a copy
    write(host, np.array([start], np.float32))
    g = rt.graph()
    g.copy(peak.view(0, 4), host.view(0, 4))
    g.gpu(k, [x, peak])
    g.copy(host.view(0, 4), peak.view(0, 4))
    c = g.prepare().submit()
    assert c.wait(T)
    return c, (read(host, np.float32, 1)[0] if c.exception() is None else None)


def test_peak_placements_agree_with_the_visibility_facts():
    # The table above is the project's own fact: host and GPU are mutually atomic at system scope
    # (and exchange bytes with no cache operation) exactly on the coherent attachment.
    rt = hx.Runtime()
    for name, coherent in PEAK_PLACEMENTS.items():
        buf = peak_buffer(rt, name)
        assert (buf.visibility("host", rt.gpu()).atomic_scope_32 == "system") == coherent, name
        assert (buf.visibility(rt.gpu(), "host").acquire.kind == "none") == coherent, name


@pytest.mark.parametrize("name", PEAK_PLACEMENTS)
def test_float_atomic_max_leaves_coherent_memory_unchanged(name):
    """gfx1151's float atomic max does not update coherent backing: unchecked, the kernel runs and that
    binding keeps its value; on cacheable memory the max is applied. Per binding: x is always on
    HostVisible (coherent), which does not stop the max into a cacheable peak."""
    rt = hx.Runtime(checked=False)
    xs = np.random.default_rng(3).standard_normal(100).astype(np.float32)
    c, peak = run_peak(rt, PEAK_F32, "peak_f32", xs, peak_buffer(rt, name), -1.5)
    assert c.exception() is None
    assert peak == (np.float32(-1.5) if PEAK_PLACEMENTS[name] else max(xs.max(), np.float32(-1.5)))


@pytest.mark.parametrize("name", PEAK_PLACEMENTS)
def test_checked_mode_reports_float_atomic_max_on_coherent_memory(name):
    rt = hx.Runtime(checked=True)
    xs = np.random.default_rng(4).standard_normal(100).astype(np.float32)
    c, peak = run_peak(rt, PEAK_F32, "peak_f32", xs, peak_buffer(rt, name), 0.0)
    if not PEAK_PLACEMENTS[name]:
        assert c.exception() is None and peak == max(xs.max(), 0)
        return
    exc = c.exception()
    assert isinstance(exc, hx.ExecutionError)
    line = PEAK_F32.splitlines().index(next(l for l in PEAK_F32.splitlines() if "rmw<maxnumf>" in l)) + 1
    msg = str(exc)
    assert f"{line}:" in msg
    assert "gfx1151 float atomic max (maxnumf) does not update coherent memory, and binding %peak is on coherent" in msg
    assert "integer compare-and-swap loop over the float's bits" in msg


@pytest.mark.parametrize("checked", [False, True])
@pytest.mark.parametrize("name", PEAK_PLACEMENTS)
def test_the_integer_cas_loop_remedy_updates_every_placement(name, checked):
    # HRX's documented workaround works on coherent memory too, and is not reported.
    rt = hx.Runtime(checked=checked)
    xs = np.random.default_rng(5).standard_normal(300).astype(np.float32)
    c, peak = run_peak(rt, PEAK_F32_CAS, "peak_f32_cas", xs, peak_buffer(rt, name), -np.inf)
    assert c.exception() is None
    assert peak == xs.max()


@pytest.mark.parametrize("checked", [False, True])
def test_float_atomic_min_updates_coherent_memory(checked):
    # Only max is in HRX's caveat (Note [The gfx1151 float atomic max caveat]).
    rt = hx.Runtime(checked=checked)
    xs = np.random.default_rng(6).standard_normal(100).astype(np.float32)
    source = PEAK_F32.replace("rmw<maxnumf>", "rmw<minnumf>")
    c, peak = run_peak(rt, source, "peak_f32", xs, peak_buffer(rt, "HostVisible"), 0.0)
    assert c.exception() is None and peak == min(xs.min(), 0)


def test_checked_default_comes_from_the_environment():
    code = "import hrxarray as hx; print(hx.Runtime().checked, hx.Runtime(checked=False).checked)"
    for value, want in (("1", "True False"), ("0", "False False"), ("", "False False")):
        env = dict(os.environ, HRXARRAY_CHECKED=value)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        assert out.stdout.split() == want.split(), out.stderr


def test_axpy_is_three_bindings():
    a = loom.compile(AXPY_F32, "axpy_f32", target="gfx1151")
    c = a.contract_for(count=10, alpha=1.0)
    assert [b.access for b in c.bindings] == [READ, READ, WRITE]
    assert a.launch_config(129).workgroups == (workgroups(129, 128), 1, 1)


# --- the hrx-rs corpus through the API (HRX_LOOM_CORPUS names its directory) ----------------

CORPUS = os.environ.get("HRX_LOOM_CORPUS")
needs_corpus = pytest.mark.skipif(not CORPUS, reason="HRX_LOOM_CORPUS is not set")


def corpus(name):
    with open(os.path.join(CORPUS, name)) as f:
        return f.read()


@needs_corpus
def test_corpus_batched_gemm_equals_the_builtin_bfp16_gemm():
    import ml_dtypes

    batch = 37
    src = corpus("batched_gemm.xdna.loom")
    f = loom.function(src, "gemm", config={"gemm.batch": batch})
    rng = np.random.default_rng(7)
    a = rng.integers(-8, 9, (batch, 64)).astype(ml_dtypes.bfloat16)
    b = rng.integers(-8, 9, (batch, 64)).astype(ml_dtypes.bfloat16)
    got = hx.to_numpy(f(hx.asarray(a), hx.asarray(b)))
    rt = hx.default_runtime()
    art = hx.kernels.npu("batched_gemm", **{"gemm.batch": batch, "gemm.bfp16": 1})
    k = rt.npu().load_artifact(art, 1, art.contract)
    bufs = [rt.allocate(n, hx.Shared(rt.npu())) for n in (128 * batch, 128 * batch, 256 * batch)]
    write(bufs[0], a)
    write(bufs[1], b)
    g = rt.graph()
    g.npu(k, bufs)
    c = g.prepare().submit()
    assert c.wait(T) and c.exception() is None
    np.testing.assert_array_equal(got.reshape(-1), read(bufs[2], np.float32, 64 * batch))


@needs_corpus
def test_corpus_add_f32_loads_with_its_own_grid():
    src = corpus("add_f32.loom")
    a = loom.compile(src, "add_f32", target="gfx1151", config={"add.grid": 4})
    n = 1000
    lc = a.launch_config(n)
    assert (lc.workgroups, lc.workgroup_size) == ((4, 1, 1), (256, 1, 1))
    rt = hx.Runtime()
    k = rt.load_gpu_kernel(a, 4, 256, a.contract_for(count=n, delta=0.5))
    with pytest.raises(ValueError, match="GPU metadata does not match contract"):
        rt.load_gpu_kernel(a, 5, 256, a.contract_for(count=n, delta=0.5))
    buf = rt.allocate(4 * n, hx.HostVisible())
    xs = np.linspace(-1, 1, n, dtype=np.float32)
    write(buf, xs)
    g = rt.graph()
    g.gpu(k, [buf])
    c = g.prepare().submit()
    assert c.wait(T) and c.exception() is None
    np.testing.assert_array_equal(read(buf, np.float32, n), xs + np.float32(0.5))
