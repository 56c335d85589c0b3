"""The LLM-inference kernels of examples/loom/*.loom and a small launcher for them.

Each kernel lives in its own ``.loom`` file beside this module (read them: they are the point). This
module only names them and runs them on the emulated GPU through hrxarray's public Loom API::

    art = hx.loom.compile(source("softmax_rows"), "softmax_rows", target="gfx1151")
    lc = art.launch_config(rows, cols)                       # the kernel's own launch program
    k = rt.load_gpu_kernel(art, lc.workgroups, lc.workgroup_size, art.contract_for(rows=rows, cols=cols))
    g = rt.graph(); g.gpu(k, buffers); g.prepare().submit().wait()

``Launch`` wraps those steps for NumPy arrays: it copies the arrays into device buffers once, prepares
the graph once, and ``run()`` submits it again (what a benchmark times); ``result(i)`` reads buffer
``i`` back with its array's shape and dtype. The example ``examples/llm_layer.py``, the benchmark
``bench/loom.py`` and ``tests/test_loom_llm_kernels.py`` use it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

import hrxarray as hx

HERE = Path(__file__).resolve().parent

# kernel name -> (workload argument names, device scalar names): buffers follow the scalars.
KERNELS = {
    "add_f32": (("count",), ("count",)),
    "exp_f32": (("count",), ("count",)),
    "softmax_rows": (("rows", "cols"), ("rows", "cols")),
    "rms_norm": (("rows", "cols"), ("rows", "cols", "eps")),
    "matmul_tiled": (("m", "n", "k"), ("m", "n", "k")),
    "matvec_q8_0": (("rows", "cols"), ("rows", "cols")),
    "flash_decode": (("heads", "kv_len"), ("heads", "kv_len", "scale")),
    "rope": (("tokens", "heads", "dim"), ("tokens", "heads", "dim", "pos0")),
}


def source(name: str) -> str:
    """The Loom source of kernel ``name`` (examples/loom/<name>.loom)."""
    return (HERE / f"{name}.loom").read_text()


def compile_kernel(name: str, config: dict[str, Any] | None = None) -> hx.Artifact:
    """``hx.loom.compile`` of kernel ``name`` for gfx1151 (cached by hrxarray per source and config)."""
    return hx.loom.compile(source(name), name, target="gfx1151", config=config)


class Launch:
    """Kernel ``name`` loaded for one problem: its buffers hold ``arrays`` (in the device signature's
    buffer order; outputs may be ``np.empty`` arrays), and ``run()`` runs the prepared graph again.

    ``scalars`` names every device scalar (the workload takes the values of the same names).
    """

    def __init__(self, name: str, scalars: dict[str, Any], arrays: list[np.ndarray],
                 runtime: hx.Runtime | None = None, config: dict[str, Any] | None = None):
        workload_names, scalar_names = KERNELS[name]
        if set(scalars) != set(scalar_names):
            raise TypeError(f"{name}: scalars must be {scalar_names}, got {tuple(scalars)}")
        self.name = name
        self.runtime = rt = runtime or hx.default_runtime()
        self.artifact = art = compile_kernel(name, config)
        workload = [scalars[w] for w in workload_names]
        self.launch_config = lc = art.launch_config(*workload)
        contract = art.contract_for(**scalars)
        self.kernel = rt.load_gpu_kernel(art, lc.workgroups, lc.workgroup_size, contract, workload=workload)
        self.arrays = [np.ascontiguousarray(a) for a in arrays]
        self.buffers = [rt.allocate(max(a.nbytes, 1), hx.HostVisible()) for a in self.arrays]
        for buf, a in zip(self.buffers, self.arrays):
            self.write(buf, a)
        g = rt.graph()
        g.gpu(self.kernel, self.buffers)
        self.graph = g.prepare()

    @staticmethod
    def write(buf: hx.Buffer, array: np.ndarray) -> None:
        """Copy ``array``'s bytes to the start of device buffer ``buf``."""
        data = np.ascontiguousarray(array).view(np.uint8).reshape(-1)
        with buf.map_write() as m:
            m[: data.size] = data

    def run(self) -> None:
        """Run the kernel once on the buffers' current contents and wait for it."""
        c = self.graph.submit()
        if not c.wait(3600.0):
            raise RuntimeError(f"{self.name}: the kernel did not finish within an hour")
        error = c.exception()
        if error is not None:
            raise error

    def result(self, i: int) -> np.ndarray:
        """Buffer ``i``'s contents as an array of the shape and dtype of the array it started from."""
        a = self.arrays[i]
        with self.buffers[i].map_read() as m:
            return np.array(m[: a.nbytes]).view(a.dtype).reshape(a.shape)


def run(name: str, scalars: dict[str, Any], arrays: list[np.ndarray], outputs: list[int],
        **kw: Any) -> list[np.ndarray]:
    """Run kernel ``name`` once on ``arrays`` and return the arrays at positions ``outputs``."""
    launch = Launch(name, scalars, arrays, **kw)
    launch.run()
    return [launch.result(i) for i in outputs]
