"""Helpers shared by several test modules (tests/ is on sys.path under pytest)."""

import hrxarray as hx


def make_placement(name, rt):
    """The placement called `name` on runtime `rt`."""
    if name == "GpuLocal":
        return hx.GpuLocal()
    if name == "HostVisible":
        return hx.HostVisible()
    if name == "NpuLocal":
        return hx.NpuLocal(rt.npu())
    return hx.Shared(rt.npu())
