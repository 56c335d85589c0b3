"""A program written as a user of hrxarray would write it, for `mypy --strict` (tests/test_typing.py):
every typing.assert_type below is checked by mypy, not at run time (where it is a no-op), so the
stubs must give operators, methods and functions their real types."""

from __future__ import annotations

from typing import Any, assert_type

import numpy as np
import numpy.typing as npt

import hrxarray as hx


def program() -> float:
    x = hx.arange(12.0).reshape(3, 4)
    assert_type(x, hx.DeviceArray)
    y = x + 1
    assert_type(y, hx.DeviceArray)
    assert_type(2.0 * x - y / 3, hx.DeviceArray)
    assert_type(x == y, hx.DeviceArray)
    assert_type(-x, hx.DeviceArray)
    assert_type(x @ x.T, hx.DeviceArray)
    assert_type(hx.exp(x), hx.DeviceArray)
    assert_type(hx.add(x, y, out=y), hx.DeviceArray)
    assert_type(hx.sum(x, axis=0), hx.DeviceArray)
    assert_type(x[1:, ::2], hx.DeviceArray)
    assert_type(x[x > 3], hx.DeviceArray)
    assert_type(hx.take(x, [2, 0], axis=1), hx.DeviceArray)
    assert_type(hx.take_along_axis(x, x.argsort(), axis=-1), hx.DeviceArray)
    assert_type(hx.isin(x, [1.0, 5.0]), hx.DeviceArray)
    assert_type(x.device, hx.Placement)
    assert_type(x.to_device(hx.HostVisible()), hx.DeviceArray)
    assert_type(hx.result_type(x, 1.0), np.dtype[Any])
    assert_type(hx.finfo(hx.float32).eps, float)
    with x.map_read() as host:
        assert_type(host, npt.NDArray[Any])
        total = float(host.sum())
    assert_type(hx.to_numpy(y), npt.NDArray[Any])
    assert_type(x.item(0), Any)  # a Python scalar, typed as NumPy types ndarray.item
    for row in x:
        assert_type(row, hx.DeviceArray)
    buf = hx.default_runtime().allocate(64, hx.Shared(hx.npu()))
    with buf.map_write() as view:
        view[:] = 0
    return total + float(hx.max(y).item())


if __name__ == "__main__":
    print(program())


def dtypes() -> None:
    # hx.bfloat16 is declared for type checkers (ml_dtypes ships no stubs, so its type is Any)
    bf16 = hx.bfloat16
    assert_type(hx.float32, np.dtype[np.float32])
    assert_type(hx.asarray([1.0], dtype=bf16), hx.DeviceArray)
