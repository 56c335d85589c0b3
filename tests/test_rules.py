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


def failure_of(completion):
    assert completion.wait(T)
    exc = completion.exception()
    assert isinstance(exc, hx.ExecutionError)
    return exc


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
    npu = rt.npu()
    art = hx.kernels.npu("gemm", **{"gemm.bfp16": 1})
    k = npu.load_artifact(art, 1, art.contract)
    a, b, c = (rt.allocate(n, hx.Shared(npu)) for n in (128, 128, 256))
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
