"""Warm end-to-end latency of an NPU passthrough in a coordinated graph (HRX §5.4).

Run: python examples/shared_bench.py [bytes=1048576]

Arguments as in ``shared_roundtrip.py`` (§5.3): at most one; ``bytes`` a multiple of 4096 in
4096..=67108864; a bad argument prints a usage error on stderr and exits with status 2.

Two ``Shared(npu)`` buffers ``a`` and ``c`` and one prepared graph: ``fill(a, 0x35)`` on the GPU's
compute lane, then the NPU ``copy`` program ``a -> c`` on the npu lane. Five warm-up executions,
then 100 timed ones (each ``submit()`` + ``result()``, wall time with ``time.perf_counter``); then
every byte of ``c`` must be 0x35 ("incorrect benchmark output" otherwise). ``c`` starts zero-filled,
so a graph that never ran the NPU program fails the check.

Prints ``bytes=N p50_us=X p95_us=Y``: nearest-rank percentiles (the sample at index
ceil(n * p / 100) - 1 of the sorted times), in microseconds with two decimals. On the emulated
fabric these are host-observed times of CPU emulation, not NPU timings.
"""

from __future__ import annotations

import math
import re
import sys
import time

import numpy as np

import hrxarray as hx

PROGRAM = "shared_bench.py"
USAGE = f"usage: python {PROGRAM} [bytes=1048576]"
DEFAULT_BYTES = 1 << 20
RECORD = 4096
MAX_BYTES = 64 << 20
FILL = 0x35
WARMUPS = 5
RUNS = 100


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


def percentile(sorted_samples: list[float], p: float) -> float:
    """Nearest-rank percentile: index ceil(n * p / 100) - 1 of the sorted samples."""
    index = max(math.ceil(len(sorted_samples) * p / 100) - 1, 0)
    return sorted_samples[index]


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

    a = rt.allocate(nbytes, hx.Shared(npu))
    c = rt.allocate(nbytes, hx.Shared(npu))
    g = rt.graph()
    g.fill(a, FILL)
    g.npu(passthrough, [a, c])
    graph = g.prepare()

    for _ in range(WARMUPS):
        graph.submit().result()
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter()
        graph.submit().result()
        samples.append((time.perf_counter() - start) * 1e6)

    with c.map_read() as view:
        bad = np.flatnonzero(view != FILL)
        if bad.size:
            first = int(bad[0])
            print(
                f"incorrect benchmark output: byte {first} is 0x{int(view[first]):02x}, "
                f"expected 0x{FILL:02x} ({bad.size} bytes wrong)",
                file=sys.stderr,
            )
            return 1

    samples.sort()
    print(f"bytes={nbytes} p50_us={percentile(samples, 50):.2f} p95_us={percentile(samples, 95):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
