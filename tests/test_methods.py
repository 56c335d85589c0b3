"""DeviceArray's Python-level methods are defined once (hrxarray/_array.py and the chapter modules) and
installed on the compiled class: no C++ forwarder, the stub's signature and docstring come from the
function itself, and each method gives what its function (and NumPy) gives."""

import inspect
import types

import numpy as np
import pytest

import hrxarray as hx
from hrxarray import _core

# The methods and properties the compiled class used to forward to Python, plus ufunc.reduce.
PYTHON_METHODS = [
    "__repr__", "__str__", "__getitem__", "__setitem__", "__iter__", "__bool__", "__int__", "__float__",
    "__complex__", "__index__", "__array__", "__array_ufunc__", "__array_function__", "map_read", "map_write",
    "reshape", "transpose", "astype", "copy", "to", "to_device", "__array_namespace__", "view", "blocks", "item",
    "sum", "prod", "max", "min", "mean", "any", "all", "argmax", "argmin", "sort", "argsort", "cumsum", "cumprod",
    "nonzero", "var", "std", "round", "clip", "conj", "conjugate", "tolist", "ravel", "flatten", "squeeze",
    "swapaxes", "repeat", "dot", "__dlpack__", "readonly_export", "get",
]
REDUCTIONS = ["sum", "prod", "max", "min", "mean", "any", "all", "argmax", "argmin"]


def _function(cls, name):
    member = cls.__dict__[name]
    return member.fget if isinstance(member, property) else member


@pytest.mark.parametrize("cls, name", [(hx.DeviceArray, n) for n in PYTHON_METHODS + ["T", "mT"]]
                         + [(hx.ufunc, "reduce")])
def test_method_is_one_python_function_with_a_typed_documented_signature(cls, name):
    fn = _function(cls, name)
    assert type(fn) is types.FunctionType  # not a nanobind function that calls back into Python
    assert (fn.__name__, fn.__qualname__, fn.__module__) == (name, f"{cls.__name__}.{name}", "hrxarray._core")
    assert fn.__doc__ and fn.__doc__ == inspect.cleandoc(fn.__doc__)
    sig = inspect.signature(fn)
    assert next(iter(sig.parameters)) == "self"
    assert sig.return_annotation is not inspect.Signature.empty
    assert all(p.annotation is not inspect.Parameter.empty for p in list(sig.parameters.values())[1:])


@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduction_methods_run_the_functions_own_code(name):
    method, function = hx.DeviceArray.__dict__[name], getattr(hx, name)
    assert method is not function and method.__code__ is function.__code__
    chapter = "hrxarray._searching" if name in ("argmax", "argmin") else "hrxarray._statistical"
    assert function.__module__ == chapter and function.__qualname__ == name  # left as it was


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_reduction_methods_match_numpy(name, axis):
    a = np.arange(-6, 6, dtype=np.int32).reshape(3, 4) * np.array([1, 0, 2, 1], dtype=np.int32)
    x = hx.asarray(a)
    got = getattr(x, name)(axis=axis, keepdims=axis is not None) if name not in ("argmax", "argmin") \
        else getattr(x, name)(axis=axis)
    want = getattr(np, name)(a, axis=axis, keepdims=axis is not None) if name not in ("argmax", "argmin") \
        else getattr(np, name)(a, axis=axis)
    np.testing.assert_array_equal(hx.to_numpy(got), want)
    assert got.dtype == want.dtype
    # Keywords and errors are the function's: the message names it.
    with pytest.raises(np.exceptions.AxisError, match=name):
        getattr(x, name)(axis=2)


def test_methods_are_not_declared_in_the_compiled_module():
    # What the bindings define on the class is compiled; none of these names is among it.
    compiled = {n for n, v in vars(hx.DeviceArray).items() if type(v).__module__ == "nanobind"}
    assert not compiled & set(PYTHON_METHODS + ["T", "mT"])
    assert not hasattr(_core, "_dlpack_export")  # one DLPack producer: DeviceArray.__dlpack__


class _Overrides:
    """A foreign array type that takes NumPy's ufuncs (NEP 13): records each call."""

    calls: list = []

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        _Overrides.calls.append((ufunc.__name__, method, [type(i).__name__ for i in inputs], sorted(kwargs)))
        return "handled"


def test_hrxarray_ufuncs_hand_overriding_operands_to_numpys_protocol():
    # hx.add(x, foreign) behaves as np.add(x, foreign): the foreign type's __array_ufunc__ gets the
    # call (DeviceArray's own returns NotImplemented for it), instead of a conversion to a host array.
    _Overrides.calls.clear()
    x = hx.ones(3, dtype=np.float32)
    assert hx.add(x, _Overrides(), dtype=np.float64) == "handled"
    assert hx.arctan2(_Overrides(), 2.0) == "handled"
    assert hx.negative(_Overrides()) == "handled"
    assert _Overrides.calls == [("add", "__call__", ["DeviceArray", "_Overrides"], ["dtype"]),
                                ("arctan2", "__call__", ["_Overrides", "float"], []),
                                ("negative", "__call__", ["_Overrides"], [])]
    # Known operands never take that path: the results are DeviceArrays computed here.
    for y in (hx.add(x, np.float32(2)), hx.add(x, np.ones(3)), hx.add(x, [1.0, 2.0, 3.0]), hx.add(x, 2)):
        assert isinstance(y, hx.DeviceArray)
    assert len(_Overrides.calls) == 3


def _installed_python_members():
    """{name: defining module} of every Python function or property installed on DeviceArray."""
    out = {}
    for name, member in vars(hx.DeviceArray).items():
        fn = member.fget if isinstance(member, property) else member
        if isinstance(fn, types.FunctionType):
            out[name] = "hrxarray." + fn.__code__.co_filename.rsplit("/", 1)[-1].removesuffix(".py")
    return out


def test_the_method_table_is_what_is_installed():
    """Note [The DeviceArray method table]: every Python-level member of DeviceArray is declared once, in
    _array._METHOD_TABLE, with the module that defines it; nothing else is installed."""
    from hrxarray import _array
    declared = {name: f"hrxarray.{module}" for module, names in _array._METHOD_TABLE.items() for name in names}
    assert _installed_python_members() == declared
    assert set(PYTHON_METHODS + ["T", "mT"]) == set(declared)


def test_an_undeclared_method_is_refused_and_nothing_is_installed():
    from hrxarray import _array

    def frobnicate(self):
        """Not in the table."""

    with pytest.raises(RuntimeError, match="DeviceArray.frobnicate .*declares no such method"):
        _array._method("frobnicate")(frobnicate)
    assert not hasattr(hx.DeviceArray, "frobnicate")

    def sum(self):  # noqa: A001 - the table says _statistical defines sum
        """Defined in the wrong module."""

    with pytest.raises(RuntimeError, match="declares hrxarray._statistical"):
        _array._method("sum")(sum)
    assert hx.DeviceArray.sum.__code__.co_filename.endswith("_statistical.py")
