"""Kernel faults and the NPU's pending-invocation limit (HRX §2.6, §2.9)."""

import threading

import numpy as np
import pytest

import hrxarray as hx

T = 10


def i32_buffers(rt, n, placement):
    a = rt.allocate(4 * n, placement)
    b = rt.allocate(4 * n, placement)
    with a.map_write() as v:
        v.view(np.int32)[:] = np.arange(n, dtype=np.int32)
    return a, b


def test_injected_gpu_fault_poisons_the_graph_and_spares_unrelated_work(rt, npu):
    n = 64
    k = hx.kernels.gpu("transform_i32", elements=n)
    a, b = i32_buffers(rt, n, hx.Shared(npu))
    alias = rt.adopt(rt.allocate(16, hx.HostVisible()), hx.Shared(npu))
    g = rt.graph()
    g.gpu(k, [a, b])
    g.fill(alias, 1)
    eg = g.prepare()
    other_a, other_b = i32_buffers(rt, n, hx.HostVisible())
    g2 = rt.graph()
    g2.gpu(hx.kernels.gpu("transform_i32", elements=n), [other_a, other_b])
    unrelated = g2.prepare()
    live_before = rt.statistics().live_bytes
    k._inject_fault("ECC error on the emulated GPU")
    c = eg.submit()
    assert c.wait(T)
    with pytest.raises(hx.ExecutionError, match="ECC error") as info:
        c.result()
    assert isinstance(info.value.__cause__, hx.HrxError)
    assert eg.quarantined
    for buf in (a, b, alias):
        with pytest.raises(hx.DeviceLostError, match="ECC error"):
            buf.map_read()
    with pytest.raises(hx.DeviceLostError):
        eg.submit()
    # Unrelated work goes on, and the quarantined storage keeps its bytes.
    c2 = unrelated.submit()
    assert c2.wait(T) and c2.exception() is None
    with other_b.map_read() as v:
        np.testing.assert_array_equal(v.view(np.int32), np.arange(n, dtype=np.int32) * 3 + 7)
    del a, b, alias, eg, g, c
    assert rt.statistics().live_bytes == live_before


def test_npu_program_accepts_at_most_128_pending_invocations():
    rt = hx.Runtime(max_submissions=512, graph_slots=512)
    npu = rt.npu()
    art = hx.kernels.npu("copy", **{"copy.packets": 1})
    k = npu.load_artifact(art, 8, art.contract)
    src = rt.allocate(4096, hx.Shared(npu))
    dst = rt.allocate(4096, hx.Shared(npu))
    gate = threading.Event()
    g = rt.graph()
    g.host(lambda v: gate.wait(T), [(src, hx.Access.READ_WRITE)])  # holds every NPU run behind it
    g.npu(k, [src, dst])
    eg = g.prepare()
    accepted = []
    try:
        for _ in range(128):
            accepted.append(eg.submit())
        before = rt.statistics()
        with pytest.raises(hx.BusyError, match="XDNA pending invocation capacity exhausted"):
            eg.submit()
        assert rt.statistics() == before, "a refused submission changes nothing"
    finally:
        gate.set()
    assert all(c.wait(T) for c in accepted)
    assert all(c.exception() is None for c in accepted)
    c = eg.submit()  # capacity is back once they retired
    assert c.wait(T)
