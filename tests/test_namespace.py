"""The hrxarray namespace as the array API standard and type checkers see it: how it is
assembled (no globals().update, the ufunc names from the kernel table), the data-type
functions and the inspection API, checked against NumPy and array_api_strict's values."""

from pathlib import Path

import numpy as np
import pytest

import hrxarray as hx
from hrxarray import _core

SRC = Path(__file__).resolve().parents[1] / "src" / "hrxarray"  # the sources, stubs included


def test_every_kernel_table_ufunc_is_a_typed_module_attribute():
    names = _core.elementwise.__all__
    assert len(names) == len(set(names)) > 40
    stub = (SRC / "_core" / "elementwise.pyi").read_text()
    for name in names:
        assert f"\n{name}: hrxarray._core.ufunc" in stub, name
        assert name in dir(hx) and name in hx.__all__
        if name != "where":  # hx.where is the array function (one or three arguments)
            assert getattr(hx, name) is getattr(_core.elementwise, name)
    assert isinstance(hx.where, type(lambda: 0))
    assert len(hx.__all__) == len(set(hx.__all__))
    # names reach the module through imports a type checker follows
    assert "globals().update" not in (SRC / "__init__.py").read_text()


import ml_dtypes  # noqa: E402

BF16 = np.dtype(ml_dtypes.bfloat16)
REAL = [np.dtype(n) for n in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                               "float16", "float32", "float64")] + [BF16]


def test_finfo_and_iinfo_match_numpy_and_ml_dtypes():
    for dt in (hx.float16, hx.float32, hx.float64, hx.bfloat16):
        ref = ml_dtypes.finfo(dt) if dt == BF16 else np.finfo(dt)
        got = hx.finfo(dt)
        assert (got.bits, got.eps, got.max, got.min, got.smallest_normal) == \
            (ref.bits, float(ref.eps), float(ref.max), float(ref.min), float(ref.smallest_normal))
        assert got.dtype == dt and isinstance(got.eps, float)
        assert hx.finfo(hx.zeros(2, dtype=dt)) == got  # an array's dtype
    for dt in REAL[1:9]:
        ref, got = np.iinfo(dt), hx.iinfo(dt)
        assert (got.bits, got.max, got.min, got.dtype) == (ref.bits, ref.max, ref.min, dt)
        assert isinstance(got.max, int)
    with pytest.raises(TypeError, match="finfo: int32 is not a floating dtype"):
        hx.finfo(hx.int32)
    with pytest.raises(TypeError, match="iinfo: float32 is not an integer dtype"):
        hx.iinfo(hx.float32)
    with pytest.raises(TypeError, match="finfo: .*block storage"):
        hx.finfo(hx.bfp16)
    for dt, real in ((hx.complex64, hx.float32), (hx.complex128, hx.float64)):
        got, ref = hx.finfo(dt), np.finfo(dt)  # the real component's limits, named by the real dtype
        assert (got.bits, got.eps, got.max, got.dtype) == (ref.bits, float(ref.eps), float(ref.max), real)


KINDS = ["bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating", "numeric"]


def test_isdtype_matches_numpy_with_bfloat16_real_floating():
    for dt in REAL:
        for kind in KINDS + [("bool", "real floating"), hx.int8, (hx.float32, "integral")]:
            want = (kind in ("real floating", "numeric") or (isinstance(kind, tuple) and "real floating" in kind)) \
                if dt == BF16 else np.isdtype(dt, kind)
            assert hx.isdtype(dt, kind) == want, (dt, kind)
    with pytest.raises(ValueError, match="isdtype: unknown kind 'float'"):
        hx.isdtype(hx.float32, "float")
    with pytest.raises(TypeError, match="isdtype: 'float32' is not a dtype"):
        hx.isdtype("float32", "numeric")


def test_result_type_and_can_cast_match_numpy():
    for a in REAL:
        for b in REAL:
            assert hx.result_type(a, b) == np.result_type(a, b), (a, b)
            assert hx.can_cast(a, b) == np.can_cast(a, b, "safe"), (a, b)
        # Python scalars are weak (NEP 50), as NumPy 2 treats them
        for s in (True, 3, 2.5, 1j):
            if a == BF16 and isinstance(s, complex):
                continue  # NumPy has no complex bfloat16 rule to compare with
            assert hx.result_type(a, s) == np.result_type(a, s), (a, s)
        assert hx.result_type(hx.zeros(1, dtype=a), a) == a  # arrays count by their dtype
    # n-ary within a kind as NumPy (across kinds the standard leaves it open: hrxarray promotes left to right)
    assert hx.result_type(hx.int8, hx.uint8, hx.int16) == np.result_type(np.int8, np.uint8, np.int16)
    assert hx.result_type(hx.float16, hx.float32, hx.float16) == hx.float32
    with pytest.raises(ValueError, match="result_type: at least one array or dtype"):
        hx.result_type(1, 2.0)
    with pytest.raises(TypeError, match="result_type: 'x' is neither a dtype nor an array"):
        hx.result_type(hx.int8, "x")


def test_inspection_namespace_and_array_api_methods():
    assert hx.__array_api_version__ == "2025.12"
    info = hx.__array_namespace_info__()
    caps = info.capabilities()
    assert caps == {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}
    assert info.default_device() == hx.Shared(hx.npu()) == hx.zeros(1).device
    devices = info.devices()
    assert isinstance(devices, tuple) and devices[0] == info.default_device() and hx.HostVisible() in devices and len(set(devices)) == len(devices)
    defaults = info.default_dtypes()
    assert defaults == {"real floating": hx.float64, "complex floating": np.dtype(np.complex128),
                        "integral": hx.int64, "indexing": hx.int64}
    assert set(info.dtypes(kind="integral")) == {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}
    assert all(hx.isdtype(d, "numeric") or d == hx.bool_ for d in info.dtypes().values())
    x = hx.arange(3.0, placement=hx.HostVisible())
    assert x.device == x.placement == hx.HostVisible()
    y = x.to_device(hx.Shared(hx.npu()))
    assert y.device == hx.Shared(hx.npu()) and np.array_equal(hx.to_numpy(y), [0.0, 1.0, 2.0])
    assert x.to_device(x.device) is x
    with pytest.raises(ValueError, match="to_device: stream must be None"):
        x.to_device(hx.HostVisible(), stream=1)
    assert x.__array_namespace__() is hx and x.__array_namespace__(api_version="2023.12") is hx
    with pytest.raises(ValueError, match="api_version '2019.01' is not one of"):
        x.__array_namespace__(api_version="2019.01")
    assert (hx.e, hx.pi, hx.inf, hx.newaxis) == (np.e, np.pi, np.inf, None) and np.isnan(hx.nan)


def test_lazy_names_are_listed_and_typed_without_importing_ml_dtypes():
    import subprocess
    import sys

    code = ("import sys, hrxarray as hx; names = dir(hx); "
            "print('bfloat16' in names, 'loom' in names, 'numerics' in names, 'ml_dtypes' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout.split()
    assert out == ["True", "True", "True", "False"]  # listed by dir(), still not imported
    init = (SRC / "__init__.py").read_text()
    assert "from ml_dtypes import bfloat16 as bfloat16" in init  # what type checkers read


PLACES = [hx.HostVisible(), hx.GpuLocal(), hx.Shared(hx.npu()), hx.NpuLocal(hx.npu())]


@pytest.mark.parametrize("place", PLACES, ids=repr)
def test_device_is_the_array_api_spelling_of_placement_on_every_creation_function(place):
    host = np.arange(6.0).reshape(2, 3)
    made = {
        "asarray": hx.asarray(host, device=place),
        "empty": hx.empty((2, 3), device=place),
        "zeros": hx.zeros((2, 3), device=place),
        "ones": hx.ones((2, 3), device=place),
        "full": hx.full((2, 3), 7.0, device=place),
        "arange": hx.arange(6.0, device=place),
        "linspace": hx.linspace(0, 1, 5, device=place),
        "empty_like": hx.empty_like(host, device=place),
        "zeros_like": hx.zeros_like(host, device=place),
        "ones_like": hx.ones_like(host, device=place),
        "full_like": hx.full_like(host, 2.0, device=place),
        "from_dlpack": hx.from_dlpack(host, device=place),
        "astype": hx.astype(hx.asarray(host), hx.float32, device=place),
    }
    for name, x in made.items():
        assert x.device == place, name
    assert made["astype"].dtype == hx.float32
    assert np.array_equal(hx.to_numpy(made["asarray"]), host) and np.array_equal(hx.to_numpy(made["astype"]), host)
    assert np.array_equal(hx.to_numpy(made["full"]), np.full((2, 3), 7.0))
    # Both spellings naming the same placement is fine; different ones are refused before anything is made.
    assert hx.zeros(2, device=place, placement=place).device == place


def test_device_errors_name_the_function_and_both_arguments():
    with pytest.raises(TypeError, match=r"zeros: device=HostVisible\(\) and placement=GpuLocal\(\) differ"):
        hx.zeros(2, device=hx.HostVisible(), placement=hx.GpuLocal())
    with pytest.raises(TypeError, match="asarray: device must be a placement .*got 'cpu'"):
        hx.asarray([1.0], device="cpu")
    with pytest.raises(TypeError, match="astype: device must be a placement"):
        hx.astype(hx.ones(2), hx.float32, device=0)
    x = hx.ones(2)
    assert hx.astype(x, x.dtype, copy=False, device=x.device) is x  # nothing to change: no copy
