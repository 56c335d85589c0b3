"""Allocation, views, aliases, adoption and the statistics they move."""

import gc

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import hrxarray as hx

ISIZE_MAX = 2**63 - 1


def stats(rt):
    return rt.statistics().as_dict()


def test_allocation_is_zero_filled_and_counted(rt, placement):
    before = stats(rt)
    buf = rt.allocate(1000, placement)
    after = stats(rt)
    assert buf.nbytes == 1000
    assert after["allocations"] == before["allocations"] + 1
    assert after["imports"] == before["imports"] + (1 if isinstance(placement, hx.Shared) else 0)
    assert after["live_bytes"] == before["live_bytes"] + 1000
    assert after["peak_bytes"] >= after["live_bytes"]
    if placement.host_mapped:
        with buf.map_read() as v:
            assert v.shape == (1000,) and v.dtype == np.uint8
            assert not v.any()
            # 64-byte alignment of the storage itself
            assert v.__array_interface__["data"][0] % 64 == 0


def test_large_allocations_are_zero_filled(rt, npu):
    buf = rt.allocate(3 << 20, hx.Shared(npu))
    with buf.map_read() as v:
        assert not v.any()
        assert v.__array_interface__["data"][0] % 64 == 0


@pytest.mark.parametrize("nbytes", [0, -1, ISIZE_MAX + 1])
def test_bad_sizes_are_value_errors_and_change_nothing(rt, npu, nbytes):
    before = stats(rt)
    with pytest.raises((ValueError, OverflowError), match="1..=isize::MAX|int"):
        rt.allocate(nbytes, hx.Shared(npu))
    assert stats(rt) == before


def test_allocation_failure_is_memory_error_and_changes_nothing(rt, npu):
    before = stats(rt)
    with pytest.raises(MemoryError):
        rt.allocate(ISIZE_MAX, hx.Shared(npu))
    assert stats(rt) == before


def test_placement_of_another_runtime_is_rejected(rt):
    other = hx.Runtime()
    before = stats(rt)
    with pytest.raises(ValueError, match="another runtime"):
        rt.allocate(64, hx.Shared(other.npu()))
    assert stats(rt) == before


def test_placement_must_be_a_placement(rt):
    with pytest.raises(TypeError):
        rt.allocate(64, "Shared")


def test_live_bytes_fall_when_the_last_handle_goes(rt, npu):
    buf = rt.allocate(4096, hx.Shared(npu))
    alias = buf.clone()
    view = buf.view(16, 32)
    peak = stats(rt)["peak_bytes"]
    del buf
    gc.collect()
    assert stats(rt)["live_bytes"] == 4096
    del alias
    gc.collect()
    assert stats(rt)["live_bytes"] == 4096, "a view keeps the storage alive"
    del view
    gc.collect()
    assert stats(rt)["live_bytes"] == 0
    assert stats(rt)["peak_bytes"] == peak


def test_clone_shares_storage(rt, npu):
    buf = rt.allocate(64, hx.Shared(npu))
    alias = buf.clone()
    assert alias is not buf and alias.same_storage(buf)
    assert not rt.allocate(64, hx.Shared(npu)).same_storage(buf)
    with buf.map_write() as v:
        v[3] = 7
    with alias.map_read() as v:
        assert v[3] == 7
    assert stats(rt)["allocations"] == 2


@given(
    size=st.integers(1, 512),
    offset=st.integers(-4, 600),
    length=st.one_of(st.none(), st.integers(-4, 600)),
    sub_offset=st.integers(-4, 600),
    sub_length=st.one_of(st.none(), st.integers(-4, 600)),
)
def test_views_and_slices_follow_bounds(size, offset, length, sub_offset, sub_length):
    rt = hx.Runtime()
    buf = rt.allocate(size, hx.HostVisible())
    # Model: a view is [offset, offset+length) of the parent, length defaults to the rest.
    want_len = (size - offset) if length is None else length
    ok = offset >= 0 and want_len >= 0 and offset + want_len <= size
    if not ok:
        with pytest.raises(ValueError, match="buffer view is out of bounds"):
            buf.view(offset, length)
        return
    v = buf.view(offset, length)
    assert (v.offset, v.length, len(v)) == (offset, want_len, want_len)
    assert v.buffer.same_storage(buf)
    sub_len = (want_len - sub_offset) if sub_length is None else sub_length
    sub_ok = sub_offset >= 0 and sub_len >= 0 and sub_offset + sub_len <= want_len
    if not sub_ok:
        with pytest.raises(ValueError, match="buffer view is out of bounds"):
            v.slice(sub_offset, sub_length)
        return
    s = v.slice(sub_offset, sub_length)
    assert (s.offset, s.length) == (offset + sub_offset, sub_len)


@pytest.mark.parametrize("source_placement", [hx.GpuLocal(), hx.HostVisible()])
def test_adopt_gpu_buffer_into_shared(rt, npu, source_placement):
    src = rt.allocate(256, source_placement)
    before = stats(rt)
    alias = rt.adopt(src, hx.Shared(npu))
    after = stats(rt)
    assert alias.placement == hx.Shared(npu)
    assert alias.same_storage(src)
    assert after["imports"] == before["imports"] + 1
    assert after["allocations"] == before["allocations"]
    assert after["live_bytes"] == before["live_bytes"], "adoption is not charged twice"
    assert alias.visibility(rt.gpu(), npu).shared_backing_reachable


def test_adopted_alias_retains_the_source_and_shares_state(rt, npu):
    src = rt.allocate(128, hx.HostVisible())
    alias = rt.adopt(src, hx.Shared(npu))
    with src.map_write() as v:
        v[:4] = [1, 2, 3, 4]
        with pytest.raises(hx.BusyError):
            alias.try_map_read()
    with alias.map_read() as v:
        assert list(v[:4]) == [1, 2, 3, 4]
    with src._device_lease(hx.Access.WRITE):
        with pytest.raises(hx.BusyError, match="device use"):
            alias.try_map_read()
    src._poison("boom")
    with pytest.raises(hx.DeviceLostError, match="boom"):
        alias.map_read()
    del src
    gc.collect()
    assert stats(rt)["live_bytes"] == 128


def test_adoption_makes_storage_need_host_maintenance(rt, npu):
    src = rt.allocate(64, hx.HostVisible())
    assert src._state()["needs_host_maintenance"] is False
    assert src.prepare_acquire_host().transition.kind == "none"
    alias = rt.adopt(src, hx.Shared(npu))
    assert src._state()["needs_host_maintenance"] is True
    # The NPU now writes this storage: host accesses through either handle must invalidate.
    for handle in (src, alias):
        assert handle.prepare_acquire_host().transition.kind == "range"
        assert handle.prepare_release_host().transition.kind == "range"


def test_adopt_rules(rt, npu):
    gpu_local = rt.allocate(64, hx.GpuLocal())
    npu_local = rt.allocate(64, hx.NpuLocal(npu))
    shared = rt.allocate(64, hx.Shared(npu))
    before = stats(rt)
    with pytest.raises(hx.UnsupportedError, match="adoption requires GpuLocal or Shared placement"):
        rt.adopt(gpu_local, hx.HostVisible())
    with pytest.raises(hx.UnsupportedError, match="adoption requires GpuLocal or Shared placement"):
        rt.adopt(gpu_local, hx.NpuLocal(npu))
    with pytest.raises(hx.UnsupportedError, match="GPU buffers"):
        rt.adopt(npu_local, hx.Shared(npu))
    with pytest.raises(ValueError, match="another runtime"):
        hx.Runtime().adopt(gpu_local, hx.Shared(npu))
    with pytest.raises(ValueError, match="another runtime"):
        rt.adopt(gpu_local, hx.Shared(hx.Runtime().npu()))
    assert stats(rt) == before
    # Already reachable by every requested device: the source itself serves.
    same = rt.adopt(shared, hx.Shared(npu))
    assert same.same_storage(shared) and stats(rt) == before
    gpu_again = rt.adopt(gpu_local, hx.GpuLocal())
    assert gpu_again.same_storage(gpu_local) and stats(rt) == before
    gpu_local._poison("lost")
    with pytest.raises(hx.DeviceLostError, match="lost"):
        rt.adopt(gpu_local, hx.Shared(npu))


def test_memory_budget_charges_allocations(npu):
    budget = hx.MemoryBudget(1000)
    rt = hx.Runtime(memory_budget=budget)
    npu = rt.npu()
    assert rt.memory_budget is budget
    a = rt.allocate(600, hx.Shared(npu))
    assert budget.used == 600
    with pytest.raises(ValueError, match="exceed the whole memory budget"):
        rt.allocate(1001, hx.Shared(npu))
    before = stats(rt)
    with pytest.raises(hx.BusyError, match="memory budget exhausted"):
        rt.allocate(500, hx.Shared(npu))
    assert stats(rt) == before and budget.used == 600
    alias = rt.adopt(rt.allocate(100, hx.HostVisible()), hx.Shared(npu))
    assert budget.used == 700, "an adopted alias is not charged twice"
    del a
    gc.collect()
    assert budget.used == 100
    del alias
    gc.collect()
    assert budget.used == 0


def test_memory_budget_reservations():
    budget = hx.MemoryBudget(100)
    with budget.reserve(60) as r:
        assert r.bytes == 60 and r.active and budget.used == 60
        with pytest.raises(hx.BusyError):
            budget.reserve(41)
    assert budget.used == 0 and not r.active
    r.release()
    assert budget.used == 0
    with pytest.raises(ValueError):
        budget.reserve(101)
    with pytest.raises(ValueError, match="nonnegative"):
        budget.reserve(-1)
    with pytest.raises(ValueError):
        hx.MemoryBudget(0)
    assert budget.limit == 100


def test_buffer_repr_names_id_placement_and_size(rt, npu):
    buf = rt.allocate(4096, hx.Shared(npu))
    assert repr(buf).startswith("Buffer#") and "Shared(npu:0)" in repr(buf) and "4096 bytes" in repr(buf)
