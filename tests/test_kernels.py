"""Kernel contracts (HRX §2.9) and the built-in programs of the emulated devices.

Programs run through the `_run` testing hook (synchronously, outside any
graph) and are compared with NumPy / ml_dtypes references (HRX §4.3-4.4).
"""

import gc
import re

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import hrxarray as hx
from hrxarray import _core
from hrxarray import kernels

# The public names, once hrxarray/__init__ re-exports them.
BindingContract = getattr(hx, "BindingContract", kernels.BindingContract)
KernelContract = getattr(hx, "KernelContract", kernels.KernelContract)
READ, WRITE, READ_WRITE = hx.Access.READ, hx.Access.WRITE, hx.Access.READ_WRITE
TARGET = "amd.xdna.strix_halo.17f0_11"
BF16 = ml_dtypes.bfloat16
XDNA_MSG = "XDNA requires an exact device profile, 1..=8 columns, and buffer-only bindings"


def load(npu, artifact, columns=1, contract=None):
    """npu.load_artifact(...), or the compiled function until NpuDevice has the method."""
    contract = artifact.contract if contract is None else contract
    if hasattr(npu, "load_artifact"):
        return npu.load_artifact(artifact, columns, contract)
    return _core.kernels.load_npu_artifact(npu, artifact, columns, contract)


def write(view, array):
    data = np.ascontiguousarray(array).view(np.uint8).reshape(-1)
    assert data.size <= view.length
    with view.buffer.map_write() as m:
        m[view.offset : view.offset + data.size] = data


def read(view, dtype, count=None):
    itemsize = np.dtype(dtype).itemsize
    count = view.length // itemsize if count is None else count
    with view.buffer.map_read() as m:
        return np.array(m[view.offset : view.offset + count * itemsize]).view(dtype)


def base_address(buf):
    with buf.map_read() as m:
        return m.__array_interface__["data"][0]


@pytest.fixture(scope="module")
def mrt():
    """One runtime for the Hypothesis tests (function-scoped fixtures do not mix with @given)."""
    return hx.Runtime()


# --- contracts ------------------------------------------------------------------------


def test_binding_contract_fields_and_repr():
    b = BindingContract(128, 64, READ, "lhs")
    assert (b.bytes, b.alignment, b.access, b.layout) == (128, 64, READ, "lhs")
    assert b == BindingContract(128, 64, READ, "lhs")
    assert b != BindingContract(128, 64, WRITE, "lhs")
    assert BindingContract(4, 4, WRITE).layout == ""
    assert "lhs" in repr(b) and "128" in repr(b)


def test_kernel_contract_fields():
    c = KernelContract([BindingContract(8, 4, READ), BindingContract(8, 4, WRITE)], constants=b"\x01\x02")
    assert len(c.bindings) == 2 and c.bindings[1].access == WRITE
    assert c.constants == b"\x01\x02"
    assert KernelContract([BindingContract(8, 4, READ)]).constants == b""


@pytest.mark.parametrize(
    "nbytes, alignment",
    [(0, 4), (8, 0), (8, 3), (8, 6), (8, 96), (2**63, 1), (2**64 - 1, 8)],
)
def test_invalid_extent_or_alignment_is_value_error(nbytes, alignment):
    with pytest.raises(ValueError, match="invalid kernel binding extent or alignment") as info:
        KernelContract([BindingContract(16, 16, READ), BindingContract(nbytes, alignment, WRITE)])
    assert not isinstance(info.value, hx.ContractError)


@pytest.mark.parametrize("nbytes, alignment", [(-1, 4), (8, -4), (2**64, 8)])
def test_unrepresentable_extent_or_alignment_is_value_error(nbytes, alignment):
    with pytest.raises(ValueError, match="invalid kernel binding extent or alignment"):
        BindingContract(nbytes, alignment, READ)


@pytest.mark.parametrize("bad, field, reason", [
    ((0, 4), "bytes = 0", "HRX refuses a zero-length binding"),
    ((2**63, 4), "bytes = 9223372036854775808", "1..=isize::MAX"),
    ((8, 0), "alignment = 0", "is not a power of two"),
    ((8, 12), "alignment = 12", "is not a power of two"),
])
def test_binding_contract_refuses_what_no_contract_can_hold(bad, field, reason):
    # HRX validates bindings with their KernelContract; hrxarray refuses them where the field is named.
    with pytest.raises(ValueError, match="invalid kernel binding extent or alignment") as info:
        BindingContract(*bad, READ)
    assert not isinstance(info.value, hx.ContractError)
    assert f"BindingContract {field}" in str(info.value) and reason in str(info.value)


def test_largest_valid_contract():
    c = KernelContract([BindingContract(2**63 - 1, 2**62, READ)])
    assert c.bindings[0].bytes == 2**63 - 1


def test_non_integer_extent_is_type_error():
    with pytest.raises(TypeError):
        BindingContract(8.0, 4, READ)


def test_view_must_be_long_enough_and_aligned(rt):
    buf = rt.allocate(4096, hx.HostVisible())
    c = KernelContract([BindingContract(64, 16, READ, "lhs: 8x4 f16")])
    c._check_use([buf.view(0, 64)])
    c._check_use([buf.view(16, 4000)])  # longer than the minimum is fine
    with pytest.raises(hx.ContractError, match=r"lhs: 8x4 f16.*64 bytes.*16"):
        c._check_use([buf.view(0, 63)])
    with pytest.raises(hx.ContractError, match=r"lhs: 8x4 f16.*64 bytes.*aligned to 16"):
        c._check_use([buf.view(8, 64)])


def test_binding_count_mismatch(rt):
    buf = rt.allocate(256, hx.HostVisible())
    c = KernelContract([BindingContract(8, 4, READ), BindingContract(8, 4, WRITE)])
    for views in ([buf.view(0, 8)], [buf.view(0, 8), buf.view(8, 8), buf.view(16, 8)], []):
        with pytest.raises(hx.ContractError, match="kernel binding count mismatch"):
            c._check_use(views)


def test_overlapping_writable_arguments(rt):
    a = rt.allocate(256, hx.HostVisible())
    b = rt.allocate(256, hx.HostVisible())
    rw = KernelContract([BindingContract(16, 4, READ), BindingContract(16, 4, WRITE)])
    with pytest.raises(hx.ContractError, match="overlapping writable kernel arguments require an unsafe dispatch"):
        rw._check_use([a.view(0, 32), a.view(16, 16)])
    rw._check_use([a.view(0, 16), a.view(16, 16)])  # adjacent, not overlapping
    rw._check_use([a.view(0, 16), b.view(0, 16)])  # another allocation
    rr = KernelContract([BindingContract(16, 4, READ), BindingContract(16, 4, READ)])
    rr._check_use([a.view(0, 16), a.view(0, 16)])  # read/read may overlap


def test_overlap_through_an_alias(rt, npu):
    src = rt.allocate(256, hx.HostVisible())
    alias = rt.adopt(src, hx.Shared(npu))
    c = KernelContract([BindingContract(16, 4, READ), BindingContract(16, 4, WRITE)])
    with pytest.raises(hx.ContractError, match="overlapping writable"):
        c._check_use([src.view(0, 16), alias.view(8, 16)])


@pytest.mark.parametrize("engine, kind", [("gpu", "GPU"), ("npu", "NPU")])
def test_absolute_address_alignment(rt, engine, kind):
    # Buffers are 64-byte aligned, so a 4096-byte alignment is met by the
    # view offset alone yet may fail on the allocation's base address.
    c = KernelContract([BindingContract(64, 4096, READ)])
    for _ in range(16):
        buf = rt.allocate(8192, hx.HostVisible())
        aligned = base_address(buf) % 4096 == 0
        if aligned:
            c._check_use([buf.view(4096, 64)], engine)
        else:
            with pytest.raises(hx.ContractError, match=f"{kind} allocation does not satisfy kernel alignment"):
                c._check_use([buf.view(4096, 64)], engine)
    assert base_address(buf) % 64 == 0


@st.composite
def contract_case(draw):
    n = draw(st.integers(1, 3))
    bindings = [
        (
            draw(st.integers(1, 96)),
            2 ** draw(st.integers(0, 7)),
            draw(st.sampled_from([READ, WRITE, READ_WRITE])),
        )
        for _ in range(n)
    ]
    nviews = draw(st.sampled_from([n, n, n, n, n + 1, n - 1]))
    views = []
    for i in range(nviews):
        which = draw(st.integers(0, 1))
        if i < n and draw(st.booleans()):
            # Mostly a view that satisfies its binding, so that the later
            # checks (address alignment, overlap) are reached.
            nbytes, align, _ = bindings[i]
            offset = align * draw(st.integers(0, (512 - nbytes) // align))
            length = draw(st.integers(nbytes, 512 - offset))
        else:
            offset = draw(st.integers(0, 512))
            length = draw(st.integers(0, 512 - offset))
        views.append((which, offset, length))
    return bindings, views


def model_check(bindings, views, bases):
    """Which §2.9 check fails first, or None (independent Python model)."""
    if len(bindings) != len(views):
        return "kernel binding count mismatch"
    for (nbytes, align, _), (which, off, length) in zip(bindings, views):
        if length < nbytes or off % align:
            return "needs a view of at least"
        if (bases[which] + off) % align:
            return "allocation does not satisfy kernel alignment"
    for i in range(len(views)):
        for j in range(i + 1, len(views)):
            writes = bindings[i][2] != READ or bindings[j][2] != READ
            (wi, oi, li), (wj, oj, lj) = views[i], views[j]
            if writes and wi == wj and oi < oj + lj and oj < oi + li:
                return "overlapping writable kernel arguments"
    return None


@given(contract_case())
def test_per_use_checks_match_a_model(mrt, case):
    bindings, views = case
    bufs = [mrt.allocate(512, hx.HostVisible()), mrt.allocate(512, hx.Shared(mrt.npu()))]
    bases = [base_address(b) for b in bufs]
    contract = KernelContract([BindingContract(*b) for b in bindings])
    py_views = [bufs[w].view(o, n) for w, o, n in views]
    expected = model_check(bindings, views, bases)
    if expected is None:
        contract._check_use(py_views)
    else:
        with pytest.raises(hx.ContractError, match=expected):
            contract._check_use(py_views)


# --- configuration ---------------------------------------------------------------------


def test_artifact_fields():
    art = kernels.npu("copy", **{"copy.packets": 4})
    assert art.target == TARGET == kernels.NPU_TARGET
    assert art.symbol == "copy" and art.name == "copy"
    assert art.config == {"copy.packets": 4}
    assert art.bytes == 4096 + 64 * 4
    assert [(b.bytes, b.access) for b in art.contract.bindings] == [(16384, READ), (16384, WRITE)]
    assert kernels.npu("copy").config == {"copy.packets": 1}
    assert kernels.npu("batched_gemm").config == {"gemm.batch": 1, "gemm.bfp16": 1, "gemm.rounding": 0}
    assert "copy" in repr(art)


@given(st.integers(1, 64), st.integers(1, 16384))
def test_artifact_size_is_a_function_of_the_config(packets, batch):
    a = kernels.npu("copy", **{"copy.packets": packets})
    assert a.bytes == kernels.npu("copy", **{"copy.packets": packets}).bytes
    assert a.bytes < kernels.npu("copy", **{"copy.packets": packets + 1}).bytes
    g = kernels.npu("batched_gemm", **{"gemm.batch": batch})
    assert [b.bytes for b in g.contract.bindings] == [128 * batch, 128 * batch, 256 * batch]
    assert all(b.alignment == 4 for b in g.contract.bindings)  # HRX's own contracts use u32 alignment


def test_gemm_contract():
    c = kernels.npu("gemm").contract
    assert [(b.bytes, b.alignment, b.access) for b in c.bindings] == [
        (128, 4, READ),
        (128, 4, READ),
        (256, 4, WRITE),
    ]
    assert c.constants == b""


def test_gpu_kernel_contracts():
    t = kernels.gpu("transform_i32", elements=10)
    assert isinstance(t, kernels.GpuKernel) and isinstance(t, kernels.Kernel)
    assert t.name == "transform_i32" and t.engine == "gpu"
    assert [(b.bytes, b.alignment, b.access) for b in t.contract.bindings] == [(40, 4, READ), (40, 4, WRITE)]
    e = kernels.gpu("euler_bf16", elements=10, dt=0.5)
    assert [(b.bytes, b.alignment, b.access) for b in e.contract.bindings] == [(20, 2, READ_WRITE), (20, 2, READ)]
    a = kernels.gpu("add_f32", elements=10, delta=2)
    assert [(b.bytes, b.alignment, b.access) for b in a.contract.bindings] == [(40, 4, READ_WRITE)]


@pytest.mark.parametrize(
    "make, pattern",
    [
        (lambda: kernels.npu("matmul"), "unknown NPU program 'matmul'"),
        (lambda: kernels.npu("copy", **{"copy.bytes": 4}), "unknown config key 'copy.bytes'"),
        (lambda: kernels.npu("copy", **{"copy.packets": 0}), "'copy.packets' = 0 is out of range"),
        (lambda: kernels.npu("copy", **{"copy.packets": -3}), "'copy.packets' = -3"),
        (lambda: kernels.npu("copy", **{"copy.packets": 2.0}), "'copy.packets' must be an integer"),
        (lambda: kernels.npu("copy", **{"copy.packets": 2**70}), "'copy.packets'"),
        (lambda: kernels.npu("gemm", **{"gemm.batch": 2}), "unknown config key 'gemm.batch'"),
        (lambda: kernels.npu("batched_gemm", **{"gemm.batch": 0}), "'gemm.batch' = 0 is out of range 1..=16384"),
        (lambda: kernels.npu("batched_gemm", **{"gemm.batch": 16385}), "'gemm.batch' = 16385"),
        (lambda: kernels.npu("copy", target=""), "target"),
        (lambda: kernels.gpu("transform_f32", elements=4), "unknown GPU kernel 'transform_f32'"),
        (lambda: kernels.gpu("transform_i32"), "'elements' is required"),
        (lambda: kernels.gpu("transform_i32", elements=0), "'elements' = 0 is out of range"),
        (lambda: kernels.gpu("add_f32", elements=2**62), "'elements' = 4611686018427387904"),
        (lambda: kernels.gpu("transform_i32", elements=4, dt=1.0), "unknown config key 'dt'"),
        (lambda: kernels.gpu("euler_bf16", elements=4, dt=float("nan")), "'dt' = nan"),
        (lambda: kernels.gpu("add_f32", elements=4, delta=float("inf")), "'delta' = inf"),
        (lambda: kernels.gpu("add_f32", elements=4, delta=1e39), "'delta'"),
    ],
)
def test_bad_names_and_config_are_value_errors(make, pattern):
    with pytest.raises(ValueError, match=pattern):
        make()


@pytest.mark.parametrize("value", [True, "4", None, [4]])
def test_non_numeric_config_is_type_error(value):
    with pytest.raises(TypeError, match="copy.packets"):
        kernels.npu("copy", **{"copy.packets": value})
    with pytest.raises(TypeError, match="elements"):
        kernels.gpu("add_f32", elements=value)


def test_bindability_is_checked(rt, npu):
    t = kernels.gpu("transform_i32", elements=4)
    local = rt.allocate(64, hx.NpuLocal(npu))
    host = rt.allocate(64, hx.HostVisible())
    with pytest.raises(hx.UnsupportedError, match="NPU-local storage cannot bind to the GPU"):
        t._check([host.view(0, 16), local.view(0, 16)])
    copy = load(npu, kernels.npu("copy"))
    with pytest.raises(hx.UnsupportedError, match="not bindable by npu:0"):
        copy._check([rt.allocate(4096, hx.HostVisible()), rt.allocate(4096, hx.NpuLocal(npu))])
    copy._check([rt.allocate(4096, hx.Shared(npu)), rt.allocate(4096, hx.NpuLocal(npu))])


# --- load_artifact -----------------------------------------------------------------------


def test_load_artifact(npu):
    art = kernels.npu("copy", **{"copy.packets": 2})
    k = load(npu, art, 8)
    assert isinstance(k, kernels.NpuKernel) and isinstance(k, kernels.Kernel)
    assert (k.name, k.columns, k.image_bytes, k.npu_index, k.engine) == ("copy", 8, art.bytes, 0, "npu")
    assert k.contract == art.contract


@given(st.integers(1, 8))
def test_every_column_count_in_range_loads(mrt, columns):
    assert load(mrt.npu(), kernels.npu("gemm"), columns).columns == columns


@pytest.mark.parametrize("columns", [0, 9, -1, 64])
def test_columns_out_of_range(npu, columns):
    with pytest.raises(hx.UnsupportedError, match=XDNA_MSG):
        load(npu, kernels.npu("gemm"), columns)


def test_target_must_match_exactly(npu):
    # Valid targets (HRX Target::new) of another device load as Unsupported;
    # invalid ones never make an artifact (tests/test_rules.py).
    for target in ("gfx1151", "gfx1100", "gfx90a"):
        art = kernels.npu("gemm", target=target)
        assert art.target == target
        with pytest.raises(hx.UnsupportedError, match=XDNA_MSG) as info:
            load(npu, art)
        assert target in str(info.value)


def test_constants_are_refused(npu):
    art = kernels.npu("copy")
    contract = KernelContract(list(art.contract.bindings), constants=b"\x00\x00\x00\x01")
    with pytest.raises(hx.UnsupportedError, match=XDNA_MSG):
        load(npu, art, 1, contract)


def test_contract_must_cover_the_program(npu):
    art = kernels.npu("gemm")
    lhs, rhs, out = art.contract.bindings
    narrow = [
        [lhs, rhs],
        [BindingContract(64, 64, READ), rhs, out],
        [lhs, BindingContract(128, 2, READ), out],
        [lhs, rhs, BindingContract(256, 64, READ)],
    ]
    for bindings in narrow:
        with pytest.raises(hx.ContractError):
            load(npu, art, 1, KernelContract(bindings))
    wide = KernelContract([BindingContract(4096, 4096, READ_WRITE), rhs, BindingContract(256, 128, READ_WRITE)])
    assert load(npu, art, 1, wide).contract == wide


def test_image_bytes_are_charged_and_released():
    budget = hx.MemoryBudget(1 << 20)
    rt = hx.Runtime(memory_budget=budget)
    art = kernels.npu("copy", **{"copy.packets": 8})
    k1 = load(rt.npu(), art)
    assert budget.used == art.bytes
    k2 = load(rt.npu(), kernels.npu("gemm"))
    assert budget.used == art.bytes + k2.image_bytes
    del k1
    gc.collect()
    assert budget.used == k2.image_bytes
    del k2
    gc.collect()
    assert budget.used == 0


def test_budget_refusals_change_nothing():
    art = kernels.npu("copy", **{"copy.packets": 4})
    small = hx.Runtime(memory_budget=hx.MemoryBudget(art.bytes - 1))
    with pytest.raises(ValueError, match="exceed the whole memory budget"):
        load(small.npu(), art)
    assert small.memory_budget.used == 0

    budget = hx.MemoryBudget(art.bytes + 100)
    rt = hx.Runtime(memory_budget=budget)
    held = budget.reserve(200)
    with pytest.raises(hx.BusyError):
        load(rt.npu(), art)
    assert budget.used == 200
    with pytest.raises(hx.UnsupportedError):
        load(rt.npu(), art, 0)  # refused before any charge
    assert budget.used == 200
    held.release()
    k = load(rt.npu(), art)
    assert budget.used == art.bytes
    del k
    gc.collect()
    assert budget.used == 0


# --- the programs ------------------------------------------------------------------------


@given(packets=st.integers(1, 3), seed=st.integers(0, 2**32 - 1), slack=st.integers(0, 2))
@settings(max_examples=15)
def test_npu_copy(mrt, packets, seed, slack):
    npu = mrt.npu()
    n = packets * 4096
    data = np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8)
    src = mrt.allocate(n + 64 * slack, hx.Shared(npu)).view(64 * slack, n)
    dst_buf = mrt.allocate(n + 128, hx.NpuLocal(npu))
    write(src, data)
    k = load(npu, kernels.npu("copy", **{"copy.packets": packets}))
    k._run([src, dst_buf.view(64, n)])
    out = read(dst_buf.view(0, n + 128), np.uint8)
    assert np.array_equal(out[64 : 64 + n], data)
    assert not out[:64].any() and not out[64 + n :].any()  # nothing else written


def gemm_reference(a, b):
    """C = A·B, float32, one fused multiply-add per k = 1, 0, 3, 2, 5, 4, 7, 6 from +0,
    subnormal inputs and results flushed (programs.h). The fma is float64 arithmetic rounded once to float32: a
    bf16 x bf16 product is exact in float64, and so is its sum with a float32 accumulator
    unless their exponents lie more than 29 apart, where the smaller cannot affect the
    float32 rounding anyway."""

    def flush(x):
        x = np.asarray(x, np.float32)
        tiny = (x != 0) & (np.abs(x) < np.finfo(np.float32).tiny)
        return np.where(tiny, np.copysign(np.float32(0), x), x).astype(np.float32)

    a = flush(a.astype(np.float32)).astype(np.float64)
    b = flush(b.astype(np.float32)).astype(np.float64)
    acc = np.zeros(a.shape[:-2] + (8, 8), np.float32)
    for k in (1, 0, 3, 2, 5, 4, 7, 6):
        acc = flush((acc.astype(np.float64) + a[..., :, k, None] * b[..., None, k, :]).astype(np.float32))
    return acc


PLAIN_BF16 = {"gemm.bfp16": 0}  # the plain-bf16 opt-in: operands multiplied as given


def run_gemm(rt, npu, a, b, batch=None, config=None):
    """Run gemm (batch None) or batched_gemm over a and b with the programs' defaults
    updated by ``config``; returns the float32 output shaped as a."""
    name, base = ("gemm", {}) if batch is None else ("batched_gemm", {"gemm.batch": batch})
    config = {**base, **(config or {})}
    count = 1 if batch is None else batch
    k = load(npu, kernels.npu(name, **config))
    va = rt.allocate(128 * count, hx.Shared(npu)).view(0)
    vb = rt.allocate(128 * count, hx.NpuLocal(npu)).view(0)
    vc = rt.allocate(256 * count + 64, hx.Shared(npu)).view(64)
    write(va, a.astype(BF16))
    write(vb, b.astype(BF16))
    k._run([va, vb, vc])
    return read(vc, np.float32).reshape(a.shape)


small_ints = hnp.arrays(np.int8, (8, 8), elements=st.integers(-3, 3))


@given(a=small_ints, b=small_ints)
@settings(max_examples=25)
def test_gemm_exact_on_small_integers(mrt, a, b):
    c = run_gemm(mrt, mrt.npu(), a, b)
    assert np.array_equal(c, a.astype(np.float32) @ b.astype(np.float32))


def test_gemm_every_element_is_k_plus_one(rt, npu):
    # gemm_pipeline's check: A = 1, B = 1 except a row of 2s → K + 1 everywhere.
    a = np.ones((8, 8))
    b = np.ones((8, 8))
    b[3] = 2.0
    assert np.all(run_gemm(rt, npu, a, b) == 9.0)


def test_gemm_nonuniform_requests(rt, npu):
    # tests/native_execution.rs: two requests, four passes with changed inputs.
    i = np.arange(64)
    for request in range(2):
        for p in range(4):
            a = (((i * 3 + request + p) % 7) - 3).reshape(8, 8)
            b = (((i * 4 + request + p) % 7) - 3).reshape(8, 8)
            c = run_gemm(rt, npu, a, b)
            assert np.array_equal(c, a.astype(np.float32) @ b.astype(np.float32))


bf16_values = st.floats(-8192.0, 8192.0, width=32).map(lambda x: float(np.float32(x).astype(BF16)))
bf16_matrix = hnp.arrays(np.float64, (8, 8), elements=bf16_values)


@given(a=bf16_matrix, b=bf16_matrix)
@settings(max_examples=25)
def test_gemm_float_order_and_flushing(mrt, a, b):
    c = run_gemm(mrt, mrt.npu(), a, b, config=PLAIN_BF16)
    ref = gemm_reference(a.astype(BF16), b.astype(BF16))
    assert np.array_equal(c.view(np.uint32), ref.view(np.uint32))


@given(a=bf16_matrix, b=bf16_matrix, batched=st.booleans())
@settings(max_examples=25)
def test_gemm_default_is_the_bfp16_fixture_numerics(mrt, a, b, batched):
    # HRX's fixtures encode both bf16 operands to bfp16ebs8 (floor rounding) before the
    # multiply: by default the built-ins give hx.numerics.matmul(..., compute="bfp16")'s bits.
    from hrxarray import numerics as hn

    a16, b16 = a.astype(BF16), b.astype(BF16)
    c = run_gemm(mrt, mrt.npu(), a[None] if batched else a, b[None] if batched else b, 1 if batched else None)
    ref = hn.matmul(a16, b16, compute="bfp16")
    assert np.array_equal(c.reshape(8, 8).view(np.uint32), np.asarray(ref, np.float32).view(np.uint32))


def test_gemm_flushes_subnormals(rt, npu):
    tiny = float(np.float32(2.0**-130).astype(BF16))  # a bf16 subnormal
    a = np.zeros((8, 8))
    b = np.zeros((8, 8))
    a[0, 0], b[0, 0] = tiny, 1.0  # subnormal input
    a[1, 1], b[1, 1] = 2.0**-70, 2.0**-70  # normal inputs, subnormal product
    a[2, 2], b[2, 2] = 2.0**-63, 2.0**-63  # a normal product...
    a[2, 3], b[3, 2] = -(2.0**-63), 2.0**-63  # ...cancelled exactly: +0.0
    c = run_gemm(rt, npu, a, b, config=PLAIN_BF16)
    assert not c.any()
    assert not np.signbit(c).any()
    a[0, 0] = 2.0**-60  # the same positions with normal values do show up
    assert run_gemm(rt, npu, a, b, config=PLAIN_BF16)[0, 0] == 2.0**-60


def test_gemm_fuses_each_product_into_the_sum(rt, npu):
    # A subnormal product still counts when the running sum keeps the result normal:
    # 2**-126 + 2**-128 (fused) rather than 2**-126 + flush(2**-128) = 2**-126. k = 1 comes
    # first (programs.h), so the normal product sits there; at k = 0 the tiny one would flush
    # alone (0 + 2**-128), which the second case checks.
    a = np.zeros((8, 8))
    b = np.zeros((8, 8))
    a[0, 1], b[1, 0] = 2.0**-63, 2.0**-63
    a[0, 0], b[0, 0] = 2.0**-64, 2.0**-64
    assert run_gemm(rt, npu, a, b, config=PLAIN_BF16)[0, 0] == np.float32(1.25 * 2.0**-126)
    a[0, 0], b[0, 0] = 2.0**-63, 2.0**-63
    a[0, 1], b[1, 0] = 2.0**-64, 2.0**-64
    assert run_gemm(rt, npu, a, b, config=PLAIN_BF16)[0, 0] == np.float32(2.0**-126)


def run_bfp16_gemm(rt, npu, a, b, rounding):
    batch = a.shape[0]
    k = load(npu, kernels.npu("batched_gemm", **{"gemm.batch": batch, "gemm.bfp16": 1, "gemm.rounding": rounding}))
    va = rt.allocate(128 * batch, hx.Shared(npu)).view(0)
    vb = rt.allocate(128 * batch, hx.Shared(npu)).view(0)
    vc = rt.allocate(256 * batch, hx.Shared(npu)).view(0)
    write(va, a)
    write(vb, b)
    k._run([va, vb, vc])
    assert np.array_equal(read(va, np.uint16), a.view(np.uint16).reshape(-1))  # inputs untouched
    return read(vc, np.float32).reshape(batch, 8, 8)


@pytest.mark.parametrize("rounding", [0, 1])
def test_batched_gemm_bfp16_inputs(rt, npu, rounding):
    from hrxarray import numerics as hn

    rng = np.random.default_rng(99 + rounding)
    scale = 2.0 ** rng.integers(-6, 7, (5, 8, 8))
    a = (rng.standard_normal((5, 8, 8)) * scale).astype(np.float32).astype(BF16)
    b = (rng.standard_normal((5, 8, 8)) * scale).astype(np.float32).astype(BF16)
    name = ("floor", "even")[rounding]
    qa = hn.bfp16_quantize(a.astype(np.float32), name)  # A blocked along rows (K)
    qb = np.swapaxes(hn.bfp16_quantize(np.swapaxes(b.astype(np.float32), -1, -2), name), -1, -2)
    c = run_bfp16_gemm(rt, npu, a, b, rounding)
    assert np.array_equal(c.view(np.uint32), gemm_reference(qa.astype(BF16), qb.astype(BF16)).view(np.uint32))
    assert not np.array_equal(c, gemm_reference(a, b))  # the quantisation is visible
    # integer data in -3..3 stays exact through bfp16, as HRX's checks need
    ia = rng.integers(-3, 4, (5, 8, 8)).astype(BF16)
    ib = rng.integers(-3, 4, (5, 8, 8)).astype(BF16)
    assert np.array_equal(run_bfp16_gemm(rt, npu, ia, ib, rounding), ia.astype(np.float32) @ ib.astype(np.float32))


def test_gemm_bfp16_config_is_checked():
    assert kernels.npu("gemm", **{"gemm.bfp16": 1}).config == {"gemm.bfp16": 1, "gemm.rounding": 0}
    with pytest.raises(ValueError, match="'gemm.bfp16' = 2 is out of range 0..=1"):
        kernels.npu("gemm", **{"gemm.bfp16": 2})
    with pytest.raises(ValueError, match="'gemm.rounding' = -1 is out of range 0..=1"):
        kernels.npu("batched_gemm", **{"gemm.rounding": -1})


@given(batch=st.integers(1, 40), seed=st.integers(0, 2**32 - 1))
@settings(max_examples=15)
def test_batched_gemm(mrt, batch, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, (batch, 8, 8))
    b = rng.integers(-3, 4, (batch, 8, 8))
    c = run_gemm(mrt, mrt.npu(), a, b, batch)
    assert np.array_equal(c, a.astype(np.float32) @ b.astype(np.float32))


def test_batched_gemm_largest_batch(rt, npu):
    rng = np.random.default_rng(16384)
    a = rng.integers(-3, 4, (16384, 8, 8))
    b = rng.integers(-3, 4, (16384, 8, 8))
    c = run_gemm(rt, npu, a, b, 16384)
    assert np.array_equal(c, a.astype(np.float32) @ b.astype(np.float32))


@given(x=hnp.arrays(np.int32, st.integers(1, 300)), pad=st.integers(0, 3))
@settings(max_examples=30)
def test_transform_i32_wraps(mrt, x, pad):
    n = x.size
    k = kernels.gpu("transform_i32", elements=n)
    vin = mrt.allocate(4 * (n + pad), hx.HostVisible()).view(4 * pad, 4 * n)
    out_buf = mrt.allocate(4 * n + 8, hx.Shared(mrt.npu()))
    write(vin, x)
    k._run([vin, out_buf.view(4, 4 * n)])
    expected = ((x.astype(np.int64) * 3 + 7) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
    got = read(out_buf.view(0), np.int32)
    assert np.array_equal(got[1 : n + 1], expected)
    assert got[0] == 0 and got[n + 1] == 0


def test_transform_i32_extremes(rt):
    x = np.array([0, 1, -1, 2**31 - 1, -(2**31), 715827882, -715827883], np.int32)
    k = kernels.gpu("transform_i32", elements=x.size)
    vin = rt.allocate(x.nbytes, hx.HostVisible()).view(0)
    vout = rt.allocate(x.nbytes, hx.HostVisible()).view(0)
    write(vin, x)
    k._run([vin, vout])
    expected = [7, 10, 4, -2147483644, -2147483641, -2147483643, -2147483642]
    assert read(vout, np.int32).tolist() == expected


def euler_reference(x, v, dt):
    step = np.float32(dt) * v.astype(np.float32)
    return (x.astype(np.float32) + step).astype(BF16)


bf16_arrays = st.integers(1, 200).flatmap(
    lambda n: st.tuples(
        hnp.arrays(np.float32, n, elements=st.floats(-(2.0**100), 2.0**100, width=32)),
        hnp.arrays(np.float32, n, elements=st.floats(-(2.0**100), 2.0**100, width=32)),
    )
)


@given(xv=bf16_arrays, dt=st.floats(-1e3, 1e3, allow_subnormal=False))
@settings(max_examples=30)
def test_euler_bf16_matches_ml_dtypes(mrt, xv, dt):
    x = xv[0].astype(BF16)
    v = xv[1].astype(BF16)
    k = kernels.gpu("euler_bf16", elements=x.size, dt=dt)
    vx = mrt.allocate(x.nbytes, hx.HostVisible()).view(0)
    vv = mrt.allocate(v.nbytes + 2, hx.Shared(mrt.npu())).view(2)
    write(vx, x)
    write(vv, v)
    k._run([vx, vv])
    got = read(vx, np.uint16)
    assert np.array_equal(got, euler_reference(x, v, dt).view(np.uint16))
    assert np.array_equal(read(vv, np.uint16, x.size), v.view(np.uint16))  # v is only read


def test_euler_bf16_hrx_check(rt):
    # tests/heterogeneous.rs: dt = 1, v = 1; 1.0 → 2.0 → 3.0 (0x4040), 2.0 → 4.0 (0x4080).
    k = kernels.gpu("euler_bf16", elements=4)
    x = rt.allocate(8, hx.HostVisible()).view(0)
    v = rt.allocate(8, hx.HostVisible()).view(0)
    write(x, np.array([0x3F80, 0x4000, 0x3F80, 0x4000], np.uint16))
    write(v, np.array([0x3F80] * 4, np.uint16))
    k._run([x, v])
    k._run([x, v])
    assert read(x, np.uint16).tolist() == [0x4040, 0x4080, 0x4040, 0x4080]


def test_euler_bf16_rounds_to_nearest_even_and_keeps_specials(rt):
    x = np.array([1.0, 1.0, 1.0, np.inf, np.nan, 3e38, -0.0], np.float32).astype(BF16)
    v = np.array([2.0**-8, 3 * 2.0**-8, 2.0**-9, -1.0, 1.0, 3e38, -0.0], np.float32).astype(BF16)
    k = kernels.gpu("euler_bf16", elements=x.size, dt=1.0)
    vx = rt.allocate(x.nbytes, hx.HostVisible()).view(0)
    vv = rt.allocate(v.nbytes, hx.HostVisible()).view(0)
    write(vx, x)
    write(vv, v)
    k._run([vx, vv])
    got = read(vx, np.uint16).view(BF16).astype(np.float32)
    # 1 + 2^-8 is a tie → even (1.0); 1 + 3·2^-8 → 1 + 2^-6 (even); 1 + 2^-9 → 1.0
    assert got[:3].tolist() == [1.0, 1.0 + 2.0**-6, 1.0]
    assert got[3] == np.inf and np.isnan(got[4]) and got[5] == np.inf
    assert got[6] == 0 and np.signbit(got[6])


@given(
    c=hnp.arrays(np.float32, st.integers(1, 300), elements=st.floats(width=32, allow_nan=False)),
    delta=st.floats(-(2.0**100), 2.0**100, width=32) | st.sampled_from([0.1, 1.0, -3]),
)
@settings(max_examples=30)
def test_add_f32(mrt, c, delta):
    k = kernels.gpu("add_f32", elements=c.size, delta=delta)
    vc = mrt.allocate(c.nbytes + 4, hx.HostVisible()).view(4, c.nbytes)
    write(vc, c)
    k._run([vc])
    with np.errstate(over="ignore"):
        expected = c + np.float32(delta)
    assert np.array_equal(read(vc, np.float32).view(np.uint32), expected.view(np.uint32))


def test_add_f32_default_delta(rt):
    vc = rt.allocate(16, hx.HostVisible()).view(0)
    k = kernels.gpu("add_f32", elements=4)
    k._run([vc])
    k._run([vc])
    assert read(vc, np.float32).tolist() == [2.0] * 4


def test_run_checks_the_contract_first(rt):
    k = kernels.gpu("add_f32", elements=4)
    buf = rt.allocate(16, hx.HostVisible())
    with pytest.raises(hx.ContractError, match="needs a view of at least 16 bytes"):
        k._run([buf.view(0, 12)])
    with pytest.raises(hx.ContractError, match="kernel binding count mismatch"):
        k._run([buf.view(0, 16), buf.view(0, 16)])
    assert not read(buf.view(0), np.float32).any()  # a failed call changes nothing


def test_kernels_module_documents_its_functions():
    assert kernels.npu.__doc__ and kernels.gpu.__doc__ and "euler_bf16" in kernels.__doc__
    assert set(kernels.__all__) >= {"npu", "gpu"}


def test_gpu_kernels_on_large_inputs_split_over_threads_identically(rt):
    # Above the size where the bodies are split over the kernels' thread pool (and with a
    # ragged last chunk): every element must still be what the scalar definition gives.
    n = 1_000_003
    rng = np.random.default_rng(7)
    x = rng.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32)
    k = kernels.gpu("transform_i32", elements=n)
    vin = rt.allocate(4 * n, hx.HostVisible()).view(0)
    vout = rt.allocate(4 * n, hx.HostVisible()).view(0)
    write(vin, x)
    k._run([vin, vout])
    assert np.array_equal(read(vout, np.int32), (x.astype(np.int64) * 3 + 7).astype(np.int32))

    c = rng.standard_normal(n).astype(np.float32)
    vc = rt.allocate(4 * n, hx.HostVisible()).view(0)
    write(vc, c)
    kernels.gpu("add_f32", elements=n, delta=0.1)._run([vc])
    assert np.array_equal(read(vc, np.float32), c + np.float32(0.1))

    xb = rng.standard_normal(n).astype(np.float32).astype(BF16)
    vb = rng.standard_normal(n).astype(np.float32).astype(BF16)
    vx = rt.allocate(2 * n, hx.HostVisible()).view(0)
    vv = rt.allocate(2 * n, hx.HostVisible()).view(0)
    write(vx, xb)
    write(vv, vb)
    kernels.gpu("euler_bf16", elements=n, dt=0.01)._run([vx, vv])
    assert np.array_equal(read(vx, np.uint16), euler_reference(xb, vb, 0.01).view(np.uint16))


def test_the_module_documentation_states_what_the_programs_do(rt, npu):
    # kernels.__doc__ is what users read: its alignment, its keys and its accumulation order must be
    # the programs' own (it once said 64-byte bindings, k = 0, 1, ..., 7 and no gemm.bfp16 keys).
    doc = " ".join(kernels.__doc__.split())
    stated = {int(x) for x in re.findall(r"declares (\d+)-byte alignment", doc)}
    assert stated == {4}
    for art in (kernels.npu("copy"), kernels.npu("gemm"), kernels.npu("batched_gemm")):
        assert {b.alignment for b in art.contract.bindings} == stated
        for key in art.config:
            assert f"``{key}``" in doc, key
    order = [int(k) for k in re.search(r"in the order k = ([\d, ]+)", doc).group(1).split(", ")]
    assert sorted(order) == list(range(8))
    # Products 1, 1 and 2**24 at k = 1, 2 and 3 (others 0): ascending, the 1s add up to 2 before
    # 2**24 comes (2**24 + 2); in the pair order 2**24 comes between them and each 1 is lost to
    # rounding (ties to even). The program's result is the documented order's.
    a = np.zeros((8, 8), np.float32)
    a[0, [1, 2, 3]] = [1.0, 1.0, 2.0**24]
    b = np.ones((8, 8), np.float32)
    acc = np.float32(0)
    for k in order:
        acc = np.float32(acc + a[0, k])  # the products are exact: each step is one rounding
    ascending = np.float32(2.0**24 + 2)
    assert acc != ascending
    assert run_gemm(rt, npu, a, b)[0, 0] == acc


def test_config_mapping_and_keywords_are_one_configuration():
    by_kw = hx.kernels.npu("batched_gemm", **{"gemm.batch": 3, "gemm.bfp16": 0})
    by_map = hx.kernels.npu("batched_gemm", config={"gemm.batch": 3, "gemm.bfp16": 0})
    mixed = hx.kernels.npu("batched_gemm", config={"gemm.batch": 3}, **{"gemm.bfp16": 0})
    assert by_kw.config == by_map.config == mixed.config
    assert (by_map.config["gemm.batch"], by_map.config["gemm.bfp16"]) == (3, 0)
    assert hx.kernels.gpu("add_f32", config={"elements": 8}).contract.bindings[0].bytes == 32
    with pytest.raises(TypeError, match=r"kernels.npu: gemm.batch given both in config= and as a keyword"):
        hx.kernels.npu("batched_gemm", config={"gemm.batch": 3}, **{"gemm.batch": 4})
