"""The built-in programs of the emulated devices."""

import hrxarray._core


def npu(name: str, *, target: str = 'amd.xdna.strix_halo.17f0_11', **config) -> hrxarray._core.Artifact:
    """
    The built-in NPU program `name` ('copy', 'gemm', 'batched_gemm') specialised with Loom keys, as an Artifact for `target`.
    """

def gpu(name: str, *, runtime: hrxarray._core.Runtime | None = None, **config) -> hrxarray._core.GpuKernel:
    """
    The built-in GPU kernel `name` ('transform_i32', 'euler_bf16', 'add_f32'), loaded on the GPU of `runtime` (the default runtime when None); graphs of other runtimes refuse it.
    """

def load_npu_artifact(npu: hrxarray._core.NpuDevice, artifact: hrxarray._core.Artifact, columns: int, contract: hrxarray._core.KernelContract) -> hrxarray._core.NpuKernel:
    """
    HRX NpuDevice.load_artifact: validate the contract, require the exact target, 1..=8 columns and no constants (UnsupportedError), and charge the image bytes to the memory budget.
    """
