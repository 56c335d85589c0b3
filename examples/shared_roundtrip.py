"""GPU fill -> NPU passthrough -> GPU copy on Shared buffers, with no host staging.

The Python version of HRX's ``shared_roundtrip`` example (hrx-rs 0.10.1's ``examples/shared_roundtrip.rs``:
https://docs.rs/crate/hrx-rs/0.10.1/source/examples/shared_roundtrip.rs).

Run: python examples/shared_roundtrip.py [bytes=1048576]

``bytes`` must be a multiple of 4096 in 4096..=67108864 (the NPU ``copy`` program streams 4096-byte
records, ``copy.packets = bytes / 4096``); at most one argument is accepted. A bad argument prints a
usage error on stderr and exits with status 2; ``-h``/``--help`` prints the usage and exits 0.

Three ``Shared(npu)`` buffers ``a``, ``c`` and ``result`` and one prepared graph::

    fill(a, 0x5a)       compute lane (GPU)
    npu copy(a -> c)    npu lane
    copy(result <- c)   compute lane: both sides are host mapped, so the copy is neither an
                        upload nor a download

The graph is prepared once and executed ten times. A fill byte is fixed when the graph is built,
so before each execution the host overwrites ``c`` and ``result`` with a different poison byte
(never 0x5a): a run that skipped a region would leave the poison behind and fail the check. After
each execution every byte of ``result`` must be 0x5a ("GPU/NPU roundtrip mismatch" otherwise).

The NPU program is loaded with HRX's contract: bytes READ and bytes WRITE, alignment 4, layout
label "u32 passthrough".

Prints ``GPU -> NPU -> GPU: all N bytes correct, 10 executions, R prepared regions``.
"""

from __future__ import annotations

import sys

import numpy as np

import hrxarray as hx
from _common import UsageError, load_passthrough, parse_bytes

PROGRAM = "shared_roundtrip.py"
USAGE = f"usage: python {PROGRAM} [bytes=1048576]"
FILL = 0x5A
EXECUTIONS = 10


def main(argv: list[str]) -> int:
    if any(a in ("-h", "--help") for a in argv[1:]):
        print(USAGE)
        return 0
    try:
        nbytes = parse_bytes(argv)
    except UsageError as exc:
        print(f"{PROGRAM}: error: {exc}", file=sys.stderr)
        print(USAGE, file=sys.stderr)
        return 2

    rt = hx.Runtime()
    npu = rt.npu()
    passthrough = load_passthrough(npu, nbytes)

    a, c, result = (rt.allocate(nbytes, hx.Shared(npu)) for _ in range(3))
    g = rt.graph()
    g.fill(a, FILL)
    g.npu(passthrough, [a, c])
    g.copy(result, c)
    graph = g.prepare()

    for execution in range(EXECUTIONS):
        poison = execution + 1  # 0x01..0x0a, never the fill byte
        for buf in (c, result):
            with buf.map_write() as view:
                view[:] = poison
        graph.submit().result()
        with result.map_read() as view:
            bad = np.flatnonzero(view != FILL)
            if bad.size:
                first = int(bad[0])
                print(
                    f"GPU/NPU roundtrip mismatch: execution {execution}, byte {first} is "
                    f"0x{int(view[first]):02x}, expected 0x{FILL:02x} ({bad.size} bytes wrong)",
                    file=sys.stderr,
                )
                return 1

    print(
        f"GPU -> NPU -> GPU: all {nbytes} bytes correct, {EXECUTIONS} executions, "
        f"{len(graph.regions)} prepared regions"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
