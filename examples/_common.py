"""Pieces shared by the HRX example programs in this folder (imported by them, not run)."""

from __future__ import annotations

import math
import re

import hrxarray as hx

RECORD = 4096  # the NPU copy program moves 4096-byte records
MAX_BYTES = 64 << 20


class UsageError(Exception):
    """A bad command line; the message is printed above the usage line."""


def parse_int(text: str) -> int:
    """A non-negative decimal integer as HRX's examples accept it (an optional '+', digits only)."""
    if not re.fullmatch(r"\+?[0-9]+", text):
        raise UsageError(f"invalid integer {text!r}")
    return int(text)


def parse_bytes(argv: list[str], default: int = 1 << 20) -> int:
    """The byte count of shared_roundtrip / shared_bench (argv[0] is the program), as HRX's examples take it."""
    args = argv[1:]
    if len(args) > 1:
        raise UsageError(f"expected at most one argument, got {len(args)}")
    if not args:
        return default
    value = parse_int(args[0])
    if value == 0 or value % RECORD or value > MAX_BYTES:
        raise UsageError(f"bytes must be a multiple of {RECORD} in {RECORD}..={MAX_BYTES}")
    return value


def percentile(sorted_samples: list[float], p: float) -> float:
    """Nearest-rank percentile: index ceil(n * p / 100) - 1 of the sorted samples."""
    index = max(math.ceil(len(sorted_samples) * p / 100) - 1, 0)
    return sorted_samples[index]


def load_passthrough(npu: hx.NpuDevice, nbytes: int) -> hx.NpuKernel:
    """The NPU copy program over `nbytes`, loaded on one column with HRX's own contract
    for the Loom passthrough (u32 words, 4-byte alignment)."""
    artifact = hx.kernels.npu("copy", config={"copy.packets": nbytes // RECORD})
    contract = hx.KernelContract(
        [
            hx.BindingContract(nbytes, 4, hx.Access.READ, "u32 passthrough"),
            hx.BindingContract(nbytes, 4, hx.Access.WRITE, "u32 passthrough"),
        ]
    )
    return npu.load_artifact(artifact, 1, contract)
