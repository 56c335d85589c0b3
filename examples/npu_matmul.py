"""A bf16 matmul on the NPU through the array API, a GPU epilogue, and zero-copy hand-off.

Run: python examples/npu_matmul.py [m=256] [k=512] [n=128]

Each dimension must be a positive integer, with k a multiple of 8 (the NPU's bfp16 blocks run along
k) and m*k, k*n, m*n at most 2**24; at most three arguments. A bad argument prints a usage error on
stderr and exits with status 2; ``-h``/``--help`` prints the usage and exits 0.

The program::

    a = hx.asarray(A, dtype=hx.bfloat16, placement=hx.Shared(hx.npu()))   # host -> Shared memory
    b = hx.asarray(B, dtype=hx.bfloat16, placement=hx.Shared(hx.npu()))
    c = hx.matmul(a, b)                          # npu lane: bf16 x bf16 -> float32
    q = hx.matmul(a, b, compute="bfp16")         # npu lane: through bfp16ebs8, as the NPU's BFP path
    y = hx.maximum(c * 0.5 + bias, 0)            # GPU compute lane: the elementwise epilogue
    np.from_dlpack(y), torch.from_dlpack(y)      # zero-copy: same address, no copy

Every operation returns at once (a future); the hand-off waits for the epilogue. Checks: ``c``
equals hrxarray.numerics.matmul of the bf16 inputs bit for bit, and NumPy's float64 product within
the accumulation error bound; ``q`` equals numerics.matmul(compute="bfp16"); ``y`` equals the same
epilogue computed by NumPy in float32; the NumPy (and torch, when installed) views share the
device array's memory and see a write made through it. The trace shows which lane ran what.

Prints ``M=.. K=.. N=..: npu matmul matches numerics (bf16 and bfp16), epilogue matches NumPy,
zero-copy hand-off to numpy[, torch]`` and the lanes of the traced regions.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

import hrxarray as hx
from _common import UsageError, parse_int

PROGRAM = "npu_matmul.py"
USAGE = f"usage: python {PROGRAM} [m=256] [k=512] [n=128]"
LIMIT = 1 << 24


def parse(argv: list[str]) -> tuple[int, int, int]:
    args = argv[1:]
    if len(args) > 3:
        raise UsageError(f"expected at most three arguments, got {len(args)}")
    dims = [256, 512, 128]
    for i, text in enumerate(args):
        dims[i] = parse_int(text)
    m, k, n = dims
    if min(dims) == 0:
        raise UsageError("m, k and n must be positive")
    if k % 8:
        raise UsageError("k must be a multiple of 8 (bfp16 blocks run along k)")
    if max(m * k, k * n, m * n) > LIMIT:
        raise UsageError(f"m*k, k*n and m*n must each be at most {LIMIT}")
    return m, k, n


def main(argv: list[str]) -> int:
    if any(a in ("-h", "--help") for a in argv[1:]):
        print(USAGE)
        return 0
    try:
        m, k, n = parse(argv)
    except UsageError as exc:
        print(f"{PROGRAM}: error: {exc}", file=sys.stderr)
        print(USAGE, file=sys.stderr)
        return 2

    from hrxarray import numerics

    rng = np.random.default_rng(2026)
    A = rng.standard_normal((m, k)).astype(np.float32)
    B = rng.standard_normal((k, n)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)

    rt = hx.default_runtime()
    shared = hx.Shared(hx.npu())
    rt.start_trace(64)
    a = hx.asarray(A, dtype=hx.bfloat16, placement=shared)
    b = hx.asarray(B, dtype=hx.bfloat16, placement=shared)
    c = hx.matmul(a, b)
    q = hx.matmul(a, b, compute="bfp16")
    y = hx.maximum(c * 0.5 + hx.asarray(bias, placement=shared), 0)
    y.block_until_ready()
    q.block_until_ready()  # independent of y: wait for it too before reading the trace
    lanes = [e["lane"] for e in rt.finish_trace().events]

    a16, b16 = A.astype(hx.bfloat16), B.astype(hx.bfloat16)
    want_c = numerics.matmul(a16, b16)
    got_c = hx.to_numpy(c)
    if c.dtype != np.float32 or not np.array_equal(got_c, want_c):
        print(f"{PROGRAM}: NPU matmul differs from hrxarray.numerics.matmul", file=sys.stderr)
        return 1
    exact = a16.astype(np.float64) @ b16.astype(np.float64)
    bound = k * 2.0**-24 * (np.abs(a16.astype(np.float64)) @ np.abs(b16.astype(np.float64))) * 1.01
    if np.any(np.abs(got_c - exact) > bound):
        print(f"{PROGRAM}: NPU matmul outside the float32 accumulation bound", file=sys.stderr)
        return 1
    if not np.array_equal(hx.to_numpy(q), numerics.matmul(a16, b16, compute="bfp16")):
        print(f"{PROGRAM}: bfp16 matmul differs from hrxarray.numerics.matmul(compute='bfp16')", file=sys.stderr)
        return 1
    want_y = np.maximum(want_c * np.float32(0.5) + bias, np.float32(0))
    view = np.from_dlpack(y)
    if not np.array_equal(view, want_y):
        print(f"{PROGRAM}: epilogue differs from NumPy", file=sys.stderr)
        return 1
    receivers = ["numpy"]
    address = view.__array_interface__["data"][0]
    views: list[Any] = [view]
    torch_from_dlpack: Callable[[Any], Any] | None = None
    try:
        from torch.utils.dlpack import from_dlpack
    except ImportError:
        pass
    else:
        torch_from_dlpack = from_dlpack
    if torch_from_dlpack is not None:
        t = torch_from_dlpack(y)
        if t.data_ptr() != address:
            print(f"{PROGRAM}: torch.from_dlpack copied", file=sys.stderr)
            return 1
        views.append(t)
        receivers.append("torch")
    view[0, 0] = 12345.0  # a write through one view is seen by every other
    if torch_from_dlpack is not None and float(views[1][0, 0]) != 12345.0:
        print(f"{PROGRAM}: the torch view does not share memory with the NumPy view", file=sys.stderr)
        return 1
    del views, view
    if float(y[0, 0]) != 12345.0:
        print(f"{PROGRAM}: the device array does not see the host write", file=sys.stderr)
        return 1
    print(f"M={m} K={k} N={n}: npu matmul matches numerics (bf16 and bfp16), epilogue matches NumPy, "
          f"zero-copy hand-off to {', '.join(receivers)}")
    print("lanes: " + " ".join(lanes))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
