"""Memory safety of the entry points that take sizes, strides and offsets (issue 14).

Each reproducer that crashed the interpreter before the fix (segfault, SIGFPE,
abort) runs in a subprocess with a timeout, so that a regression fails its
test instead of killing pytest. Layout checks are compared against a
plain-Python model with exact integers (no overflow), with Hypothesis where
the inputs vary.
"""

import gc
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

import hrxarray as hx
from hrxarray import _core
from test_dlpack_core import HandMade

INT64_MAX = 2**63 - 1


def run_isolated(code, tmp_path):
    """Run `code` in a fresh interpreter; returns its stdout. A crash or a hang fails the test."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)  # cwd outside the source tree
    assert proc.returncode == 0, f"the interpreter died (return code {proc.returncode}):\n{proc.stderr}"
    return proc.stdout


# --- zero-copy NumPy views whose lease is refused ------------------------------------------------


def test01_refused_zero_copy_view_under_a_write_guard_raises_and_leaves_no_lease(tmp_path):
    out = run_isolated(
        """
        import numpy as np, hrxarray as hx
        x = hx.asarray(np.arange(4.0))
        with x.map_write():
            try:
                np.asarray(x, copy=False)
            except hx.BusyError as e:
                print("BusyError", "write mapping" in str(e))
        print("leases", x.buffer._state()["host_leases"])
        v = np.asarray(x, copy=False)  # the guard is gone: the view works again
        print("view", v.tolist())
        """,
        tmp_path,
    )
    assert out.split("\n")[:3] == ["BusyError True", "leases 0", "view [0.0, 1.0, 2.0, 3.0]"]


@pytest.mark.parametrize("index", ["[0:0]", "[2:2]", "[:]", "[1:3]"])
def test02_zero_copy_view_of_poisoned_storage_raises_device_lost(tmp_path, index):
    out = run_isolated(
        f"""
        import numpy as np, hrxarray as hx
        rt = hx.default_runtime()
        x = hx.asarray(np.arange(4, dtype=np.int32), placement=hx.HostVisible())
        # a device fault in a graph that uses x's storage poisons it (HRX: every storage of the graph)
        k = hx.kernels.gpu("transform_i32", elements=4)
        g = rt.graph()
        g.gpu(k, [x.buffer, rt.allocate(16, hx.HostVisible())])
        k._inject_fault("boom")
        assert g.prepare().submit().exception() is not None
        try:
            np.asarray(x{index}, copy=False)
        except hx.DeviceLostError as e:
            print("DeviceLostError", "poisoned" in str(e))
        print("leases", x.buffer._state()["host_leases"])
        """,
        tmp_path,
    )
    assert out.split("\n")[:2] == ["DeviceLostError True", "leases 0"]


# --- array views (reshape, transpose, view(dtype) all end in _view) ------------------------------


def view_fits(nbytes, offset, shape, strides, itemsize):
    """Plain-Python model of a valid view: exact integers, NumPy's size limit."""
    bound = 16
    for n in shape:
        bound *= max(n, 1)
    if bound > INT64_MAX or offset < 0 or any(s % itemsize for s in strides):
        return False
    if 0 in shape:
        return True
    lo = offset + sum((n - 1) * s for n, s in zip(shape, strides) if s < 0)
    hi = offset + sum((n - 1) * s for n, s in zip(shape, strides) if s > 0) + itemsize
    return lo >= 0 and hi <= nbytes


def test03_view_whose_extent_wraps_is_refused_before_any_read(tmp_path):
    # (5 - 1) * 2**62 wraps to 0 in int64: the view used to pass the bounds
    # check and reading it crashed.
    out = run_isolated(
        """
        import numpy as np, hrxarray as hx
        x = hx.asarray(np.arange(4, dtype=np.float32))
        for shape, strides in [((5,), (1 << 62,)), ((3, 5), (4, 1 << 62)), ((5,), (-(1 << 62),))]:
            try:
                v = x._view(0, shape, strides)
                print("accepted", hx.to_numpy(v))
            except ValueError as e:
                print("ValueError", "reaches outside its buffer" in str(e))
        """,
        tmp_path,
    )
    assert out.split("\n")[:3] == ["ValueError True"] * 3


huge_or_small = st.one_of(st.integers(0, 6), st.integers(0, 2**62), st.sampled_from([2**31, 2**32 + 1, 2**61, 2**62 + 1]))
# Element strides; times the itemsize 4 they stay within int64.
stride_values = st.one_of(st.integers(-8, 8), st.integers(-(2**61) + 1, 2**61 - 1),
                          st.sampled_from([2**60, -(2**60), 2**61 - 1, -(2**61) + 1]))


@given(offset=st.one_of(st.integers(0, 64), st.integers(0, INT64_MAX)),
       dims=st.lists(st.tuples(huge_or_small, stride_values), min_size=1, max_size=4))
def test04_view_layouts_match_the_exact_model(offset, dims):
    x = hx.asarray(np.arange(8, dtype=np.float32))  # 32 bytes
    shape = tuple(n for n, _ in dims)
    strides = tuple(s * 4 for _, s in dims)
    if view_fits(32, offset, shape, strides, 4):
        event("accepted")
        v = x._view(offset, shape, strides)
        if 0 < v.size <= 4096:  # stride-0 views of 2**40 elements fit in 32 bytes: never read those
            want = np.lib.stride_tricks.as_strided(np.arange(8, dtype=np.float32)[offset // 4:], shape,
                                                   strides) if offset % 4 == 0 else None
            if want is not None:
                np.testing.assert_array_equal(hx.to_numpy(v), want)
    else:
        with pytest.raises(ValueError):
            x._view(offset, shape, strides)


# --- DLPack import ----------------------------------------------------------------------------------


def import_fits(data, byte_offset, shape, strides, itemsize=4):
    """Plain-Python model of an importable capsule (nonnegative strides): exact integers."""
    bound = 16
    for n in shape:
        bound *= max(n, 1)
    if bound > INT64_MAX:
        return False
    if any(abs(s * itemsize) > INT64_MAX for s in strides):
        return False
    if 0 in shape:
        return True
    end = byte_offset + (sum((n - 1) * s for n, s in zip(shape, strides)) + 1) * itemsize
    return end <= INT64_MAX and data + end < 2**64


OVERFLOWING_CAPSULES = {
    # byte_offset + extent wraps: used to import with offset -8 and read before the data
    "byte_offset": ((1 << 64) - 8, (4,), None),
    "byte_offset_int64": (1 << 63, (4,), (1,)),
    # the element count wraps to 4: shape x strides passed every check
    "element_count": (0, ((1 << 62) + 1, 4), (0, 1)),
    # sum of (n - 1) * stride wraps the 128-bit accumulator to a 16-byte extent
    "extent_sum": (0, [(1 << 62) + 1] * 8 + [9, 4], [(1 << 63) - 1] * 8 + [1 << 62, 1]),
    # a stride in elements whose byte stride overflows
    "byte_stride": (0, (2,), (1 << 62,)),
    # NULL strides (compact row-major) over a shape whose products overflow
    "null_strides": (0, (1 << 62, 4), None),
}


@pytest.mark.parametrize("case", OVERFLOWING_CAPSULES)
def test05_overflowing_capsules_are_refused_and_left_to_their_producer(rt, case):
    byte_offset, shape, strides = OVERFLOWING_CAPSULES[case]
    x = np.arange(16, dtype=np.float32)
    p = HandMade(x, byte_offset=byte_offset, shape=shape, strides=strides)
    assert not import_fits(x.ctypes.data, byte_offset, shape, strides or [1] * len(shape))
    cap = p.capsule()
    before = rt.statistics()
    with pytest.raises(ValueError, match="DLPack import: .*(overflows|too big)"):
        _core._dlpack_import(cap, rt)
    with pytest.raises(ValueError, match="DLPack import"):
        hx.from_dlpack(p.capsule())
    # Refused before taking ownership: the capsule keeps its name, the
    # producer's deleter is not called, the runtime counted nothing.
    assert "used" not in repr(cap)
    gc.collect()
    assert p.deleted == 0
    after = rt.statistics()
    assert (after.imports, after.live_bytes) == (before.imports, before.live_bytes)


@given(byte_offset=st.one_of(st.integers(0, 64).map(lambda n: n * 4), st.integers(0, 2**64 - 1)),
       dims=st.lists(st.tuples(huge_or_small, st.one_of(st.integers(0, 6), st.integers(0, 2**63 - 1))),
                     min_size=1, max_size=3))
def test06_import_layouts_match_the_exact_model(byte_offset, dims):
    x = np.arange(16, dtype=np.float32)
    shape = [n for n, _ in dims]
    strides = [s for _, s in dims]
    p = HandMade(x, byte_offset=byte_offset, shape=shape, strides=strides)
    if import_fits(x.ctypes.data, byte_offset, shape, strides):
        b, offset, got_shape, got_strides, _, _ = _core._dlpack_import(p.capsule())
        assert (got_shape, got_strides) == (tuple(shape), tuple(strides))
        if 0 not in shape:
            extent = (sum((n - 1) * s for n, s in zip(shape, strides)) + 1) * 4
            assert (offset, b.nbytes) == (byte_offset, byte_offset + extent)
        del b
        assert p.deleted == 1
        event("accepted")
    else:
        with pytest.raises(ValueError, match="DLPack import"):
            _core._dlpack_import(p.capsule())
        assert p.deleted == 0


def test07_exports_stay_inside_their_buffer(rt):
    # Views at the edges of int64 (steps of 2**62, broadcasts to the largest sizes, reversed and empty ones)
    # export capsules whose exact extent (Python integers, no wrapping) lies inside the array's buffer.
    x = hx.asarray(np.arange(8.0), placement=hx.Shared(rt.npu()))
    base = _core._dlpack_describe(x.__dlpack__(max_version=(1, 0)))["data"]
    views = [x, x[1:], x[::-1], x[7:], x[8:], x[::2**62], x[2**62:], x[-1::-(2**62)], x[::3][::-1],
             hx.broadcast_to(x[3], ((1 << 59) - 1,)), hx.broadcast_to(x[None, 1:], (2**40, 7)),
             hx.broadcast_to(x[::-2][:, None], (4, 1 << 56))]
    for v in views:
        d = _core._dlpack_describe(v.__dlpack__(max_version=(1, 0)))
        assert d["shape"] == v.shape
        if 0 in d["shape"]:
            continue
        strides = d["strides"] or ()
        lo = sum((n - 1) * s for n, s in zip(d["shape"], strides) if s < 0)
        hi = sum((n - 1) * s for n, s in zip(d["shape"], strides) if s > 0)
        assert base <= d["data"] + 8 * lo and d["data"] + 8 * (hi + 1) <= base + 64, (v.shape, v.strides)
    gc.collect()
    assert x.buffer._state()["host_leases"] == 0


# --- raw kernel entries --------------------------------------------------------------------------------


@pytest.mark.parametrize("entry", ["matmul_bf16", "_matmul_typed"])
def test08_raw_matmul_sizes_that_overflow_are_refused(tmp_path, entry):
    # m * k = 4 * 2**62 wrapped to 0 (SIGFPE in the kernel's blocking); 3 * (3**-1 mod 2**64) wrapped
    # to 1 (the kernel read far outside a: abort or segfault).
    out = run_isolated(
        f"""
        import numpy as np
        from hrxarray._core import numerics as N
        inv3 = pow(3, -1, 1 << 64)
        cases = [(4, 1 << 62, 4, 0, 0, 16), (3, inv3, 3, 1, 1, 9), (1 << 33, 1 << 31, 1, 0, 0, 0),
                 (1, 1 << 40, 1 << 40, 0, 0, 1 << 40)]
        for m, k, n, na, nb, nc in cases:
            try:
                if "{entry}" == "matmul_bf16":
                    N.matmul_bf16(np.zeros(na, np.uint16), np.zeros(nb, np.uint16), np.zeros(min(nc, 64), np.float32),
                                  m, k, n)
                else:
                    N._matmul_typed(np.zeros(4 * na, np.uint8), np.zeros(4 * nb, np.uint8),
                                    np.zeros(4 * min(nc, 64), np.uint8), "float32", "float32", m, k, n)
                print("accepted")
            except ValueError as e:
                print(str(e).split(" (")[0])
        """,
        tmp_path,
    )
    assert out.split("\n")[:4] == [f"{entry}: m * k overflows"] * 3 + [f"{entry}: k * n overflows"]


def test09_raw_matmul_valid_sizes_still_work():
    n = _core.numerics
    a = np.array([0x3F80, 0x4000], np.uint16)  # bf16 1, 2
    b = np.array([0x4040, 0x4080], np.uint16)  # bf16 3, 4
    c = np.zeros(1, np.float32)
    n.matmul_bf16(a, b, c, 1, 2, 1)
    assert c[0] == 1 * 3 + 2 * 4
    c = np.full(4, 7, np.float32)
    n.matmul_bf16(np.zeros(0, np.uint16), np.zeros(0, np.uint16), c, 2, 0, 2)  # k = 0: zeros
    assert not c.any()


# --- allocation failures ---------------------------------------------------------------------------


@pytest.mark.parametrize("placement", ["HostVisible", "GpuLocal", "Shared"])
def test10_allocation_failure_names_bytes_and_placement_and_changes_nothing(placement):
    from helpers import make_placement

    budget = hx.MemoryBudget(1 << 62)
    rt = hx.Runtime(memory_budget=budget)
    place = make_placement(placement, rt)
    before = rt.statistics()
    nbytes = 1 << 61  # 2 EiB: more than any address space, so the host always refuses it
    with pytest.raises(MemoryError, match=re.escape(f"{nbytes} bytes (2.0 EiB) of {place!r}")):
        rt.allocate(nbytes, place)
    with pytest.raises(MemoryError, match=rf"empty of shape \({nbytes // 8},\), float64: .*{nbytes} bytes"):
        hx.empty((nbytes // 8,), dtype=hx.float64, placement=place)
    after = rt.statistics()
    assert (after.allocations, after.live_bytes, after.peak_bytes) == (
        before.allocations, before.live_bytes, before.peak_bytes)
    assert budget.used == 0
    assert rt.allocate(64, place).nbytes == 64  # the runtime is intact


# --- buffer views ------------------------------------------------------------------------------------


@pytest.mark.parametrize("args", [(-(2**63),), (-(2**63), 4), (INT64_MAX,), (8, INT64_MAX), (INT64_MAX, INT64_MAX)])
def test11_buffer_views_at_the_int64_extremes_are_out_of_bounds(rt, args):
    buf = rt.allocate(64, hx.HostVisible())
    with pytest.raises(ValueError, match="out of bounds"):
        buf.view(*args)
    with pytest.raises(ValueError, match="out of bounds"):
        buf.view(8).slice(*args)
    assert buf.view(60).length == 4 and buf.view(8).slice(52).length == 4
