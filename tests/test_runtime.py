"""Runtime construction, devices and the default runtime."""

import gc
import os
import subprocess
import sys

import pytest

import hrxarray as hx


def test_defaults_follow_hrx_options():
    rt = hx.Runtime()
    assert (rt.max_submissions, rt.graph_slots, rt.memory_budget) == (64, 2, None)
    assert rt.backend == "emulated"
    assert rt.check_visibility is False


@pytest.mark.parametrize(
    "kwargs", [{"max_submissions": 0}, {"graph_slots": 0}, {"gpu_index": -1}, {"max_submissions": -3}]
)
def test_bad_capacities_are_value_errors(kwargs):
    with pytest.raises(ValueError, match="runtime capacities must be nonzero and GPU index nonnegative"):
        hx.Runtime(**kwargs)


def test_options_are_keyword_only():
    with pytest.raises(TypeError):
        hx.Runtime(64)


def test_gpu_and_npu_targets():
    rt = hx.Runtime()
    g, n = rt.gpu(), rt.npu()
    assert g.target == "gfx1151" and g.backend == "emulated" and g.index == 0
    assert n.target == "amd.xdna.strix_halo.17f0_11" and n.columns == 8 and n.index == 0
    assert n.runtime is rt or n.runtime == rt


def test_missing_gpu_index_is_unsupported():
    rt = hx.Runtime(gpu_index=1)
    with pytest.raises(hx.UnsupportedError, match="gpu device 1 is unavailable"):
        rt.gpu()


def test_npu_index_rules():
    rt = hx.Runtime()
    with pytest.raises(ValueError, match="nonnegative"):
        rt.npu(-1)
    with pytest.raises(hx.UnsupportedError, match="npu device 1 is unavailable"):
        rt.npu(1)


def test_devices_are_value_objects_per_runtime():
    a, b = hx.Runtime(), hx.Runtime()
    assert a.npu() == a.npu() and hash(a.npu()) == hash(a.npu())
    assert a.gpu() == a.gpu()
    assert a.npu() != b.npu()
    assert a.gpu() != a.npu()
    assert a.npu() != "npu"
    assert len({a.npu(), a.npu(), b.npu()}) == 2


def test_devices_lists_gpu_then_npus():
    rt = hx.Runtime()
    assert rt.devices() == [rt.gpu(), rt.npu()]


def test_default_runtime_is_one_object_and_module_shortcuts_use_it():
    rt = hx.default_runtime()
    assert hx.default_runtime() is rt
    assert hx.gpu() == rt.gpu()
    assert hx.npu() == rt.npu()
    assert hx.devices() == rt.devices()
    assert hx.npu() != hx.Runtime().npu()


def test_default_runtime_is_the_same_object_after_every_python_reference_went(tmp_path):
    # The C++ core keeps the default runtime's Python object (Note [The default runtime]): an id
    # seen once is seen again even when nothing in Python held the runtime in between.
    code = ("import gc, hrxarray as hx\n"
            "first = id(hx.default_runtime()); gc.collect()\n"
            "x = hx.asarray([1.0]); same = x.buffer.runtime is hx.default_runtime()\n"
            "print(first == id(hx.default_runtime()), same)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert out.stdout.strip() == "True True", out.stderr


def test_default_runtime_checked_mode_from_environment(tmp_path):
    code = "import hrxarray as hx; print(hx.default_runtime().check_visibility)"
    for value, expected in (("1", "True"), ("0", "False")):
        out = subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "HRXARRAY_CHECK_VISIBILITY": value},
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,  # outside the source tree, whose hrxarray/ has no compiled module
        )
        assert out.stdout.strip() == expected, out.stderr


def test_buffers_keep_their_runtime_alive():
    rt = hx.Runtime()
    buf = rt.allocate(64, hx.Shared(rt.npu()))
    del rt
    gc.collect()
    assert buf.runtime.statistics().live_bytes == 64


def test_reprs_are_readable():
    rt = hx.Runtime()
    assert "gfx1151" in repr(rt.gpu())
    assert "columns=8" in repr(rt.npu())
    assert "emulated" in repr(rt)
