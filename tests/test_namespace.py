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
    assert "globals()" not in (SRC / "__init__.py").read_text()
