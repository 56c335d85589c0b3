"""Host transfer and copies into arrays (ext/core/array/host_transfer, copy, creation) against NumPy:
uploads of strided host data into every placement, downloads, copies with broadcasting and conversion,
and refusals that allocate nothing."""

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import hrxarray as hx

PLACEMENTS = {"Shared": lambda rt: hx.Shared(rt.npu()), "HostVisible": lambda rt: hx.HostVisible(),
              "GpuLocal": lambda rt: hx.GpuLocal()}
DTYPES = [np.dtype(t) for t in (bool, np.int8, np.uint16, np.int64, np.float16, np.float32, np.complex128)]


@given(a=hnp.arrays(st.sampled_from(DTYPES), hnp.array_shapes(min_dims=0, max_dims=3, max_side=5)),
       step=st.integers(-2, 2).filter(bool), place=st.sampled_from(sorted(PLACEMENTS)),
       to=st.sampled_from([None, np.dtype(np.complex128)]))
def test_upload_and_download_match_numpy(a, step, place, to):
    """asarray of a strided (or reversed) host view, converted to `to` (casts themselves are tested in
    test_array_semantics; complex128 holds every source exactly), then to_numpy."""
    view = a[..., ::step] if a.ndim else a
    x = hx.asarray(view, dtype=to, placement=PLACEMENTS[place](hx.default_runtime()))
    want = view.astype(to) if to is not None else view
    assert x.shape == want.shape and x.dtype == want.dtype
    np.testing.assert_array_equal(hx.to_numpy(x), want)
    np.testing.assert_array_equal(hx.to_numpy(x, dtype=np.complex128), want.astype(np.complex128))


@given(dst_shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=4), data=st.data(),
       kind=st.sampled_from(["host", "device", "scalar"]), place=st.sampled_from(sorted(PLACEMENTS)))
def test_copies_into_arrays_broadcast_and_convert_as_numpy_assigns(dst_shape, data, kind, place):
    drop = data.draw(st.integers(0, len(dst_shape)))  # trailing axes kept, each its length or 1
    src_shape = tuple(data.draw(st.sampled_from([1, d])) for d in dst_shape[drop:])
    src = data.draw(hnp.arrays(np.int16, src_shape, elements=st.integers(-300, 300)))
    want = np.zeros(dst_shape, np.float32)
    x = hx.zeros(dst_shape, np.float32, placement=PLACEMENTS[place](hx.default_runtime()))
    value = {"host": src, "device": hx.asarray(src), "scalar": int(src.flat[0]) if src.size else 7}[kind]
    want[...] = value if kind != "device" else src
    x[...] = value
    np.testing.assert_array_equal(hx.to_numpy(x), want)
    np.testing.assert_array_equal(hx.to_numpy(hx.full(dst_shape, value, dtype=np.float32)), want)


def test_an_overlapping_source_is_read_before_it_is_written():
    a = np.arange(10.0)
    x = hx.asarray(a)
    x[1:] = x[:-1]
    a[1:] = a[:-1]
    np.testing.assert_array_equal(hx.to_numpy(x), a)


def test_refused_copies_and_creations_allocate_nothing(rt):
    other = hx.Runtime()
    y = hx.asarray(np.arange(3.0), placement=hx.Shared(rt.npu()))
    z = hx.asarray(np.arange(3.0), placement=hx.Shared(other.npu()))
    before, before_other = rt.statistics().allocations, other.statistics().allocations
    cases = [
        (ValueError, "could not broadcast input array from shape \\(4,\\)", lambda: y.__setitem__(..., np.ones(4))),
        (ValueError, "belongs to another runtime", lambda: y.__setitem__(..., z)),
        (ValueError, "full_like: could not broadcast", lambda: hx.full_like(y, np.ones(4))),
        (ValueError, "to: Shared\\(npu:0\\) names an NPU of another runtime", lambda: y.to(hx.Shared(other.npu()))),
        (ValueError, "astype: .* names an NPU of another runtime",
         lambda: hx.astype(y, np.float32, device=hx.Shared(other.npu()))),
        (TypeError, "to: placement must be", lambda: y.to(None)),
        (TypeError, "like must be a DeviceArray", lambda: hx._core._full((3,), 1, np.float32, None, "full", 5)),
    ]
    for exc, text, call in cases:
        with pytest.raises(exc, match=text):
            call()
    assert rt.statistics().allocations == before  # a refused call allocates nothing
    assert other.statistics().allocations == before_other
    np.testing.assert_array_equal(hx.to_numpy(y), np.arange(3.0))


def test_a_read_only_destination_is_refused_before_host_data_is_staged():
    ro = np.arange(3.0)
    ro.setflags(write=False)
    x = hx.from_dlpack(ro)
    assert x._readonly
    rt = hx.default_runtime()
    before = rt.statistics().allocations
    with pytest.raises(ValueError, match="read-only import"):
        x[...] = np.ones(3)
    assert rt.statistics().allocations == before
    np.testing.assert_array_equal(ro, np.arange(3.0))
