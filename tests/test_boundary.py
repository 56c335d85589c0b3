"""The one-way Python→C++ boundary (issue 26): what the bindings used to import from the package is now
the core's (hx.bfp16, the foreign-operand rule) or handed to it at import (Note [Python builders])."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from hypothesis import given, strategies as st

import hrxarray as hx
from hrxarray import _core, _completion, _hostview, _trace


def test_bfp16_is_the_cores_one_object():
    assert hx.bfp16 is _core.bfp16 and isinstance(hx.bfp16, hx.BlockDType if hasattr(hx, "BlockDType")
                                                   else _core.BlockDType)
    assert (hx.bfp16.name, hx.bfp16.block_values, hx.bfp16.block_bytes) == ("bfp16", 8, 9)
    assert hx.bfp16.itemsize == 9 and hx.bfp16.kind == "V"
    assert repr(hx.bfp16) == str(hx.bfp16) == "hrxarray.bfp16"
    assert pickle.loads(pickle.dumps(hx.bfp16)) is hx.bfp16
    assert copy.deepcopy(hx.bfp16) is hx.bfp16
    x = hx.asarray(np.linspace(-3, 3, 16, dtype=np.float32).reshape(2, 8)).astype(hx.bfp16)
    assert x.dtype is hx.bfp16 and x.blocks().shape == (2, 1, 9)
    assert pickle.loads(pickle.dumps(x)).dtype is hx.bfp16


def test_block_dtype_has_no_public_constructor_and_other_block_types_are_refused():
    with pytest.raises(TypeError):
        _core.BlockDType("bfp16", 8, 9)
    with pytest.raises(TypeError, match="dtype"):
        hx.zeros((8,), dtype=object())


class Foreign:
    """A stand-in for an array type hrxarray does not know (a Dask array) that speaks NEP 13."""

    def __init__(self, value):
        self.value = value

    def __array_ufunc__(self, uf, method, *inputs, **kwargs):
        return ("foreign", uf.__name__, method, len(inputs), sorted(kwargs))


class FunctionOnly:
    def __array_function__(self, func, types, args, kwargs):
        return NotImplemented


def model_foreign(values):
    """The rule, in plain Python: any operand, at any depth of tuples and lists, whose type speaks
    NumPy's protocols and is not a DeviceArray, a NumPy array or a NumPy scalar."""
    for v in values:
        if isinstance(v, (hx.DeviceArray, np.ndarray, np.generic)):
            continue
        if isinstance(v, (tuple, list)):
            if model_foreign(v):
                return True
            continue
        if hasattr(type(v), "__array_ufunc__") or hasattr(type(v), "__array_function__"):
            return True
    return False


leaves = st.sampled_from(["int", "float", "str", "ndarray", "generic", "device", "foreign", "function_only"])


def make(kind):
    return {"int": 1, "float": 2.5, "str": "s", "ndarray": np.zeros(2), "generic": np.float32(1),
            "device": hx.asarray([1.0]), "foreign": Foreign(1), "function_only": FunctionOnly()}[kind]


trees = st.recursive(leaves, lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner), max_leaves=6)


def build(tree):
    if isinstance(tree, list):
        return [build(t) for t in tree]
    if isinstance(tree, tuple):
        return tuple(build(t) for t in tree)
    return make(tree)


@given(st.lists(trees, max_size=4))
def test_the_foreign_operand_rule_matches_the_model(tree):
    values = build(tree)
    assert _core._has_foreign_operand(values) == model_foreign(values)


def test_hrxarray_ufuncs_hand_foreign_operands_to_numpy():
    x = hx.asarray([1.0, 2.0])
    assert hx.add(x, Foreign(1)) == ("foreign", "add", "__call__", 2, [])
    assert hx.exp(Foreign(1)) == ("foreign", "exp", "__call__", 1, [])
    assert np.add(x, Foreign(1)) == ("foreign", "add", "__call__", 2, [])
    # Without a foreign operand the call is hrxarray's own.
    np.testing.assert_array_equal(hx.add(x, [1, 1]).__array__(), [2.0, 3.0])


def test_the_python_builders_are_the_packages_classes():
    rt = hx.default_runtime()
    rt.start_trace(4)
    (hx.asarray([1.0]) + 1).block_until_ready()
    assert type(rt.finish_trace()) is _trace.Trace
    buf = hx.asarray(np.arange(4, dtype=np.uint8)).buffer
    with buf.map_read() as view:
        assert isinstance(view, _hostview.HostView)
    assert _completion.await_completion is not None


def test_set_builders_refuses_what_cannot_be_called_and_changes_nothing():
    with pytest.raises(TypeError, match="trace must be callable"):
        _core._set_builders(await_completion=_completion.await_completion, host_view=_hostview.make_view,
                            trace=42)
    rt = hx.default_runtime()
    rt.start_trace(2)
    assert type(rt.finish_trace()) is _trace.Trace


SPELLINGS = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
             "float32", "float64", "complex64", "complex128", "f4", "<f8", "i4", "?", np.float32, np.int64,
             np.dtype(np.uint16), float, int, bool, complex]


@pytest.mark.parametrize("spelling", SPELLINGS, ids=repr)
def test_one_dtype_map_gives_numpys_dtype(spelling):
    from hrxarray import _array
    assert _array._dtype(spelling, "op") == np.dtype(spelling)
    assert _core._dtype(spelling, "op") == np.dtype(spelling)


def test_one_dtype_map_knows_bfloat16_and_bfp16_and_refuses_the_rest():
    import ml_dtypes
    from hrxarray import _array
    assert _array._dtype("bfloat16", "op") == np.dtype(ml_dtypes.bfloat16)
    assert _array._dtype(ml_dtypes.bfloat16, "op") == np.dtype(ml_dtypes.bfloat16)
    assert _array._dtype("bfp16", "op") is hx.bfp16 and _array._dtype(hx.bfp16, "op") is hx.bfp16
    assert _array._dtype(None, "op") is None
    for bad in ("U", object, ">f4", "datetime64[s]", "nope", 3):
        with pytest.raises(TypeError, match="^zeros: "):
            hx.zeros((2,), dtype=bad)


ARITH = ["bool", "int8", "uint8", "int16", "int32", "uint32", "int64", "uint64", "float16", "bfloat16", "float32",
         "float64", "complex64", "complex128"]
SCALARS = {"b": True, "i": 3, "f": 2.5, "c": 1 + 2j}


@given(st.sampled_from(ARITH), st.sampled_from(ARITH), st.lists(st.sampled_from("bifc"), max_size=2))
def test_result_type_is_the_rule_the_ufuncs_apply(a, b, kinds):
    """hx.result_type and hx.add's result dtype come from one NEP 50 rule (array/operands.h)."""
    x = hx.zeros((1,), dtype=a)
    y = hx.zeros((1,), dtype=b)
    scalars = [SCALARS[k] for k in kinds]
    want = hx.result_type(x, y, *scalars)
    got = hx.add(x, y)
    for s in scalars:
        got = hx.add(got, s)
    # Left to right: the scalars join the typed result; the n-ary rule gives the same dtype.
    assert got.dtype == want
