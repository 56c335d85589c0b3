"""The process's default runtime and its devices (``hx.default_runtime``, ``hx.gpu``, ``hx.npu``,
``hx.devices``): a foundation module, which every module that needs the default runtime imports
instead of reaching back into the package's facade (``hrxarray/__init__.py`` re-exports these)."""

from __future__ import annotations

from . import _core
from ._completion import await_completion
from ._core import GpuDevice, NpuDevice, Runtime, _default_runtime
from ._hostview import make_view
from ._trace import Trace

# The Python classes behind `await completion`, `with buf.map_read() as view` and
# rt.finish_trace(), handed to the core once (Note [Python builders] in ext/bind/builders.cpp):
# the core never imports this package.
_core._set_builders(await_completion=await_completion, host_view=make_view, trace=Trace)


def default_runtime() -> Runtime:
    """The process-wide default Runtime, created on first use (held by the C++ core:
    Note [The default runtime] in ext/bind/bind_runtime.cpp).

    Setting the environment variable ``HRXARRAY_CHECK_VISIBILITY=1`` before its
    creation turns on the emulator's checked visibility mode, and
    ``HRXARRAY_CHECKED=1`` runs Loom programs in checked mode (see
    :mod:`hrxarray.loom`; every ``Runtime()`` created without ``checked=``
    reads it).

    After ``os.fork()`` (``multiprocessing``'s "fork" start method included) the
    child gets a new default runtime on first use, as PyTorch's CPU thread pool
    does: ``fork()`` copies only the calling thread, so the parent's lane
    threads do not exist there. A runtime made before the fork, and every
    buffer, array, graph and completion of it, raises ``UnsupportedError`` in
    the child (as CUDA does in PyTorch) instead of waiting for lanes that are
    gone. Copy what a child needs to NumPy before forking, or use the "spawn"
    or "forkserver" start method.
    """
    return _default_runtime()


def gpu() -> GpuDevice:
    """The default runtime's GPU (``default_runtime().gpu()``)."""
    return default_runtime().gpu()


def npu(index: int = 0) -> NpuDevice:
    """NPU number ``index`` of the default runtime (``default_runtime().npu(index)``)."""
    return default_runtime().npu(index)


def devices() -> list:
    """Every device of the default runtime: the GPU, then the NPUs."""
    return default_runtime().devices()
