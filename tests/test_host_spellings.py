"""CuPy's and the array API's spellings of "to the host" (x.get(), hx.asnumpy, x.to_device("cpu")) and
isdtype of scalar types."""

import numpy as np
import pytest

import hrxarray as hx


def test_get_and_asnumpy_return_numpy_copies():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = hx.asarray(a)
    for got in (x.get(), hx.asnumpy(x)):
        assert type(got) is np.ndarray and got.dtype == a.dtype
        np.testing.assert_array_equal(got, a)
    out = np.zeros_like(a)
    assert x.get(out=out) is out
    np.testing.assert_array_equal(out, a)
    with pytest.raises(ValueError, match="get: out has shape"):
        x.get(out=np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="get: stream must be None"):
        x.get(stream=1)


def test_to_device_cpu_is_host_memory_in_the_namespace():
    a = np.arange(4.0)
    y = hx.asarray(a).to_device("cpu")
    assert isinstance(y, hx.DeviceArray) and y.placement == hx.HostVisible()
    np.testing.assert_array_equal(hx.to_numpy(y), a)
    with pytest.raises(ValueError, match="the only device named by a string is 'cpu'"):
        hx.asarray(a).to_device("cuda")
    with pytest.raises(TypeError, match="device must be a placement or 'cpu'"):
        hx.asarray(a).to_device(3)


def test_isdtype_takes_scalar_types():
    assert hx.isdtype(hx.bfloat16, "real floating")
    assert hx.isdtype(np.float32, "real floating") == np.isdtype(np.float32, "real floating")
    assert hx.isdtype(np.int8, "signed integer") and not hx.isdtype(np.uint8, "signed integer")
    with pytest.raises(TypeError, match="is not a dtype"):
        hx.isdtype("float32", "real floating")
