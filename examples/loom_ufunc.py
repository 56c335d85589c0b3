"""A fused bf16 operation written in Loom, used as a ufunc on DeviceArrays.

Run: python examples/loom_ufunc.py [n=1000000]

The kernel computes ``y = a * x + b`` for bfloat16 ``x`` and ``y`` and float32 scalars ``a``, ``b``:
each element is widened exactly to float32, multiplied and added (each step rounded to float32),
then rounded to the nearest bfloat16 (ties to even), in one pass over memory. ``hx.loom.ufunc``
turns it into a callable with NumPy's conventions::

    axpb = hx.loom.ufunc(SOURCE, "axpb_bf16")      # compile once (cached), nin=1, nout=1
    y = axpb(x, a=0.5, b=-1.0)                     # broadcasting, out=, asynchronous result

The kernel's workload signature is ``(%count: index)`` (the element count, from which its launch
program computes the grid) and its device signature ``(%count, %a, %b, %x, %y)``: scalars by name,
then the input and the output buffer. The result is checked bit for bit against the same
arithmetic in NumPy and ml_dtypes. Prints ``n=..: loom ufunc y = a*x + b (bf16) matches NumPy``.
"""

from __future__ import annotations

import sys

import ml_dtypes
import numpy as np

import hrxarray as hx
from _common import UsageError, parse_int

USAGE = "usage: python loom_ufunc.py [n=1000000]"

SOURCE = """\
amdgpu.target<gfx1151> @gpu
kernel.def target(@gpu) export("axpb_bf16") @axpb_bf16(%count: index) {
  %one = index.constant 1 : index
  %width = index.constant 256 : index
  %spare = index.constant 255 : index
  %n = index.assume %count [range(%count, 1, 1073741824)] : index
  %padded = index.add %n, %spare : index
  %groups = index.div %padded, %width : index
  kernel.launch.config workgroups(%groups, %one, %one) workgroup_size(%width, %one, %one) : index
} launch(%count: index, %a: f32, %b: f32, %x: buffer, %y: buffer) {
  %width = index.constant 256 : index
  %origin = index.constant 0 : offset
  %item = kernel.workitem.id<x> : index
  %group = kernel.workgroup.id<x> : index
  %first = index.mul %group, %width : index
  %i = index.add %first, %item : index
  %xs = buffer.view %x[%origin] : buffer -> view<[%count]xbf16>
  %ys = buffer.view %y[%origin] : buffer -> view<[%count]xbf16>
  %inside = index.cmp ult, %i, %count : index
  scf.if %inside {
    %v = view.load %xs[%i] : view<[%count]xbf16> -> bf16
    %w = scalar.extf %v : bf16 to f32
    %p = scalar.mulf %a, %w : f32
    %s = scalar.addf %p, %b : f32
    %r = scalar.fptrunc %s : f32 to bf16
    view.store %r, %ys[%i] : bf16, view<[%count]xbf16>
  }
  kernel.return
}
"""


def main(argv: list[str]) -> int:
    if any(a in ("-h", "--help") for a in argv[1:]):
        print(USAGE)
        return 0
    try:
        if len(argv) > 2:
            raise UsageError(f"expected at most one argument, got {len(argv) - 1}")
        n = parse_int(argv[1]) if len(argv) > 1 else 1_000_000
        if not 1 <= n <= 1 << 26:
            raise UsageError("n must be in 1..=67108864")
    except UsageError as e:
        print(f"error: {e}\n{USAGE}", file=sys.stderr)
        return 2

    axpb = hx.loom.ufunc(SOURCE, "axpb_bf16")
    assert axpb.types == ["E->E"], axpb.types  # 'E' is bfloat16's type character

    rng = np.random.default_rng(15)
    xs = rng.standard_normal(n).astype(ml_dtypes.bfloat16)
    a, b = 0.5, -1.0
    x = hx.asarray(xs)
    y = axpb(x, a=a, b=b)                        # runs on the GPU compute lane
    z = axpb(y.reshape(-1, 1)[:1], a=2.0, b=0.0)  # a second call, broadcast-free, ordered after y

    want = (np.float32(a) * xs.astype(np.float32) + np.float32(b)).astype(ml_dtypes.bfloat16)
    got = hx.to_numpy(y)
    assert got.dtype == ml_dtypes.bfloat16
    assert np.array_equal(got.view(np.uint16), want.view(np.uint16)), "bf16 results differ from NumPy"
    z_want = (np.float32(2.0) * want[:1].astype(np.float32)).astype(ml_dtypes.bfloat16)
    assert np.array_equal(hx.to_numpy(z).reshape(-1).view(np.uint16), z_want.view(np.uint16))
    print(f"n={n}: loom ufunc y = a*x + b (bf16) matches NumPy")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
