"""Kernel faults (HRX §2.6); the NPU's pending-invocation limit is in tests/test_rules.py."""

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
    k = hx.kernels.gpu("transform_i32", elements=n, runtime=rt)
    a, b = i32_buffers(rt, n, hx.Shared(npu))
    alias = rt.adopt(rt.allocate(16, hx.HostVisible()), hx.Shared(npu))
    g = rt.graph()
    g.gpu(k, [a, b])
    g.fill(alias, 1)
    eg = g.prepare()
    other_a, other_b = i32_buffers(rt, n, hx.HostVisible())
    g2 = rt.graph()
    g2.gpu(hx.kernels.gpu("transform_i32", elements=n, runtime=rt), [other_a, other_b])
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
