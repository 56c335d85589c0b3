"""The exception hierarchy is part of the public contract."""

import pytest

import hrxarray as hx


@pytest.mark.parametrize(
    "cls", [hx.BusyError, hx.UnsupportedError, hx.DeviceLostError, hx.ExecutionError, hx.CancelledError]
)
def test_runtime_errors_derive_from_hrxerror(cls):
    assert issubclass(cls, hx.HrxError)
    assert issubclass(cls, RuntimeError)
    assert cls.__module__ == "hrxarray"
    assert cls.__doc__


def test_contract_error_is_a_value_error():
    assert issubclass(hx.ContractError, ValueError)
    assert not issubclass(hx.ContractError, hx.HrxError)


def test_hrxerror_is_runtime_error():
    assert issubclass(hx.HrxError, RuntimeError)


def test_kinds_map_to_classes(rt):
    npu = rt.npu()
    with pytest.raises(hx.UnsupportedError):
        rt.allocate(8, hx.GpuLocal()).map_read()
    buf = rt.allocate(8, hx.Shared(npu))
    with buf.map_write():
        with pytest.raises(hx.BusyError):
            buf.try_map_read()
    buf._poison("injected fault")
    with pytest.raises(hx.DeviceLostError, match="injected fault"):
        buf.map_read()
    with pytest.raises(ValueError):
        rt.allocate(0, hx.Shared(npu))
    with pytest.raises(TypeError):
        buf.visibility(3, "host")
