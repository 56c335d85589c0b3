"""Helpers shared by several test modules (tests/ is on sys.path under pytest)."""

import os

import pytest

import hrxarray as hx


def make_placement(name, rt):
    """The placement called `name` on runtime `rt`."""
    if name == "GpuLocal":
        return hx.GpuLocal()
    if name == "HostVisible":
        return hx.HostVisible()
    if name == "NpuLocal":
        return hx.NpuLocal(rt.npu())
    return hx.Shared(rt.npu())


# ext/check/sanitize.sh preloads the sanitizer runtime into the interpreter.
UNDER_ASAN = "libasan" in os.environ.get("LD_PRELOAD", "")

UNDER_TSAN = "libtsan" in os.environ.get("LD_PRELOAD", "")

# Forking a process that runs threads is not testable under the sanitizers:
# GCC 12's AddressSanitizer takes no lock of its allocator around fork(), so a
# child forked while another thread of the parent held it (a lane or pool
# thread allocating) waits for it for ever in its first malloc (seen: 2 of 30
# runs of the fork-child test, every child thread in SizeClassAllocator64::
# GetFromAllocator); ThreadSanitizer refuses to start threads after a
# multi-threaded fork ("not supported. Dying"). glibc's malloc has fork
# handlers, so the fork tests run in the normal suite.
skip_fork_under_sanitizers = pytest.mark.skipif(
    UNDER_ASAN or UNDER_TSAN,
    reason="fork of a threaded process: ASan's allocator lock stays held in the child; TSan refuses threads after it",
)


def run_killable(argv, timeout, what="the program", **popen_kwargs):
    """Run ``argv`` in a session of its own; the CompletedProcess (text). A hang fails the test.

    After ``timeout`` seconds the whole session is killed, so a hung program's
    children (forked workers, a cluster's processes) do not outlive it.
    """
    import os
    import signal
    import subprocess

    import pytest

    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, **popen_kwargs)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        pytest.fail(f"{what} hung for {timeout} s; stdout: {stdout[-4000:]!r}; stderr: {stderr[-4000:]!r}")
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def cmul_unfused(a, b):
    """NumPy's complex multiply formula without fused multiply-add, in the operands' precision.

    NumPy's own SIMD loops fuse (fmaddsub) on hosts with FMA, which hrxarray
    does not (same bits on every host), so this is the reference for its bits.
    """
    import numpy as np

    p = a.real.dtype.type
    re = a.real * b.real - a.imag * b.imag
    im = a.real * b.imag + a.imag * b.real
    out = np.empty(np.broadcast_shapes(a.shape, b.shape), a.dtype)
    out.real, out.imag = re.astype(p), im.astype(p)
    return out
