"""HRX's rules where hrxarray used to differ (issue 14): data checks versus
device faults, kernel ownership, the XDNA invocation limit, budgets, targets,
and traces that name what ran.

References: hrx-runtime.md §1.2 (targets), §2.6 (failure and quarantine),
§2.7 (budgets), §2.9 (kernels, the 128-invocation limit), §7 (error kinds);
NumPy for the data; a plain-Python model for target validity.
"""

import gc
import json
import re
import threading

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import hrxarray as hx

T = 10.0  # bounded waits: a hang fails instead of blocking the suite
BF16 = ml_dtypes.bfloat16
RW, R = hx.Access.READ_WRITE, hx.Access.READ
NPU_TARGET = "amd.xdna.strix_halo.17f0_11"
UNENCODABLE = "bfp16ebs8 has no encoding for NaN or Inf: "


def write(buf, array):
    with buf.map_write() as v:
        v[:] = np.ascontiguousarray(array).view(np.uint8).reshape(-1)


def read(buf, dtype):
    with buf.map_read() as v:
        return np.array(v).view(dtype)


def first_nonfinite(v):
    """The C-order index and NumPy spelling of v's first NaN or Inf."""
    flat = int(np.flatnonzero(~np.isfinite(v))[0])
    index = tuple(int(i) for i in np.unravel_index(flat, v.shape))
    return index, str(v.reshape(-1)[flat])


def bfp16_gemm(rt):
    """The NPU, an 8x8 gemm artifact that quantises its inputs to bfp16, that artifact loaded, and Shared
    buffers for a, b and c."""
    npu = rt.npu()
    art = hx.kernels.npu("gemm", **{"gemm.bfp16": 1})
    k = npu.load_artifact(art, 1, art.contract)
    return npu, art, k, tuple(rt.allocate(n, hx.Shared(npu)) for n in (128, 128, 256))


def failure_of(completion):
    assert completion.wait(T)
    exc = completion.exception()
    assert isinstance(exc, hx.ExecutionError)
    return exc


# --- 1. a kernel's data check is not a device fault ----------------------------------


@st.composite
def rows_with_a_nonfinite(draw):
    rows, blocks = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    v = np.array(
        draw(st.lists(st.floats(-1e6, 1e6, width=32), min_size=rows * 8 * blocks, max_size=rows * 8 * blocks)),
        np.float32,
    ).reshape(rows, 8 * blocks)
    for _ in range(draw(st.integers(1, 3))):
        i, j = draw(st.integers(0, rows - 1)), draw(st.integers(0, 8 * blocks - 1))
        v[i, j] = draw(st.sampled_from([np.nan, np.inf, -np.inf]))
    return v


@given(rows_with_a_nonfinite())
def test_astype_bfp16_of_a_nonfinite_value_fails_the_result_only(v):
    x = hx.asarray(v)
    index, value = first_nonfinite(v)
    tail = f"{UNENCODABLE}element {index} = {value}"
    # The host path refuses at once with the message the device path repeats.
    with pytest.raises(ValueError) as host:
        hx.asarray(v, dtype=hx.bfp16)
    assert str(host.value) == "asarray: " + tail
    y = x.astype(hx.bfp16)
    with pytest.raises(hx.ExecutionError) as info:
        y.block_until_ready()
    cause = info.value.__cause__
    assert type(cause) is ValueError and str(cause).endswith(": " + tail), cause
    assert tail in str(info.value)
    # Only what the operation writes is lost; the array it read is intact.
    assert y.buffer.poisoned and not x.buffer.poisoned
    np.testing.assert_array_equal(hx.to_numpy(x), v)
    np.testing.assert_array_equal(hx.to_numpy(x * 2), v * 2)


def test_bfp16_matmul_with_a_nan_keeps_the_weights_usable():
    rng = np.random.default_rng(7)
    w = hx.asarray(rng.integers(-4, 5, (8, 16)).astype(np.float32), dtype=hx.bfloat16)
    good = hx.asarray(rng.integers(-4, 5, (2, 4, 8)).astype(np.float32), dtype=hx.bfloat16)
    before = hx.to_numpy(hx.matmul(good, w, compute="bfp16"))
    batch = hx.to_numpy(good).copy()
    batch[1, 2, 5] = np.nan
    bad = hx.asarray(batch)
    y = hx.matmul(bad, w, compute="bfp16")
    with pytest.raises(hx.ExecutionError) as info:
        hx.to_numpy(y)
    cause = info.value.__cause__
    assert type(cause) is ValueError
    assert str(cause) == f"matmul: {UNENCODABLE}lhs element (1, 2, 5) = nan"
    assert not w.buffer.poisoned and not bad.buffer.poisoned and y.buffer.poisoned
    # The weights (and the batch) still work: the same product gives the same bits.
    np.testing.assert_array_equal(hx.to_numpy(hx.matmul(good, w, compute="bfp16")), before)
    np.testing.assert_array_equal(hx.to_numpy(bad).astype(np.float32), batch.astype(np.float32))
    # A bad right operand is named as such, with its own index.
    wv = hx.to_numpy(w).copy()
    wv[3, 6] = -np.inf
    with pytest.raises(hx.ExecutionError) as info:
        hx.matmul(good, hx.asarray(wv), compute="bfp16").block_until_ready()
    assert str(info.value.__cause__) == f"matmul: {UNENCODABLE}rhs element (3, 6) = -inf"


def test_integer_power_with_a_negative_exponent_keeps_its_operands():
    base = hx.asarray(np.array([2, 3, 4], np.int32))
    exponent = hx.asarray(np.array([1, -1, 2], np.int32))
    y = hx.power(base, exponent)
    with pytest.raises(hx.ExecutionError, match="negative integer powers") as info:
        y.block_until_ready()
    assert type(info.value.__cause__) is ValueError
    assert y.buffer.poisoned and not base.buffer.poisoned and not exponent.buffer.poisoned
    np.testing.assert_array_equal(hx.to_numpy(hx.power(base, exponent * exponent)), [2, 3, 256])


def test_npu_program_data_check_poisons_only_its_output():
    rt = hx.Runtime()
    npu = rt.npu()
    art = hx.kernels.npu("batched_gemm", **{"gemm.batch": 2, "gemm.bfp16": 1})
    k = npu.load_artifact(art, 1, art.contract)
    a, b, c = (rt.allocate(n, hx.Shared(npu)) for n in (256, 256, 512))
    lhs = np.ones((2, 8, 8), BF16)
    lhs[1, 2, 3] = np.inf
    write(a, lhs)
    write(b, np.ones((2, 8, 8), BF16))
    g = rt.graph()
    g.npu(k, [a, b, c])
    eg = g.prepare()
    exc = failure_of(eg.submit())
    assert type(exc.__cause__) is ValueError
    # The built-in runs its Loom source: the message leads with the op's source location
    # (src/hrxarray/programs/gemm.loom) and record, then names the element of the binding.
    assert re.fullmatch(rf"\d+:\d+: vector\.\w+ \(record 1\): {re.escape(UNENCODABLE)}lhs element \(1, 2, 3\) = inf",
                        str(exc.__cause__))
    assert not eg.quarantined
    np.testing.assert_array_equal(read(a, BF16).reshape(2, 8, 8).astype(np.float32), lhs.astype(np.float32))
    assert not b.poisoned
    with pytest.raises(hx.DeviceLostError, match="lhs element"):
        c.map_read()


def test_a_consumer_of_a_lost_result_loses_only_its_own_output():
    rt = hx.Runtime()
    npu, art, k, (a, b, c) = bfp16_gemm(rt)
    lhs = np.ones((8, 8), BF16)
    lhs[0, 0] = np.nan
    write(a, lhs)
    gate = threading.Event()
    producer = rt.graph()
    producer.host(lambda v: gate.wait(T), [(a, RW)])  # holds the gemm until the consumer is accepted
    producer.npu(k, [a, b, c])
    e, f, d = (rt.allocate(256, hx.HostVisible()) for _ in range(3))
    write(e, np.arange(64, dtype=np.int32))
    consumer = rt.graph()
    consumer.copy(f, e)  # the same compute-lane region as the kernel that reads c
    consumer.gpu(hx.kernels.gpu("transform_i32", elements=64, runtime=rt), [c, d])
    ep, ec = producer.prepare(), consumer.prepare()
    try:
        cp = ep.submit()
        cc = ec.submit()  # accepted while c is still clean; ordered after the producer
    finally:
        gate.set()
    assert type(failure_of(cp).__cause__) is ValueError
    exc = failure_of(cc)
    assert isinstance(exc.__cause__, hx.DeviceLostError) and "poisoned" in str(exc)
    # The consumer never ran: its output is lost, what it only read is not.
    assert d.poisoned and not e.poisoned and not f.poisoned and not ec.quarantined
    np.testing.assert_array_equal(read(e, np.int32), np.arange(64))


def test_a_device_fault_still_poisons_the_whole_graph():
    rt = hx.Runtime()
    npu, art, k, (a, b, c) = bfp16_gemm(rt)
    g = rt.graph()
    g.npu(k, [a, b, c])
    eg = g.prepare()
    k._inject_fault("DMA timeout")
    exc = failure_of(eg.submit())
    assert type(exc.__cause__) is hx.HrxError
    assert eg.quarantined and a.poisoned and b.poisoned and c.poisoned


# --- 8. kernels belong to the runtime that loaded them --------------------------------


def test_a_kernel_of_another_runtime_is_refused():
    rt1, rt2 = hx.Runtime(), hx.Runtime()
    art = hx.kernels.npu("copy")
    k1 = rt1.npu().load_artifact(art, 8, art.contract)
    assert k1.runtime is rt1
    a, b = (rt2.allocate(4096, hx.Shared(rt2.npu())) for _ in range(2))
    g = rt2.graph()
    with pytest.raises(ValueError, match=r"npu\(copy\): the kernel belongs to another runtime"):
        g.npu(k1, [a, b])
    x, y = (rt2.allocate(16, hx.HostVisible()) for _ in range(2))
    default_kernel = hx.kernels.gpu("transform_i32", elements=4)
    assert default_kernel.runtime is hx.default_runtime()
    with pytest.raises(ValueError, match=r"gpu\(transform_i32\): the kernel belongs to another runtime"):
        g.gpu(default_kernel, [x, y])
    with pytest.raises(ValueError, match="empty graph"):
        g.prepare()  # the refusals added nothing
    k2 = hx.kernels.gpu("transform_i32", elements=4, runtime=rt2)
    assert k2.runtime is rt2
    write(x, np.array([1, -2, 3, 2**31 - 1], np.int32))
    g.gpu(k2, [x, y])
    c = g.prepare().submit()
    assert c.wait(T) and c.exception() is None
    np.testing.assert_array_equal(read(y, np.int32), np.array([1, -2, 3, 2**31 - 1], np.int32) * 3 + 7)


# --- 9. the XDNA limit counts invocations in flight, per prepared entry ---------------


def test_more_than_128_pending_submissions_of_npu_entries_are_accepted():
    rt = hx.Runtime(max_submissions=512, graph_slots=512)
    npu = rt.npu()
    art = hx.kernels.npu("copy")
    k = npu.load_artifact(art, 8, art.contract)
    src, d1, d2, d3 = (rt.allocate(4096, hx.Shared(npu)) for _ in range(4))
    data = np.arange(4096, dtype=np.uint32).astype(np.uint8)
    write(src, data)
    gate = threading.Event()
    twice = rt.graph()
    twice.host(lambda v: gate.wait(T), [(src, RW)])  # holds every NPU run behind it
    twice.npu(k, [src, d1])
    twice.npu(k, [src, d2])  # one kernel, two prepared entries
    other = rt.graph()
    other.npu(k, [src, d3])  # and a second graph sharing it
    e_twice, e_other = twice.prepare(), other.prepare()
    accepted = []
    try:
        for i in range(200):
            accepted.append((e_twice if i % 2 else e_other).submit())
    finally:
        gate.set()
    assert len(accepted) == 200
    assert all(c.wait(T) for c in accepted)
    assert all(c.exception() is None for c in accepted)
    for d in (d1, d2, d3):
        np.testing.assert_array_equal(read(d, np.uint8), data)


# --- 10. budgets: zero-byte reservations, quarantine keeps the image ---------------------


def test_zero_byte_reservations_are_allowed_even_when_full():
    budget = hx.MemoryBudget(10)
    with budget.reserve(10):
        with budget.reserve(0) as r:
            assert (r.bytes, r.active, budget.used) == (0, True, 10)
        assert not r.active and budget.used == 10
    assert budget.used == 0


def run_and_drop(fault):
    """Runs a one-entry NPU graph that fails (a device fault or a data check),
    drops every handle and returns (bytes still charged, image bytes)."""
    budget = hx.MemoryBudget(1 << 20)
    rt = hx.Runtime(memory_budget=budget)
    npu, art, k, (a, b, c) = bfp16_gemm(rt)
    if fault:
        k._inject_fault("the NPU stopped answering")
    else:
        write(a, np.full((8, 8), np.nan, BF16))
    g = rt.graph()
    g.npu(k, [a, b, c])
    eg = g.prepare()
    done = eg.submit()
    failure_of(done)
    assert eg.quarantined == fault
    del k, a, b, c, g, eg, done, npu, rt
    gc.collect()
    return budget.used, art.bytes


def test_quarantine_keeps_the_npu_image_charged_for_ever():
    used, image = run_and_drop(fault=True)
    assert used == 128 + 128 + 256 + image
    # A data check quarantines nothing: everything is given back.
    assert run_and_drop(fault=False)[0] == 0


# --- 11. targets are validated as HRX validates them ---------------------------------


def hrx_target_error(target):
    """A plain-Python model of HRX's Target::new: None, or the message."""
    if target == NPU_TARGET:
        return None
    if ":" in target:
        return "expected a bare AMDGPU target, found feature-suffixed name"
    if re.fullmatch(r"gfx[0-9a-f]{3,4}", target):
        return None
    return "invalid AMDGPU target"


@pytest.mark.parametrize("target", ["gfx1151:xnack-", "gfx90a:sramecc+:xnack-", "not a target", "", "gfx11-generic",
                                    "GFX1151", "gfx11510", "gfx1151 ", "amd.xdna.strix_halo.17f0_10",
                                    "amd.xdna.strix_halo"])
def test_invalid_targets_are_refused_at_once(target):
    with pytest.raises(ValueError, match=re.escape(hrx_target_error(target))) as info:
        hx.kernels.npu("copy", target=target)
    assert f'"{target}"' in str(info.value) and str(info.value).startswith("kernels.npu('copy'): ")


@given(st.one_of(st.text(max_size=12), st.from_regex(r"gfx[0-9a-fA-F:+-]{2,6}", fullmatch=True)))
def test_targets_follow_hrx_rules(target):
    want = hrx_target_error(target)
    if want is None:
        assert hx.kernels.npu("copy", target=target).target == target
    else:
        with pytest.raises(ValueError, match=re.escape(want)):
            hx.kernels.npu("copy", target=target)


def test_valid_gpu_targets_are_refused_by_the_npu_when_loaded(npu):
    art = hx.kernels.npu("copy", target="gfx1151")
    with pytest.raises(hx.UnsupportedError, match="exact device profile"):
        npu.load_artifact(art, 8, art.contract)


# --- 17. traces name the operation and its lane --------------------------------------------


def test_trace_events_name_the_array_operation_and_its_lane():
    rt = hx.Runtime()
    npu = rt.npu()
    on = dict(placement=hx.Shared(npu))
    a32 = hx.asarray(np.ones((8, 8), np.float32), **on)
    a16 = hx.asarray(np.ones((8, 8), np.float32), dtype=hx.bfloat16, **on)
    rt.start_trace(16)
    hx.matmul(a16, a16).block_until_ready()  # stays on the NPU
    hx.matmul(a32, a16).block_until_ready()  # float32 @ bfloat16 leaves it
    hx.exp(a32).block_until_ready()
    a32.astype(hx.bfloat16).block_until_ready()
    rt.drain()
    trace = rt.finish_trace()
    assert [(e["op"], e["lane"]) for e in trace.events] == [
        ("matmul", "npu"), ("matmul", "compute"), ("exp", "compute"), ("astype", "compute")]
    # a detail is only recorded where it says more than the operation's name
    assert all(e.get("detail", "") != e["op"] for e in trace.events)
    xs = [x for x in json.loads(trace.to_json())["traceEvents"] if x["ph"] == "X"]
    assert [(x["name"], x["args"]["lane"], x["tid"]) for x in xs[:2]] == [
        ("matmul", "npu", 3), ("matmul", "compute", 1)]


def test_matmul_docstring_says_how_to_stay_on_the_npu():
    doc = hx.matmul.__doc__
    assert "Keeping it on the NPU" in doc and "f32 @ bf16" in doc and "astype(hx.bfloat16)" in doc
