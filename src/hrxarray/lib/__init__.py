"""NumPy's ``numpy.lib`` helpers for DeviceArrays: ``hx.lib.stride_tricks``."""

from . import stride_tricks

__all__ = ["stride_tricks"]
