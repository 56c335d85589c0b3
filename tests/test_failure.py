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


# Issue 26 item 1, the other families (provider/array_ops.h): indexing, sorting, searching, sets,
# scans, rearrangements, statistics, linalg, fft. label -> (call, NumPy's result); an operation whose
# answer the host waits for (a count, a bound: mask count, nonzero, unique) fails at the call.
MORE_ARRAY_DISPATCHES = {
    "isin": (lambda x, y: hx.isin(x, y), lambda a, b: np.isin(a, b)),
    "gather": (lambda x, y: hx.take(x, hx.asarray([2, 0], device=x.device), axis=1),
               lambda a, b: np.take(a, [2, 0], axis=1)),
    "compress": (lambda x, y: x[x > 4], lambda a, b: a[a > 4]),
    "mask count": (lambda x, y: x[x > 4], lambda a, b: a[a > 4]),
    "sort": (lambda x, y: hx.sort(x, axis=0, descending=True), lambda a, b: -np.sort(-a, axis=0)),
    "argsort": (lambda x, y: hx.argsort(x, axis=1), lambda a, b: np.argsort(a, axis=1, kind="stable")),
    "searchsorted": (lambda x, y: hx.searchsorted(x[0], y), lambda a, b: np.searchsorted(a[0], b)),
    "nonzero": (lambda x, y: hx.nonzero(x)[1], lambda a, b: np.nonzero(a)[1]),
    "unique": (lambda x, y: hx.unique_values(x), lambda a, b: np.unique(a)),
    "cumulative_sum": (lambda x, y: hx.cumulative_sum(x, axis=1), lambda a, b: np.cumsum(a, axis=1)),
    "tril": (lambda x, y: hx.tril(x, k=1), lambda a, b: np.tril(a, k=1)),
    "median": (lambda x, y: hx.median(x, axis=1), lambda a, b: np.median(a, axis=1)),
    "histogram": (lambda x, y: hx.histogram(x, bins=3)[0], lambda a, b: np.histogram(a, bins=3)[0]),
    "correlate": (lambda x, y: hx.correlate(x[0], y[1], mode="full"),
                  lambda a, b: np.correlate(a[0], b[1], mode="full")),
    "svdvals": (lambda x, y: hx.linalg.svdvals(x), lambda a, b: np.linalg.svd(a, compute_uv=False)),
    "fft": (lambda x, y: hx.fft.fft(x, axis=1), lambda a, b: np.fft.fft(a, axis=1)),
    "index bounds": (lambda x, y: x[hx.asarray([2, 0], device=x.device)], lambda a, b: a[[2, 0]]),
    "scatter": (lambda x, y: _assigned(x, y), lambda a, b: _assigned(a.copy(), b)),
    "ufunc_at": (lambda x, y: _added_at(hx, x), lambda a, b: _added_at(np, a.copy())),
    "bincount": (lambda x, y: hx.bincount(hx.astype(x[0], hx.int64)), lambda a, b: np.bincount(a[0].astype(np.int64))),
}
# The dispatches with these labels read an array made from x (an index array, a mask, a cast), not x;
# those write x in place, whose failed writer then fails every read of it.
READ_ONLY_A_TEMPORARY = {"mask count", "index bounds", "bincount"}
WRITE_X = {"scatter", "ufunc_at"}


def _assigned(a, b):
    a[[0, 2] if isinstance(a, np.ndarray) else hx.asarray([0, 2], device=a.device)] = b[:2]
    return a


def _added_at(xp, a):
    xp.add.at(a, [0, 0, 2] if xp is np else hx.asarray([0, 0, 2], device=a.device), 1.0)
    return a


@pytest.mark.parametrize("label", sorted(MORE_ARRAY_DISPATCHES))
def test_injected_fault_reaches_every_array_family(rt, label):
    """Issue 26 item 1: the array layer's other operations are dispatches too (provider/array_ops.h),
    so rt._inject_fault(message, op) reaches each family's dispatch with that trace label: it fails
    naming it, every storage it used is poisoned (HRX §2.6), and later operations work."""
    hx_fn, np_fn = MORE_ARRAY_DISPATCHES[label]
    xs = np.array([[3, 1, 4, 1], [5, 9, 2, 6], [5, 3, 5, 8]], dtype=np.float32)
    x, y, other = (hx.asarray(v, placement=hx.Shared(rt.npu())) for v in (xs, xs[::-1] + 1, xs * 2))
    for a in (x, y, other):
        a.block_until_ready()
    rt._inject_fault("ECC error on the emulated GPU", label)
    with pytest.raises(hx.ExecutionError, match=f"injected fault in {label}: ECC error on the emulated GPU"):
        hx.to_numpy(hx_fn(x, y))
    if label in WRITE_X:
        with pytest.raises(hx.ExecutionError, match=f"injected fault in {label}"):
            hx.to_numpy(x)
    elif label not in READ_ONLY_A_TEMPORARY:
        with pytest.raises(hx.DeviceLostError, match="poisoned"):
            hx.to_numpy(x)
    got = hx.to_numpy(hx_fn(other, other))
    np.testing.assert_allclose(got, np_fn(xs * 2, xs * 2), rtol=1e-6)


def test_injected_fault_reaches_random_draws(rt):
    """Issue 26 item 1: a random draw is a dispatch (label random.uniform) like every array operation."""
    place = hx.Shared(rt.npu())
    gen = hx.random.default_rng(7)
    rt._inject_fault("ECC error on the emulated GPU", "random.uniform")
    bad = gen.random((5,), placement=place)
    with pytest.raises(hx.ExecutionError, match="injected fault in random.uniform"):
        hx.to_numpy(bad)
    again = hx.random.default_rng(7).random((5,), placement=place)
    np.testing.assert_array_equal(hx.to_numpy(again), hx.to_numpy(hx.random.default_rng(7).random((5,))))
