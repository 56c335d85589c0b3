"""The built-in programs as Loom sources: shipped in the package (hrxarray/programs/*.loom),
embedded byte for byte in the library, each built-in program a root symbol of its module with
the configuration keys and defaults that hx.kernels uses, and every module parsing once the
Loom frontend (hrxarray._core.loom.parse) is built in."""

from __future__ import annotations

import re
from importlib import resources

import pytest

import hrxarray as hx
from hrxarray import _core

NPU = ("copy", "gemm", "batched_gemm")
GPU = ("transform_i32", "euler_bf16", "add_f32")


def shipped():
    folder = resources.files("hrxarray") / "programs"
    return {p.name[: -len(".loom")]: p.read_text(encoding="utf-8") for p in folder.iterdir() if p.name.endswith(".loom")}


def test_package_ships_the_sources_the_library_embeds():
    files = shipped()
    assert set(files) == {"copy", "gemm", "elementwise"}
    assert _core.kernels._builtin_sources() == files


@pytest.mark.parametrize("name", NPU + GPU)
def test_each_builtin_is_a_root_symbol_of_its_module(name):
    stem, symbol = _core.kernels._builtin_source(name)
    assert symbol == name
    text = shipped()[stem]
    kind = "pipeline.def" if name in NPU else "kernel.def"
    assert re.search(rf"^{re.escape(kind)}\b[^\n]*@{name}\(", text, re.MULTILINE), (stem, name)


def test_unknown_builtin_source_is_refused():
    with pytest.raises(ValueError, match="'scale' is not a built-in program"):
        _core.kernels._builtin_source("scale")


def source_defaults(text):
    return {key: int(value) for key, value in re.findall(r"^config\.def @([\w.]+) = (-?\d+) : index$", text, re.MULTILINE)}


@pytest.mark.parametrize("name", NPU)
def test_source_config_defaults_are_the_artifacts(name):
    # Every key of the artifact is declared in the source with the same default.
    stem, _ = _core.kernels._builtin_source(name)
    defaults = source_defaults(shipped()[stem])
    config = hx.kernels.npu(name).config
    assert config and {k: defaults[k] for k in config} == config


def test_gemm_source_follows_the_fixture_numerics():
    # gemm.bfp16 defaults to 1: both operands encoded to bfp16ebs8 before vector.mma; the
    # rounding comes from the encoding schema (flush_subnormal = floor, nearest_even = even).
    text = shipped()["gemm"]
    assert source_defaults(text)["gemm.bfp16"] == 1
    assert text.count("element_format=bfp16ebs8") == 2
    assert "rounding=nearest_even" in text and "rounding=flush_subnormal" in text
    assert len(re.findall(r"= vector\.encode %[ab]_values using", text)) == 4


@pytest.mark.parametrize("stem", ["copy", "gemm", "elementwise"])
def test_sources_parse(stem):
    loom = getattr(_core, "loom", None)
    if loom is None or not hasattr(loom, "parse"):
        pytest.skip("the Loom frontend (hrxarray._core.loom.parse) is not built in yet")
    loom.parse(shipped()[stem])
