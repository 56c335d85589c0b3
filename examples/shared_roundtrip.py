"""GPU fill -> NPU passthrough -> GPU copy on Shared buffers, with no host staging (HRX §5.3).

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

import re
import sys

import numpy as np

import hrxarray as hx

PROGRAM = "shared_roundtrip.py"
USAGE = f"usage: python {PROGRAM} [bytes=1048576]"
DEFAULT_BYTES = 1 << 20
RECORD = 4096
MAX_BYTES = 64 << 20
FILL = 0x5A
EXECUTIONS = 10


class UsageError(Exception):
    """A bad command line; the message is printed above the usage line."""


def parse_bytes(argv: list[str]) -> int:
    """The byte count from the command line (argv[0] is the program), per §5.3."""
    args = argv[1:]
    if len(args) > 1:
        raise UsageError(f"expected at most one argument, got {len(args)}")
    if not args:
        return DEFAULT_BYTES
    text = args[0]
    if not re.fullmatch(r"\+?[0-9]+", text):
        raise UsageError(f"invalid integer {text!r}")
    value = int(text)
    if value == 0 or value % RECORD or value > MAX_BYTES:
        raise UsageError(f"bytes must be a multiple of {RECORD} in {RECORD}..={MAX_BYTES}")
    return value


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
    artifact = hx.kernels.npu("copy", **{"copy.packets": nbytes // RECORD})
    # HRX's own contract for the Loom passthrough: u32 words, 4-byte alignment.
    contract = hx.KernelContract(
        [
            hx.BindingContract(nbytes, 4, hx.Access.READ, "u32 passthrough"),
            hx.BindingContract(nbytes, 4, hx.Access.WRITE, "u32 passthrough"),
        ]
    )
    passthrough = npu.load_artifact(artifact, 1, contract)

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
