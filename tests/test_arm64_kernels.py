"""The kernels library built for arm64 gives the same bits as on this machine.

No arm64 hardware is at hand, so the library (the ``hrx_kernels`` sources of
CMakeLists.txt) and the battery in ``ext/check/kernels_check.cpp`` are built
twice, natively (AVX-512 / AVX2 paths where the CPU has them) and with Debian's
aarch64 cross compiler (the portable paths), and the arm64 build runs under
qemu-user. Every kernel path is bit-identical by contract, so both must print
the same ``name hash`` lines. Skipped when the cross compiler or qemu is absent
(``apt-get install g++-aarch64-linux-gnu qemu-user``; ``.ci/run`` does that
where it can).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FLAGS = ["-std=c++20", "-O3", "-ffp-contract=off", f"-I{ROOT / 'ext/core'}"]
HOST_CXX = shutil.which("g++") or shutil.which("c++")
CROSS_CXX = shutil.which("aarch64-linux-gnu-g++")
QEMU = shutil.which("qemu-aarch64") or shutil.which("qemu-aarch64-static")

pytestmark = pytest.mark.skipif(
    not (HOST_CXX and CROSS_CXX and QEMU),
    reason="needs g++ for aarch64 and qemu-user (Debian: g++-aarch64-linux-gnu qemu-user)",
)

EM_AARCH64 = 183
EM_X86_64 = 62


def kernel_sources() -> list[Path]:
    """The hrx_kernels library's sources, read from CMakeLists.txt so the two never drift apart."""
    text = (ROOT / "CMakeLists.txt").read_text()
    block = re.search(r"add_library\(hrx_kernels STATIC(.*?)\)", text, re.S)
    assert block, "CMakeLists.txt has no hrx_kernels library"
    return [ROOT / s for s in block.group(1).split()]


def elf_machine(path: Path) -> int:
    head = path.read_bytes()[:20]
    assert head[:4] == b"\x7fELF"
    return int.from_bytes(head[18:20], "little")


def compiler_id(cxx: str) -> str:
    return subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout


def object_cache() -> Path:
    """Where compiled objects are kept between runs (keyed by compiler, flags and every input byte)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "hrxarray" / "kernels_check"


@pytest.fixture(scope="module")
def binaries(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("kernels_check")
    sources = [*kernel_sources(), ROOT / "ext/check/kernels_check.cpp"]
    headers = b"".join(p.read_bytes() for p in sorted((ROOT / "ext/core/kernels").glob("*.h")))
    # The flags CMakeLists.txt gives hrx_kernels (C++20 without GNU extensions, no FP
    # contraction, which GCC's C++ default would do on arm64, and -O3).
    flags = FLAGS
    targets = {"host": (HOST_CXX, []), "arm64": (CROSS_CXX, ["-static"])}
    cache = object_cache()
    jobs = []
    for tag, (cxx, _) in targets.items():
        (out / tag).mkdir()
        ident = compiler_id(cxx).encode() + " ".join(flags[:-1]).encode() + headers
        for src in sources:
            key = hashlib.sha256(ident + src.read_bytes()).hexdigest()[:32]
            jobs.append(([cxx, *flags, "-c", str(src), "-o"], cache / f"{src.stem}-{key}.o",
                         out / tag / f"{src.stem}.o"))

    def build(job):
        cmd, cached, dest = job
        if not cached.exists():
            cached.parent.mkdir(parents=True, exist_ok=True)
            tmp = cached.with_suffix(f".{os.getpid()}.tmp")
            res = subprocess.run([*cmd, str(tmp)], capture_output=True, text=True)
            if res.returncode != 0:
                return f"{' '.join(cmd)}\n{res.stderr}"
            os.replace(tmp, cached)
        shutil.copyfile(cached, dest)
        return None

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        errors = [e for e in pool.map(build, jobs) if e]
    assert not errors, errors[0]
    exes = {}
    for tag, (cxx, link) in targets.items():
        exe = out / tag / "kernels_check"
        objs = sorted(str(p) for p in (out / tag).glob("*.o"))
        res = subprocess.run([cxx, *link, *objs, "-o", str(exe), "-pthread"], capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
        exes[tag] = exe
    return exes


def run_lines(cmd: list[str]) -> list[str]:
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    return res.stdout.splitlines()


def test_the_builds_are_for_the_two_architectures(binaries):
    assert elf_machine(binaries["arm64"]) == EM_AARCH64
    assert elf_machine(binaries["host"]) == EM_X86_64


def test_arm64_results_equal_this_machines_bit_for_bit(binaries):
    host = run_lines([str(binaries["host"])])
    arm = run_lines([QEMU, str(binaries["arm64"])])
    names = [line.rsplit(" ", 1)[0] for line in host]
    # The battery covers every family: conversions, bfp16, both matmuls, casts, ufuncs, reductions, random.
    for family in ("bf16_to_f32", "f32_to_bf16", "bfp16_encode", "bfp16_decode", "matmul_bf16", "matmul_typed",
                   "cast", "ufunc", "reduce", "argmax", "random_normal", "random_sample"):
        assert any(n.startswith(family) for n in names), family
    assert len(host) > 900 and len(set(names)) == len(names)
    assert [line.rsplit(" ", 1)[0] for line in arm] == names
    differ = [f"{h} != {a}" for h, a in zip(host, arm) if h != a]
    assert not differ, "arm64 differs from this machine:\n" + "\n".join(differ[:20])
    # The AMX tile path on its software model is in the battery too (its own order: other bits
    # than the contract's on the same operands).
    digest = dict(line.rsplit(" ", 1) for line in host)
    model = {n: d for n, d in digest.items() if n.startswith("matmul_bf16_amx_model ")}
    assert len(model) >= 6
    assert any(d != digest[n.replace("matmul_bf16_amx_model ", "matmul_bf16 ")] for n, d in model.items())
    # The tile order's FMA path gives the model's bits (on both architectures, by the check above).
    for n, d in model.items():
        assert digest[n.replace("matmul_bf16_amx_model ", "matmul_bf16_tile ")] == d, n


def test_the_battery_sees_a_one_bit_change(binaries, tmp_path):
    # The comparison above can fail: perturb one kernel (flip the pair order of the bf16
    # matmul on the portable path) and the arm64 matmul lines change while the rest stay.
    gemm = (ROOT / "ext/core/kernels/gemm.cpp").read_text()
    needle = "const std::size_t kk = kPaired ? s ^ 1u : s;"
    assert gemm.count(needle) == 2
    # The first occurrence is the portable micro-kernel (micro_body).
    patched = tmp_path / "gemm.cpp"
    patched.write_text(gemm.replace(needle, "const std::size_t kk = s;", 1))
    obj_dir = binaries["arm64"].parent
    obj = tmp_path / "gemm.o"
    flags = FLAGS
    res = subprocess.run([CROSS_CXX, *flags, "-c", str(patched), "-o", str(obj)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    objs = [str(obj) if p.name == "gemm.o" else str(p) for p in sorted(obj_dir.glob("*.o"))]
    exe = tmp_path / "kernels_check"
    res = subprocess.run([CROSS_CXX, "-static", *objs, "-o", str(exe), "-pthread"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    good = dict(line.rsplit(" ", 1) for line in run_lines([QEMU, str(binaries["arm64"])]))
    bad = dict(line.rsplit(" ", 1) for line in run_lines([QEMU, str(exe)]))
    changed = {n for n in good if good[n] != bad[n]}
    assert changed and all(n.startswith(("matmul_bf16", "matmul_typed bfloat16")) for n in changed)
