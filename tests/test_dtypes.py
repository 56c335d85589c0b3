"""kernels/dtype.cpp's promotion and casting tables against NumPy with ml_dtypes' bfloat16 registered."""

import itertools

import ml_dtypes
import numpy as np
import pytest

from hrxarray._core import _elementwise as ew

NAMES = [
    "bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
]  # fmt: skip
CASTINGS = ["no", "equiv", "safe", "same_kind", "unsafe"]


def np_dtype(name):
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def test_01_names_and_codes_match_numpy():
    # The loop strings of _elementwise.info use dtype.h's type characters.
    types = {t for name in ew.ufunc_names() for t in ew.info(name)["types"]}
    codes = {c for t in types for c in t.replace("->", "")}
    assert codes == {np_dtype(n).char for n in NAMES}


@pytest.mark.parametrize("a", NAMES)
def test_02_promote_types_is_result_type(a):
    for b in NAMES:
        assert ew.promote_types(a, b) == np.result_type(np_dtype(a), np_dtype(b)).name, (a, b)


def test_03_promote_types_is_symmetric():
    for a, b in itertools.product(NAMES, NAMES):
        assert ew.promote_types(a, b) == ew.promote_types(b, a)


@pytest.mark.parametrize("casting", CASTINGS)
def test_04_can_cast_matches_numpy(casting):
    for a, b in itertools.product(NAMES, NAMES):
        assert ew.can_cast(a, b, casting) == np.can_cast(np_dtype(a), np_dtype(b), casting), (a, b, casting)


def test_05_bad_names_are_refused():
    with pytest.raises(ValueError, match="unknown dtype"):
        ew.promote_types("float8", "int8")
    with pytest.raises(ValueError, match="unknown casting"):
        ew.can_cast("int8", "int16", "sometimes")
