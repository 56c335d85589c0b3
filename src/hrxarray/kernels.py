"""Built-in kernels of the emulated devices (HRX's Loom fixtures).

``npu(name, **config)`` returns an :class:`Artifact`, a compiled NPU program
that ``npu_device.load_artifact(artifact, columns, contract)`` loads as an
``NpuKernel``; ``gpu(name, **config)`` returns a loaded ``GpuKernel``. Run
either in a graph: ``g.npu(kernel, views)`` / ``g.gpu(kernel, views)``, one
view per binding of the kernel's contract, in order.

Configuration keys use Loom's spelling, so dotted keys are passed through a
dict: ``npu("copy", **{"copy.packets": 4})``.

Every program is Loom code shipped with the package (``hrxarray/programs/``:
``copy.loom``, ``gemm.loom`` with ``gemm`` and ``batched_gemm``,
``elementwise.loom`` with the three GPU kernels), compiled by the emulated
provider's Loom frontend and run by its executor. NPU keys are the modules'
``config.decl`` keys; a GPU kernel's ``elements`` is its workload and its
``%count`` device argument, and ``dt`` / ``delta`` are ``f32`` device
arguments of its constant block.

NPU programs (bindings in order; every NPU binding's contract declares 4-byte
alignment, as HRX's own contracts for these programs do):

``copy``
    ``copy.packets`` (int ≥ 1, default 1) records of 4096 bytes;
    ``src`` READ, ``dst`` WRITE, ``packets * 4096`` bytes each: ``dst = src``.
``gemm``
    One row-major 8×8 problem: ``lhs`` READ (64 bf16, 128 B), ``rhs`` READ
    (128 B), ``output`` WRITE (64 float32, 256 B): ``C[i, j] = sum_k A[i, k] *
    B[k, j]`` with HRX's fixture numerics by default: ``gemm.bfp16`` (0 or 1,
    default 1) = 1 encodes both bf16 operands to bfp16ebs8 before the
    multiply, as the NPU's BFP path does: A in 8-value blocks along its rows
    and B along its columns (``bfp16_quantize`` semantics, K the blocked axis
    of both; the input buffers are not modified), with ``gemm.rounding``
    (0 = floor, the default, as HRX's fixture schema; 1 = half to even) as
    the mantissa rounding. The result has the bits of
    ``hrxarray.numerics.matmul(a, b, compute="bfp16")``; a block holding NaN
    or Inf fails the region (``ExecutionError``). ``gemm.bfp16 = 0`` is the
    plain-bf16 opt-in: the operands are used as given.
    The multiply is ``hrxarray.numerics.matmul``'s: the bf16 inputs are
    widened exactly to float32, and a float32 accumulator starting at +0.0
    takes one fused multiply-add per k (the product exact, one rounding to
    nearest even per step) in the order k = 1, 0, 3, 2, 5, 4, 7, 6
    (VDPBF16PS's pairs), the same bits on every host. The NPU has no
    denormals: subnormal inputs count as zero and every subnormal partial sum
    becomes a zero of the same sign. Integer-valued inputs in -127..127 stay
    exact through bfp16 and give exact results either way.
``batched_gemm``
    ``gemm.batch`` (1..=16384, default 1) consecutive 8×8 problems in the same
    three bindings (``batch * 128``, ``batch * 128``, ``batch * 256`` bytes),
    and the two ``gemm.*`` keys above.

GPU kernels (``elements`` is required, ≥ 1):

``transform_i32``
    ``in`` READ, ``out`` WRITE, int32, 4-byte aligned:
    ``out[i] = in[i] * 3 + 7`` with two's-complement wraparound.
``euler_bf16``
    ``x`` READ_WRITE, ``v`` READ, bfloat16, 2-byte aligned; ``dt`` (float,
    default 1.0, rounded to float32): ``x[i] += dt * v[i]`` computed in float32
    (the product and the sum each rounded to float32), the result rounded to
    the nearest bfloat16, ties to even (NaN stays a quiet NaN).
``add_f32``
    ``C`` READ_WRITE, float32, 4-byte aligned; ``delta`` (float, default 1.0,
    rounded to float32): ``C[i] = C[i] + delta`` in float32.

Unknown names, unknown keys, missing required keys, out-of-range values, a
float where an integer is expected and floats outside float32's finite range
raise ``ValueError`` naming them; values that are neither int nor float raise
``TypeError``.
"""

from __future__ import annotations

from collections.abc import Mapping

from ._core import Artifact, BindingContract, GpuKernel, Kernel, KernelContract, NpuKernel, Runtime
from ._core import kernels as _k

__all__ = [
    "npu",
    "gpu",
    "Artifact",
    "BindingContract",
    "KernelContract",
    "Kernel",
    "GpuKernel",
    "NpuKernel",
    "NPU_TARGET",
]

#: The exact XDNA deployment target of the Strix Halo NPU5.
NPU_TARGET = "amd.xdna.strix_halo.17f0_11"


def npu(name: str, *, target: str = NPU_TARGET, config: Mapping[str, int | float] | None = None,
        **keys: int | float) -> Artifact:
    """The built-in NPU program ``name`` as an :class:`Artifact`.

    ``name`` is ``"copy"``, ``"gemm"`` or ``"batched_gemm"``; the Loom keys
    (``"copy.packets"``, ``"gemm.batch"``) come as ``config={...}`` (as
    ``hx.loom.compile`` takes them; a type checker can follow it) or as keyword
    arguments (``**{"gemm.batch": 16}``); a key given both ways is a
    ``TypeError``. ``target`` is the XDNA
    deployment target the artifact is compiled for, validated as HRX validates
    targets: the exact XDNA target or a bare AMDGPU architecture (``gfx`` and
    3-4 lowercase hex digits); anything else (``"gfx1151:xnack-"``) raises
    ``ValueError`` here, and loading it on a device with another target raises
    ``UnsupportedError``. The artifact's
    ``.contract`` is what its code needs, ready to pass to
    ``npu_device.load_artifact(artifact, columns, artifact.contract)``.

    >>> art = npu("copy", config={"copy.packets": 4})
    >>> art.config, art.contract.bindings[0].bytes
    ({'copy.packets': 4}, 16384)
    """
    return _k.npu(name, target=target, **_merge(config, keys, "kernels.npu"))


def _merge(config: Mapping[str, int | float] | None, keys: dict[str, int | float], op: str) -> dict[str, int | float]:
    if config is None:
        return keys
    both = sorted(set(config) & set(keys))
    if both:
        raise TypeError(f"{op}: {', '.join(both)} given both in config= and as a keyword argument")
    return {**config, **keys}


def gpu(name: str, *, runtime: Runtime | None = None, config: Mapping[str, int | float] | None = None,
        **keys: int | float) -> GpuKernel:
    """The built-in GPU kernel ``name``, loaded on ``runtime``'s GPU, as a :class:`GpuKernel`.

    ``name`` is ``"transform_i32"``, ``"euler_bf16"`` or ``"add_f32"``;
    ``elements`` is required, ``dt`` (euler_bf16) and ``delta`` (add_f32)
    default to 1.0. See the module docstring for each kernel's semantics.
    The kernel belongs to ``runtime`` (``hx.default_runtime()`` when None),
    as HRX's ``Runtime::load_gpu_kernel`` makes it: a graph of another runtime
    refuses it with ``ValueError``.

    >>> k = gpu("transform_i32", elements=1024)
    >>> [b.bytes for b in k.contract.bindings]
    [4096, 4096]
    """
    from . import loom

    loom._prepare_builtins()  # the built-ins' native code, once per process
    return _k.gpu(name, runtime=runtime, **_merge(config, keys, "kernels.gpu"))
