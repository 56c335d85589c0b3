"""hrxarray on Dask: DeviceArrays as the blocks of Dask arrays, on dask.distributed workers bound to devices.

Importing hrxarray registers DeviceArray with Dask whenever Dask is imported
too (Note [Dask registrations] in hrxarray/_dask_hooks.py); this module needs
Dask (``pip install hrxarray[dask]``) and adds the parts a user calls.
"""

from __future__ import annotations

from .._dask_hooks import register_array
from .._dask_matmul import matmul

register_array()

from ._backend import HrxBackendEntrypoint, RandomState  # noqa: E402
from ._cluster import DevicePlugin, local_cluster  # noqa: E402

__all__ = ["matmul", "DevicePlugin", "local_cluster", "HrxBackendEntrypoint", "RandomState"]
