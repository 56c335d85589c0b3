"""Host visibility preparation: HRX's range rules (reference §1.6).

`buf.prepare_release_host(ranges)` / `buf.prepare_acquire_host(ranges)` check
every range first (start > end or end > len → ValueError "visibility range out
of bounds"), drop empty ranges, sort by start, merge a range into the previous
one when previous.end >= next.start, and collapse a non-empty result to the
whole buffer when the host recipe is 'none' or 'global'. The tests compare the
implementation with two independent plain-Python references: a literal
transcription of that rule, and a byte-coverage bitmap (the merged ranges are
the maximal runs of covered bytes).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hrxarray as hx

# --------------------------------------------------------------------------
# fixtures and helpers

# rt and npu fixtures: tests/conftest.py


PLACEMENTS = ["HostVisible", "NpuLocal", "Shared"]

# HRX: host cache maintenance is skipped only for coherent, GPU-only backing
# (HostVisible); storage the NPU can reach needs explicit ranged maintenance.
EXPECTED_KIND = {"HostVisible": "none", "NpuLocal": "range", "Shared": "range", "Adopted": "range"}


def make_buffer(rt, name, nbytes):
    npu = rt.npu()
    if name == "HostVisible":
        return rt.allocate(nbytes, hx.HostVisible())
    if name == "NpuLocal":
        return rt.allocate(nbytes, hx.NpuLocal(npu))
    if name == "Shared":
        return rt.allocate(nbytes, hx.Shared(npu))
    if name == "Adopted":  # a HostVisible buffer shared with the NPU (dma-buf alias)
        return rt.adopt(rt.allocate(nbytes, hx.HostVisible()), hx.Shared(npu))
    raise AssertionError(name)


def prepare(buf, which, ranges):
    fn = buf.prepare_release_host if which == "release" else buf.prepare_acquire_host
    return fn(ranges)


class RefError(Exception):
    """The reference model says the call must fail with ValueError."""


def as_pair(r):
    """(start, end) of a tuple/list/range, or RefError for malformed items."""
    if isinstance(r, range):
        if r.step != 1:
            raise RefError("step")
        start, end = r.start, r.stop
    else:
        if len(r) != 2:
            raise RefError("arity")
        start, end = r
    if start < 0 or end < 0:
        raise RefError("negative")
    return start, end


def ref_merge(ranges, length, kind):
    """HRX's rule, transcribed literally from the reference text."""
    if ranges is None:
        return [(0, length)]
    pairs = [as_pair(r) for r in ranges]
    for start, end in pairs:  # every range is checked before anything else
        if start > end or end > length:
            raise RefError("out of bounds")
    kept = sorted(((s, e) for s, e in pairs if s < e), key=lambda p: p[0])
    merged: list[list[int]] = []
    for s, e in kept:
        if merged and merged[-1][1] >= s:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    if merged and kind in ("none", "global"):
        return [(0, length)]
    return [(s, e) for s, e in merged]


def ref_coverage(pairs, length):
    """Maximal runs of bytes covered by any range (a second, structural reference)."""
    covered = bytearray(length + 1)  # sentinel 0 at the end closes the last run
    for s, e in pairs:
        for i in range(s, e):
            covered[i] = 1
    runs, start = [], None
    for i, c in enumerate(covered):
        if c and start is None:
            start = i
        elif not c and start is not None:
            runs.append((start, i))
            start = None
    return runs


def stats(rt):
    return rt.statistics().as_dict()


# --------------------------------------------------------------------------
# strategies


@st.composite
def range_items(draw, length):
    """One range item over a buffer of `length` bytes, of every interesting shape."""
    shape = draw(st.sampled_from(["inside", "inside", "inside", "empty", "touching_end", "reversed", "beyond"]))
    if shape == "inside":
        a = draw(st.integers(0, length))
        b = draw(st.integers(a, length))
    elif shape == "empty":
        a = b = draw(st.integers(0, length))
    elif shape == "touching_end":
        a, b = draw(st.integers(0, length)), length
    elif shape == "reversed":
        b = draw(st.integers(0, length - 1))
        a = draw(st.integers(b + 1, length))
    else:  # end beyond the buffer (start may be too)
        a = draw(st.integers(0, length + 8))
        b = draw(st.integers(max(a, length + 1), length + 64))
    form = draw(st.sampled_from(["tuple", "list", "range"]))
    if form == "range":
        return range(a, b)
    return (a, b) if form == "tuple" else [a, b]


@st.composite
def range_lists(draw, length, max_size=8):
    items = draw(st.lists(range_items(length), max_size=max_size))
    # Make adjacency and overlap frequent: chain some ranges end-to-start.
    if items and draw(st.booleans()):
        s, e = as_pair(items[-1])
        if s <= e <= length:
            stop = draw(st.integers(e, length))
            items.append((e, stop))
    return items


# --------------------------------------------------------------------------
# the reference model agrees with HRX's worked examples


def test_reference_model_matches_the_worked_examples():
    assert ref_merge([(8, 16), (0, 4), (3, 10), (24, 32), (16, 16)], 32, "range") == [(0, 16), (24, 32)]
    quad = [(0, 16), (8, 32), (32, 64), (256, 320)]
    assert len(ref_merge(quad, 512, "range")) == 2
    assert len(ref_merge(quad, 512, "none")) == 1
    assert ref_coverage([(8, 16), (0, 4), (3, 10), (24, 32)], 32) == [(0, 16), (24, 32)]


# --------------------------------------------------------------------------
# property tests against the references


@settings(max_examples=200, deadline=None)
@given(
    data=st.data(),
    name=st.sampled_from(PLACEMENTS + ["Adopted"]),
    which=st.sampled_from(["release", "acquire"]),
    length=st.integers(1, 600),
)
def test_merge_matches_reference(data, name, which, length):
    rt = hx.Runtime()
    buf = make_buffer(rt, name, length)
    ranges = data.draw(range_lists(length), label="ranges")
    kind = EXPECTED_KIND[name]
    before = stats(rt)
    state_before = buf._state()
    try:
        expected = ref_merge(ranges, length, kind)
    except RefError:
        with pytest.raises(ValueError, match="visibility range"):
            prepare(buf, which, ranges)
        assert stats(rt) == before
        assert buf._state() == state_before
        return

    prepared = prepare(buf, which, ranges)
    assert prepared.transition.kind == kind
    assert prepared.ranges == expected
    assert all(isinstance(r, tuple) for r in prepared.ranges)
    assert prepared.operation_count == len(expected)
    if kind == "range":
        assert prepared.ranges == ref_coverage([as_pair(r) for r in ranges], length)
    # Preparing performs nothing.
    assert stats(rt) == before

    prepared.execute()
    maintained = sum(e - s for s, e in expected) if kind == "range" else 0
    after = stats(rt)
    assert after["cache_maintenance_bytes"] - before["cache_maintenance_bytes"] == maintained
    assert {k: v for k, v in after.items() if k != "cache_maintenance_bytes"} == {
        k: v for k, v in before.items() if k != "cache_maintenance_bytes"
    }
    # A prepared transition can be replayed: each execute() counts again.
    prepared.execute()
    assert stats(rt)["cache_maintenance_bytes"] - before["cache_maintenance_bytes"] == 2 * maintained


@settings(max_examples=100, deadline=None)
@given(
    length=st.integers(1, 256),
    good=st.lists(st.tuples(st.integers(0, 128), st.integers(0, 128)).map(sorted).map(tuple), max_size=5),
    bad_pos=st.integers(0, 5),
    bad_kind=st.sampled_from(["reversed", "beyond"]),
)
def test_every_range_is_checked_before_anything_else(length, good, bad_pos, bad_kind):
    """One bad range anywhere (even after an empty or valid one) rejects the whole call."""
    rt = hx.Runtime()
    buf = make_buffer(rt, "Shared", length)
    good = [(min(s, length), min(e, length)) for s, e in good]
    bad = (3, 2) if bad_kind == "reversed" else (0, length + 1)
    if bad_kind == "reversed" and length < 3:
        bad = (1, 0)
    ranges = list(good)
    ranges.insert(min(bad_pos, len(ranges)), bad)
    with pytest.raises(RefError):
        ref_merge(ranges, length, "range")
    before = stats(rt)
    for which in ("release", "acquire"):
        with pytest.raises(ValueError, match="visibility range out of bounds"):
            prepare(buf, which, ranges)
    assert stats(rt) == before


# --------------------------------------------------------------------------
# explicit cases


@pytest.mark.parametrize("which", ["release", "acquire"])
@pytest.mark.parametrize("name", ["NpuLocal", "Shared", "Adopted"])
def test_worked_example_over_32_bytes(rt, name, which):
    buf = make_buffer(rt, name, 32)
    ranges = [(8, 16), (0, 4), (3, 10), (24, 32), (16, 16)]
    expected = ref_merge(ranges, 32, "range")
    prepared = prepare(buf, which, ranges)
    assert prepared.ranges == expected == [(0, 16), (24, 32)]
    assert prepared.operation_count == 2
    before = stats(rt)["cache_maintenance_bytes"]
    prepared.execute()
    assert stats(rt)["cache_maintenance_bytes"] - before == 16 + 8


@pytest.mark.parametrize("which", ["release", "acquire"])
@pytest.mark.parametrize("name", PLACEMENTS)
def test_hrx_operation_count_example(rt, name, which):
    """HRX's own test: {0..16, 8..32, 32..64, 256..320} → 2 ops for Range kinds, 1 otherwise."""
    buf = make_buffer(rt, name, 512)
    quad = [(0, 16), (8, 32), (32, 64), (256, 320)]
    prepared = prepare(buf, which, quad)
    kind = EXPECTED_KIND[name]
    assert prepared.transition.kind == kind
    if kind == "range":
        assert prepared.operation_count == 2
        assert prepared.ranges == [(0, 64), (256, 320)]
        assert prepared.transition.executor in ("host_direct", "host_api")
        assert prepared.transition.range_granularity > 0
    else:
        # HostVisible is coherent, GPU-only: no cache op, just a fence over the buffer.
        assert prepared.operation_count == 1
        assert prepared.ranges == [(0, 512)]
    before = stats(rt)["cache_maintenance_bytes"]
    prepared.execute()
    delta = stats(rt)["cache_maintenance_bytes"] - before
    assert delta == (64 + 64 if kind == "range" else 0)


@pytest.mark.parametrize("which", ["release", "acquire"])
@pytest.mark.parametrize("name", PLACEMENTS)
def test_none_means_the_whole_buffer(rt, name, which):
    buf = make_buffer(rt, name, 200)
    prepared = prepare(buf, which, None)
    assert prepared.ranges == [(0, 200)]
    assert prepared.operation_count == 1
    # The default argument is None as well.
    default = buf.prepare_release_host() if which == "release" else buf.prepare_acquire_host()
    assert default.ranges == [(0, 200)]
    before = stats(rt)["cache_maintenance_bytes"]
    prepared.execute()
    assert stats(rt)["cache_maintenance_bytes"] - before == (200 if EXPECTED_KIND[name] == "range" else 0)


@pytest.mark.parametrize("name", PLACEMENTS)
@pytest.mark.parametrize("ranges", [[], [(5, 5)], [(0, 0), (64, 64), range(7, 7)]])
def test_only_empty_ranges_give_no_operation(rt, name, ranges):
    """Collapse to 0..len happens only for a non-empty result, even for 'none' recipes."""
    buf = make_buffer(rt, name, 64)
    prepared = buf.prepare_release_host(ranges)
    assert prepared.ranges == []
    assert prepared.operation_count == 0
    before = stats(rt)
    prepared.execute()
    assert stats(rt) == before


def test_range_objects_and_iterables(rt, npu):
    buf = rt.allocate(100, hx.Shared(npu))
    mixed = [range(10, 20), (20, 30), [50, 60], range(55, 70, 1)]
    assert buf.prepare_release_host(mixed).ranges == ref_merge(mixed, 100, "range") == [(10, 30), (50, 70)]
    # Any iterable of ranges is accepted, including a generator.
    assert buf.prepare_acquire_host(r for r in mixed).ranges == [(10, 30), (50, 70)]


def test_adjacent_ranges_merge_but_holes_survive(rt, npu):
    buf = rt.allocate(64, hx.NpuLocal(npu))
    assert buf.prepare_release_host([(0, 8), (8, 16)]).ranges == [(0, 16)]
    assert buf.prepare_release_host([(0, 8), (9, 16)]).ranges == [(0, 8), (9, 16)]
    assert buf.prepare_release_host([(9, 16), (0, 8), (8, 9)]).ranges == [(0, 16)]
    assert buf.prepare_release_host([(0, 64), (10, 20)]).ranges == [(0, 64)]


@pytest.mark.parametrize(
    "bad",
    [
        [(-1, 4)],
        [(0, -4)],
        [(2, 4), (-3, -1)],
        [range(-2, 4)],
        [(1, 2, 3)],
        [(1,)],
        [()],
        [range(0, 10, 2)],
        [range(10, 0, -1)],
        [(4, 2)],
        [range(6, 3)],
        [(0, 65)],
        [(65, 70)],
        [(0, 8), (0, 65)],
    ],
    ids=repr,
)
@pytest.mark.parametrize("name", PLACEMENTS)
def test_malformed_ranges_raise_value_error_and_change_nothing(rt, name, bad):
    buf = make_buffer(rt, name, 64)
    buf._mark_written("gpu")
    with pytest.raises(RefError):
        ref_merge(bad, 64, EXPECTED_KIND[name])
    before, state = stats(rt), buf._state()
    for which in ("release", "acquire"):
        with pytest.raises(ValueError) as info:
            prepare(buf, which, bad)
        assert not isinstance(info.value, hx.HrxError)
    assert stats(rt) == before
    assert buf._state() == state


@pytest.mark.parametrize("which", ["release", "acquire"])
def test_gpu_local_is_unsupported(rt, which):
    buf = rt.allocate(64, hx.GpuLocal())
    before = stats(rt)
    for ranges in (None, [(0, 8)], [(4, 2)]):  # the placement is rejected before the ranges
        with pytest.raises(hx.UnsupportedError, match="not host mapped"):
            prepare(buf, which, ranges)
    assert stats(rt) == before


def test_gpu_local_adopted_as_shared_is_host_mapped(rt, npu):
    """The Shared alias of a GpuLocal buffer is host-mapped and NPU-reachable: ranged maintenance."""
    src = rt.allocate(128, hx.GpuLocal())
    alias = rt.adopt(src, hx.Shared(npu))
    prepared = alias.prepare_release_host([(64, 128), (0, 10)])
    assert prepared.transition.kind == "range"
    assert prepared.ranges == ref_merge([(64, 128), (0, 10)], 128, "range")


@pytest.mark.parametrize(
    "bad",
    [[(0.5, 4)], [("0", "4")], [(None, 4)]],
    ids=repr,
)
def test_non_integer_bounds_raise_type_error(rt, npu, bad):
    buf = rt.allocate(64, hx.Shared(npu))
    with pytest.raises(TypeError):
        buf.prepare_release_host(bad)


def test_huge_bounds_are_out_of_bounds(rt, npu):
    buf = rt.allocate(64, hx.Shared(npu))
    with pytest.raises(ValueError, match="out of bounds"):
        buf.prepare_release_host([(0, 2**64)])


def test_non_iterable_ranges_raise_type_error(rt, npu):
    buf = rt.allocate(64, hx.Shared(npu))
    before = stats(rt)
    with pytest.raises(TypeError):
        buf.prepare_release_host(5)
    assert stats(rt) == before
