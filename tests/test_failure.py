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


ARRAY_DISPATCHES = {
    "add": (lambda x, y: hx.add(x, y), lambda a, b: a + b),
    "astype": (lambda x, y: x.astype(hx.float64), lambda a, b: a.astype(np.float64)),
    "copy": (lambda x, y: x.copy(), lambda a, b: a.copy()),
    "sum": (lambda x, y: hx.sum(x, axis=0), lambda a, b: a.sum(axis=0)),
    "argmax": (lambda x, y: hx.argmax(x, axis=1), lambda a, b: a.argmax(axis=1)),
    "matmul": (lambda x, y: hx.matmul(x, y.T), lambda a, b: a @ b.T),
}


@pytest.mark.parametrize("label", sorted(ARRAY_DISPATCHES))
def test_injected_fault_in_an_array_dispatch_is_a_device_fault(rt, label):
    """Issue 26 item 1: elementwise, copy-cast, reduce and matmul operations are dispatches on a lane's queue,
    so a fault armed with rt._inject_fault(message, op) reaches them as Kernel._inject_fault reaches
    kernels: the one dispatch with that trace label fails naming it, every storage it used is poisoned
    (HRX §2.6), and unrelated arrays and later operations (the fault disarmed) work."""
    hx_fn, np_fn = ARRAY_DISPATCHES[label]
    xs = np.arange(12, dtype=np.float32).reshape(3, 4)
    x, y, other = (hx.asarray(v, placement=hx.Shared(rt.npu())) for v in (xs, xs + 1, xs * 2))
    for a in (x, y, other):
        a.block_until_ready()
    with pytest.raises(ValueError, match="op"):
        rt._inject_fault("nothing", "")
    rt._inject_fault("ECC error on the emulated GPU", label)
    with pytest.raises(hx.BusyError, match="already armed"):
        rt._inject_fault("a second fault", label)
    unrelated = hx.negative(other)  # another label does not take the fault
    bad = hx_fn(x, y)
    with pytest.raises(hx.ExecutionError, match=f"injected fault in {label}: ECC error on the emulated GPU"):
        hx.to_numpy(bad)
    with pytest.raises(hx.DeviceLostError, match="poisoned"):
        hx.to_numpy(x)
    np.testing.assert_array_equal(hx.to_numpy(unrelated), -xs * 2)
    np.testing.assert_array_equal(hx.to_numpy(hx_fn(other, other)), np_fn(xs * 2, xs * 2))
