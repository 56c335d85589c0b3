"""Workers bound to devices: the worker plugin and a loopback cluster with one worker per device.

A worker owns one device: one process, one thread (device submission is
serial, and two processes share no device state), the device named by
``HRX_VISIBLE_DEVICES`` (as ``CUDA_VISIBLE_DEVICES`` names a GPU: the process
then sees that device as its first), and the abstract resource ``NPU=1`` so
that NPU-annotated tasks only go to NPU workers. On one machine every worker
runs an emulated fabric; on several, the same specification starts one
worker per NPU on each (``dask worker ADDR --nthreads 1 --resources NPU=1``
with ``HRX_VISIBLE_DEVICES`` set, and the plugin registered by the client).
"""

from __future__ import annotations

import os
from typing import Any

from distributed import Nanny, Scheduler, SpecCluster, Worker, WorkerPlugin

from .. import _serialize

#: This process's binding once :class:`DevicePlugin` has set it up (``hrxarray doctor`` reports it).
binding: dict[str, str] | None = None


class DevicePlugin(WorkerPlugin):
    """Binds a worker to one device: ``"npu:N"`` (the NPU ``HRX_VISIBLE_DEVICES`` makes visible) or ``"cpu"``.

    ``setup`` opens the device, makes arrays that arrive on this worker land on
    it, and records the binding on the worker (``worker.hrx_binding``) and for
    ``hrxarray doctor``.
    """

    name = "hrxarray-device"

    def __init__(self, device: str | None = None) -> None:
        self.device = device

    def setup(self, worker: Any) -> None:
        global binding
        from .._core import Shared
        from .._runtime import default_runtime, npu as default_npu

        device = self.device or os.environ.get("HRX_VISIBLE_DEVICES") or "cpu"
        if device.startswith("npu"):
            npu = default_npu()  # the visible NPU is the process's first
            _serialize.set_receiving_npu(npu)
            placement = repr(Shared(npu))
        elif device == "cpu":
            placement = repr(Shared(default_npu()))
        else:
            raise ValueError(f"DevicePlugin: device must be 'npu:N' or 'cpu', got {device!r}")
        binding = {"device": device, "placement": placement, "backend": default_runtime().backend,
                   "worker": str(getattr(worker, "address", "")),
                   "resources": ",".join(f"{k}={v}" for k, v in _resources(worker).items())}
        worker.hrx_binding = dict(binding)


def _resources(worker: Any) -> dict:
    state = getattr(worker, "state", None)
    return dict(getattr(state, "total_resources", None) or {})


def _worker_spec(device: str, host: str, processes: bool, kernel_threads: int) -> dict:
    resources = {"NPU": 1} if device.startswith("npu") else {}
    options: dict[str, Any] = {"nthreads": 1, "resources": resources, "host": host,
                               "plugins": {DevicePlugin(device)}}
    if processes:
        # One core per device: the emulated kernels' thread pool too (as the Nanny caps OpenBLAS's).
        options["env"] = {"HRX_VISIBLE_DEVICES": device if device != "cpu" else "",
                          "HRXARRAY_NUM_THREADS": str(kernel_threads)}
    return {"cls": Nanny if processes else Worker, "options": options}


def local_cluster(npu: int = 2, cpu: int = 0, *, processes: bool = True, host: str = "127.0.0.1",
                  kernel_threads: int = 1, **kwargs: Any) -> SpecCluster:
    """A cluster on loopback with one single-threaded worker per device: ``npu`` NPU workers, ``cpu`` CPU workers.

    NPU workers are named ``npu0``, ``npu1``, ... and declare the resource
    ``NPU=1``; CPU workers (``cpu0``, ...) declare none, so tasks asked to need
    an NPU (``client.compute(x, resources={"NPU": 1})``) never run there. Each
    worker is a separate process (``processes=True``) with ``HRX_VISIBLE_DEVICES``
    naming its device and ``HRXARRAY_NUM_THREADS=kernel_threads`` (1: a core per
    device) sizing its emulated kernels' thread pool. Extra keyword arguments go
    to ``SpecCluster``.
    """
    if npu < 0 or cpu < 0 or npu + cpu == 0:
        raise ValueError(f"local_cluster: need at least one worker, got npu={npu}, cpu={cpu}")
    workers = {f"npu{i}": _worker_spec(f"npu:{i}", host, processes, kernel_threads) for i in range(npu)}
    workers.update({f"cpu{i}": _worker_spec("cpu", host, processes, kernel_threads) for i in range(cpu)})
    scheduler = {"cls": Scheduler, "options": {"host": host, "dashboard": False, "dashboard_address": ":0"}}
    kwargs.setdefault("asynchronous", False)
    return SpecCluster(workers=workers, scheduler=scheduler, **kwargs)
