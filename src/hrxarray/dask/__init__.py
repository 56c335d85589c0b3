"""hrxarray on Dask: DeviceArrays as the blocks of Dask arrays, on dask.distributed workers bound to devices.

Importing hrxarray registers DeviceArray with Dask whenever Dask is imported
too (Note [Dask registrations] in hrxarray/_dask_hooks.py); this module needs
Dask (``pip install hrxarray[dask]``) and adds the parts a user calls.
"""

from __future__ import annotations

from .._dask_hooks import register_array

register_array()

__all__: list[str] = []
