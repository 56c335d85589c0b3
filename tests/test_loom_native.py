"""The native Loom executor (Note [Native Loom executor]) against the interpreter.

Every Loom GPU kernel of the test suite (tests/loom_programs.py, the Loom sources inside
tests/test_loom_*.py, src/hrxarray/programs/*.loom, the examples) runs under both executors on
the same inputs, and the output bytes (or the ExecutionError text) must be equal (the LLM kernel
set of examples/loom/*.loom included). Kernels the
native path does not compile are skipped with the reason it gave (``pytest -rs`` lists them).
Also: the disk cache (a second process loads instead of compiling), out-of-bounds errors
through native code, and checked mode staying on the interpreter.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import hrxarray as hx
from hrxarray._core import loom as _l

pytest.importorskip("llvmlite")

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent


def _sources_in_python(path: Path) -> list[str]:
    """The string literals of a Python file that hold a Loom GPU kernel."""
    try:
        tree = ast.parse(path.read_text())
    except (OSError, SyntaxError):
        return []
    return [n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and "kernel.def" in n.value and "launch(" in n.value]


def _collect() -> list[tuple[str, str, str]]:
    """(origin, source, symbol) for every kernel.def the suite's Loom sources define."""
    found: list[tuple[str, str]] = []
    for p in [HERE / "loom_programs.py", *sorted(HERE.glob("test_loom_*.py")), *sorted((ROOT / "examples").glob("*.py"))]:
        if p.name == Path(__file__).name:
            continue
        found += [(p.name, s) for s in _sources_in_python(p)]
    found += [(p.name, p.read_text()) for p in sorted((ROOT / "src" / "hrxarray" / "programs").glob("*.loom"))]
    found += [(p.name, p.read_text()) for p in sorted((ROOT / "examples" / "loom").glob("*.loom"))]
    out, seen = [], set()
    for origin, src in found:
        for sym in re.findall(r"kernel\.def\b[^\n{]*?@([A-Za-z_][\w.\-]*)\s*\(", src):
            if (src, sym) in seen:
                continue
            seen.add((src, sym))
            out.append((origin, src, sym))
    return out


PROGRAMS = _collect()
OUTCOMES: dict = {}
CANDIDATES = (1000, 256, 64, 4096, 16, 1)
# The LLM set's kernels loop over their sizes (matmul_tiled at 1000 is 10^9 interpreted fmas):
# small sizes, one not a multiple of their tiles first.
LLM_CANDIDATES = (100, 64, 16, 1)


def _setup(art, candidates=CANDIDATES):
    """Workload slots, scalars and the contract of a small launch, or None when none fits."""
    params = art.manifest["functions"][0]["parameters"]
    for count in candidates:
        try:
            lc = art.launch_config(*([count] * _workload_arity(art)))
            items = np.prod(lc.workgroups) * np.prod(lc.workgroup_size)
            if items > 1 << 21:
                continue
            scalars = {}
            for p in params:
                if p["kind"] != "constant":
                    continue
                scalars[p["name"]] = 1.25 if p["type"].startswith(("f", "bf")) else count
            contract = art.contract_for(**scalars)
            return [count] * _workload_arity(art), scalars, contract
        except (ValueError, TypeError, hx.HrxError):
            continue
    return None


def _workload_arity(art) -> int:
    try:
        art.launch_config()
        return 0
    except (ValueError, TypeError, hx.HrxError) as e:
        m = re.search(r"takes (\d+) workload", str(e))
        return int(m.group(1)) if m else 0


def _inputs(contract, seed=0):
    rng = np.random.default_rng(seed)
    bufs = []
    for b in contract.bindings:
        n = max(int(b.bytes), 16)
        layout = b.layout
        if "xf32" in layout:
            a = rng.uniform(-4, 4, size=(n + 3) // 4).astype(np.float32).view(np.uint8)
        elif "xf64" in layout:
            a = rng.uniform(-4, 4, size=(n + 7) // 8).view(np.uint8)
        elif "xi32" in layout or "xindex" in layout:
            a = rng.integers(0, 64, size=(n + 3) // 4, dtype=np.int32).view(np.uint8)
        else:
            a = rng.integers(0, 256, size=n, dtype=np.uint8)
        bufs.append(np.ascontiguousarray(a[:n]))
    return bufs


def _assert_native_equals_interpreter(art, contract, scalars, workload):
    """Run one launch both ways on the same inputs; the interpreter's outcome, after asserting they agree."""
    bufs = _inputs(contract)
    consts = art.pack_constants(**scalars)
    want = _run(art, bufs, consts, workload, interpret=True)
    got = _run(art, bufs, consts, workload, interpret=False)
    assert got == want
    return want


def _run(art, bufs, consts, workload, interpret):
    mine = [b.copy() for b in bufs]
    try:
        _l._run_artifact(art, mine, consts, workload, interpret=interpret)
    except Exception as e:  # compared as text: both executors must fail alike
        return ("error", type(e).__name__, str(e))
    return ("ok", [m.tobytes() for m in mine])


def _compile(source, symbol):
    """The artifact, binding 64 to each config key the program lacks (or skip)."""
    config: dict = {}
    for _ in range(8):
        try:
            return hx.loom.compile(source, symbol, target="gfx1151", config=config)
        except (hx.loom.LoomError, ValueError, TypeError, hx.HrxError) as e:
            m = re.search(r"config key '@([\w.\-]+)' has no value", str(e))
            if not m or m.group(1) in config:
                pytest.skip(f"does not compile: {str(e).splitlines()[0][:100]}")
            config[m.group(1)] = 64
    pytest.skip("does not compile: too many config keys")


@pytest.mark.parametrize("origin,source,symbol", PROGRAMS,
                         ids=[f"{o}:{s}:{i}" for i, (o, _, s) in enumerate(PROGRAMS)])
def test_native_equals_interpreter(origin, source, symbol):
    art = _compile(source, symbol)
    # The generator's IR must always compile: a failure there is a bug, not a refusal.
    assert "native compilation failed" not in art.executor_reason
    if art.executor != "native":
        pytest.skip(f"interpreted: {art.executor_reason}")
    llm = (ROOT / "examples" / "loom" / origin).exists()
    setup = _setup(art, LLM_CANDIDATES if llm else CANDIDATES)
    if setup is None:
        pytest.skip("no small launch found for its workload")
    workload, scalars, contract = setup
    want = _assert_native_equals_interpreter(art, contract, scalars, workload)
    OUTCOMES[f"{origin}:{symbol}"] = want[0] if want[0] == "ok" else want[2]


def test_collection_finds_the_suites_kernels():
    origins = {o for o, _, _ in PROGRAMS}
    assert "loom_programs.py" in origins and "elementwise.loom" in origins and len(PROGRAMS) >= 10


# --- focused programs --------------------------------------------------------------------

COPY = """\
amdgpu.target<gfx1151> @gpu
kernel.def target(@gpu) export("copy") @copy(%count: index) {
  %one = index.constant 1 : index
  %width = index.constant 64 : index
  %groups = index.constant 4 : index
  kernel.launch.config workgroups(%groups, %one, %one) workgroup_size(%width, %one, %one) : index
} launch(%count: index, %x: buffer, %y: buffer) {
  %width = index.constant 64 : index
  %origin = index.constant 0 : offset
  %item = kernel.workitem.id<x> : index
  %group = kernel.workgroup.id<x> : index
  %first = index.mul %group, %width : index
  %i = index.add %first, %item : index
  %xs = buffer.view %x[%origin] : buffer -> view<[%count]xf32>
  %ys = buffer.view %y[%origin] : buffer -> view<[%count]xf32>
  %v = view.load %xs[%i] : view<[%count]xf32> -> f32
  view.store %v, %ys[%i] : f32, view<[%count]xf32>
  kernel.return
}
"""


@pytest.mark.parametrize("count,size", [(200, 256), (256, 200)])
def test_out_of_bounds_raises_the_interpreters_error(count, size):
    art = hx.loom.compile(COPY, "copy", target="gfx1151")
    assert art.executor == "native", art.executor_reason
    x = np.arange(size, dtype=np.float32).view(np.uint8)
    consts = art.pack_constants(count=count)
    want = _run(art, [x, np.zeros_like(x)], consts, [count], interpret=True)
    got = _run(art, [x, np.zeros_like(x)], consts, [count], interpret=False)
    assert want[0] == "error" and want[1] == "ExecutionError"
    assert "16:8: view.load" in want[2] and "workgroup (3, 0, 0), work-item (8, 0, 0)" in want[2], want[2]
    assert got == want


def test_checked_mode_interprets():
    from loom_programs import SCALE_F32

    art = hx.loom.compile(SCALE_F32, "scale_f32", target="gfx1151")
    assert art.executor == "native", art.executor_reason
    x = np.ones(256, np.float32).view(np.uint8)
    consts = art.pack_constants(count=256, alpha=float("nan"))
    # The native code runs without checks; checked mode reports the broken assumption.
    _l._run_artifact(art, [x, np.zeros_like(x)], consts, [256])
    with pytest.raises(hx.ExecutionError, match="finite"):
        _l._run_artifact(art, [x, np.zeros_like(x)], consts, [256], checked=True)


CACHE_PROBE = """
import json, sys
sys.path.insert(0, {tests!r})
import hrxarray as hx
from hrxarray import _loom_native
from loom_programs import AXPY_F32
art = hx.loom.compile(AXPY_F32, "axpy_f32", target="gfx1151")
print(json.dumps({{"executor": art.executor, "compiled": _loom_native.stats["compiled"],
                  "hits": _loom_native.stats["cache_hits"]}}))
"""


def test_second_process_loads_from_the_disk_cache(tmp_path):
    env = dict(os.environ, HRXARRAY_LOOM_NATIVE_CACHE=str(tmp_path / "cache"))
    env.pop("HRXARRAY_LOOM_NATIVE", None)
    code = CACHE_PROBE.format(tests=str(HERE))

    def probe():
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        return json.loads(r.stdout.strip().splitlines()[-1])

    first = probe()
    assert first == {"executor": "native", "compiled": 1, "hits": 0}
    assert len(list((tmp_path / "cache").glob("*.o"))) == 1
    second = probe()
    assert second == {"executor": "native", "compiled": 0, "hits": 1}


def test_disabled_by_environment(tmp_path):
    env = dict(os.environ, HRXARRAY_LOOM_NATIVE="0", HRXARRAY_LOOM_NATIVE_CACHE=str(tmp_path))
    code = ("import hrxarray as hx, sys; sys.path.insert(0, %r); from loom_programs import AXPY_F32; "
            "a = hx.loom.compile(AXPY_F32, 'axpy_f32', target='gfx1151'); print(a.executor, '|', a.executor_reason)") % str(HERE)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "interpreter | disabled by HRXARRAY_LOOM_NATIVE=0"


def test_refused_program_names_its_reason():
    # f64 to bf16 would round twice natively (Note [Native f16 and bf16]): refused, with the reason.
    src = COPY.replace("%ys = buffer.view %y[%origin] : buffer -> view<[%count]xf32>",
                       "%ys = buffer.view %y[%origin] : buffer -> view<[%count]xbf16>").replace(
        "view<[%count]xf32> -> f32", "view<[%count]xf32> -> f32\n  %d = scalar.extf %v : f32 to f64\n"
        "  %h = scalar.fptrunc %d : f64 to bf16").replace("view.store %v, %ys[%i] : f32, view<[%count]xf32>",
                                                          "view.store %h, %ys[%i] : bf16, view<[%count]xbf16>")
    art = hx.loom.compile(src, "copy", target="gfx1151")
    assert art.executor == "interpreter"
    assert "f64 to bf16" in art.executor_reason


def test_bf16_copy_is_native_and_exact():
    # Loads and stores of bf16 move bits (a signalling NaN comes out quiet, as in the interpreter).
    src = COPY.replace("view<[%count]xf32>", "view<[%count]xbf16>").replace("-> f32", "-> bf16").replace("%v, %ys[%i] : f32", "%v, %ys[%i] : bf16")
    art = hx.loom.compile(src, "copy", target="gfx1151")
    assert art.executor == "native", art.executor_reason
    x = np.arange(0, 65536, 256, dtype=np.uint16) | np.uint16(0x81)  # 0x7F81, 0xFF81: signalling NaNs
    consts = art.pack_constants(count=256)
    want = _run(art, [x.view(np.uint8), np.zeros(512, np.uint8)], consts, [256], interpret=True)
    got = _run(art, [x.view(np.uint8), np.zeros(512, np.uint8)], consts, [256], interpret=False)
    assert got == want and want[0] == "ok"
    out = np.frombuffer(want[1][1], np.uint16)
    nan = (x & 0x7FFF) > 0x7F80
    np.testing.assert_array_equal(out[~nan], x[~nan])
    assert nan.sum() == 2
    np.testing.assert_array_equal(out[nan], x[nan] | 0x40)


# Subgroup collectives over a workgroup of 48 (one full subgroup, one partial), under a
# varying mask, with an f32 sum whose bits depend on the order of the additions.
SUBGROUPS = """\
amdgpu.target<gfx1151> @gpu
kernel.def target(@gpu) export("sgmix") @sgmix() {
  %one = index.constant 1 : index
  %w = index.constant 48 : index
  %g = index.constant 3 : index
  kernel.launch.config workgroups(%g, %one, %one) workgroup_size(%w, %one, %one) : index
} launch(%x: buffer, %out: buffer) {
  %z = index.constant 0 : offset
  %t = kernel.workitem.id<x> : index
  %wg = kernel.workgroup.id<x> : index
  %w = index.constant 48 : index
  %i = index.madd %wg, %w, %t : index
  %xv = buffer.view %x[%z] : buffer -> view<144xf32>
  %ov = buffer.view %out[%z] : buffer -> view<144x6xf32>
  %v = view.load %xv[%i] : view<144xf32> -> f32
  %t32 = index.cast %t : index to i32
  %c3 = scalar.constant 3 : i32
  %r = scalar.remsi %t32, %c3 : i32
  %zero = scalar.constant 0 : i32
  %keep = scalar.cmpi ne, %r, %zero : i32
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %c2 = index.constant 2 : index
  %c3i = index.constant 3 : index
  %c4 = index.constant 4 : index
  %c5 = index.constant 5 : index
  scf.if %keep {
    %s = kernel.subgroup.reduce<add> %v : f32
    %m = kernel.subgroup.reduce<maxnumf> %v {cluster_size = 8} : f32
    %two = scalar.constant 2 : i32
    %d, %dok = kernel.subgroup.shuffle<down> %v, %two : f32, i32 -> f32, i1
    %f = kernel.subgroup.broadcast.first %v : f32 -> f32
    %p = scalar.cmpf olt, %v, %f : f32
    %bal = kernel.subgroup.ballot %p : i1 -> i32
    %balf = scalar.sitofp %bal : i32 to f32
    %okf = scalar.uitofp %dok : i1 to f32
    view.store %s, %ov[%i, %c0] : f32, view<144x6xf32>
    view.store %m, %ov[%i, %c1] : f32, view<144x6xf32>
    view.store %d, %ov[%i, %c2] : f32, view<144x6xf32>
    view.store %f, %ov[%i, %c3i] : f32, view<144x6xf32>
    view.store %balf, %ov[%i, %c4] : f32, view<144x6xf32>
    view.store %okf, %ov[%i, %c5] : f32, view<144x6xf32>
  }
  kernel.return
}
"""


def test_subgroup_collectives_match_the_interpreter():
    art = hx.loom.compile(SUBGROUPS, "sgmix", target="gfx1151")
    assert art.executor == "native", art.executor_reason
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(144) * 1e4).astype(np.float32)
    x[40] = np.nan  # in the second subgroup: its maxima and sums carry it
    bufs = [x.view(np.uint8), np.zeros(144 * 6 * 4, np.uint8)]
    want = _run(art, bufs, b"", [], interpret=True)
    got = _run(art, bufs, b"", [], interpret=False)
    assert want[0] == "ok" and got == want
    out = np.frombuffer(want[1][1], np.float32).reshape(144, 6)
    # An independent check of one value: lanes 1, 2, 4, 5, ... of the first subgroup, summed in order.
    lanes = [t for t in range(32) if t % 3]
    acc = np.float32(x[lanes[0]])
    for t in lanes[1:]:
        acc = np.float32(acc + x[t])
    assert np.array_equal(out[1, 0], acc, equal_nan=True)


@pytest.mark.parametrize("fill", ["-0", "mixed zeros", "inf"])
def test_subgroup_sums_keep_signed_zeros_and_infinities(fill):
    # The inline add chain (no helper) starts from -0: a sum of -0s stays -0, +0 + -0 is +0,
    # inf + -inf is NaN, exactly as the helper's chain from the first active lane.
    art = hx.loom.compile(SUBGROUPS, "sgmix", target="gfx1151")
    x = np.full(144, -0.0, np.float32)
    if fill == "mixed zeros":
        x[::5] = 0.0
    elif fill == "inf":
        x[::7], x[3::11] = np.inf, -np.inf
    bufs = [x.view(np.uint8), np.zeros(144 * 6 * 4, np.uint8)]
    want = _run(art, bufs, b"", [], interpret=True)
    got = _run(art, bufs, b"", [], interpret=False)
    assert want[0] == "ok" and got == want
    sums = np.frombuffer(want[1][1], np.float32).reshape(144, 6)[:, 0]
    if fill == "-0":
        assert np.signbit(sums[1]) and sums[1] == 0


@pytest.mark.parametrize("kind", ["maxnumf", "minnumf", "maximumf", "minimumf", "mul"])
@pytest.mark.parametrize("fill", ["zeros and a NaN", "only NaNs", "values"])
def test_whole_subgroup_reductions_match_the_interpreter(kind, fill):
    # Reductions over a whole subgroup run inline from an identity (no helper): NaNs, signed
    # zeros and a subgroup whose active lanes are all NaN must come out as the helper's chain.
    src = SUBGROUPS.replace("kernel.subgroup.reduce<maxnumf> %v {cluster_size = 8} : f32",
                            f"kernel.subgroup.reduce<{kind}> %v : f32")
    art = hx.loom.compile(src, "sgmix", target="gfx1151")
    assert art.executor == "native", art.executor_reason
    rng = np.random.default_rng(13)
    x = rng.standard_normal(144).astype(np.float32)
    if fill == "zeros and a NaN":
        x[::2], x[1::4], x[50] = -0.0, 0.0, np.nan
    elif fill == "only NaNs":
        x[:] = np.nan
    bufs = [x.view(np.uint8), np.zeros(144 * 6 * 4, np.uint8)]
    want = _run(art, bufs, b"", [], interpret=True)
    got = _run(art, bufs, b"", [], interpret=False)
    assert want[0] == "ok" and got == want
    if fill == "values" and kind in ("maxnumf", "maximumf"):
        # Independent: lanes 1, 2, 4, 5, ... of the first subgroup (the active ones).
        out = np.frombuffer(want[1][1], np.float32).reshape(144, 6)
        assert out[1, 1] == max(x[t] for t in range(32) if t % 3)


# --- every scalar op the generator lowers, on Hypothesis-chosen values -------------------

INT_BIN = ["addi", "subi", "muli", "divsi", "divui", "remsi", "remui", "minsi", "maxsi", "minui", "maxui",
           "andi", "ori", "xori", "shli", "shrsi", "shrui"]
INT_UN = ["negi", "absi", "ctpopi", "ctlzi", "cttzi"]
ICMP = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
FLT_BIN = ["addf", "subf", "mulf", "divf", "remf", "minnumf", "maxnumf", "minimumf", "maximumf", "copysignf", "powf",
           "atan2f", "hypotf"]
# Every float math op native code computes through hrx::fmath (Note [Native Loom math]), like the interpreter.
FLT_UN = ["negf", "absf", "sqrtf", "expf", "logf", "tanhf", "floorf", "ceilf", "roundf", "roundevenf", "truncf", "signf",
          "rsqrtf", "cbrtf", "exp2f", "expm1f", "log2f", "log10f", "log1pf", "sinf", "cosf", "tanf", "sinturnsf",
          "costurnsf", "asinf", "acosf", "atanf", "sinhf", "coshf", "asinhf", "acoshf", "atanhf", "erff", "erfcf",
          "logisticf", "siluf", "softplusf", "geluf<erf>", "geluf<tanh>"]
FCMP = ["oeq", "one", "olt", "ole", "ogt", "oge", "ord", "uno", "ueq", "une", "ult", "ule", "ugt", "uge"]
ITEMS = 256


def _ops_kernel(t: str) -> tuple[str, int]:
    """A kernel applying every op to lane i's inputs a[i], b[i]; results as i64 columns (and t columns)."""
    flt = t.startswith("f") or t == "bf16"
    lines, icol, fcol = [], 0, 0

    def store_i(v, ty):
        nonlocal icol
        if ty != "i64":
            ext = "extui" if ty == "i1" else "extsi"
            lines.append(f"  %w{icol} = scalar.{ext} {v} : {ty} to i64")
            v = f"%w{icol}"
        lines.append(f"  %ci{icol} = index.constant {icol} : index")
        lines.append(f"  view.store {v}, %oi[%i, %ci{icol}] : i64, view<{ITEMS}x64xi64>")
        icol += 1

    def store_f(v):
        nonlocal fcol
        lines.append(f"  %cf{fcol} = index.constant {fcol} : index")
        lines.append(f"  view.store {v}, %of[%i, %cf{fcol}] : {t}, view<{ITEMS}x64x{t}>")
        fcol += 1

    n = 0

    def new():
        nonlocal n
        n += 1
        return f"%r{n}"

    if not flt:
        src = "i64"
        lines.append(f"  %a64 = view.load %av[%i] : view<{ITEMS}xi64> -> i64")
        lines.append(f"  %b64 = view.load %bv[%i] : view<{ITEMS}xi64> -> i64")
        if t == "i64":
            lines += ["  %a = scalar.addi %a64, %zero64 : i64", "  %b = scalar.addi %b64, %zero64 : i64"]
        else:
            lines += [f"  %a = scalar.trunci %a64 : i64 to {t}", f"  %b = scalar.trunci %b64 : i64 to {t}"]
        for op in INT_BIN:
            r = new(); lines.append(f"  {r} = scalar.{op} %a, %b : {t}"); store_i(r, t)
        for op in INT_UN:
            r = new(); lines.append(f"  {r} = scalar.{op} %a : {t}"); store_i(r, t)
        for p in ICMP:
            r = new(); lines.append(f"  {r} = scalar.cmpi {p}, %a, %b : {t}"); store_i(r, "i1")
        for conv, to in (("sitofp", "f32"), ("uitofp", "f32"), ("sitofp", "f64"), ("uitofp", "f64")):
            r = new(); lines.append(f"  {r} = scalar.{conv} %a : {t} to {to}")
            bits = "i32" if to == "f32" else "i64"
            q = new(); lines.append(f"  {q} = scalar.bitcast {r} : {to} to {bits}"); store_i(q, bits)
        if t != "i64":
            r = new(); lines.append(f"  {r} = scalar.extui %a : {t} to i64"); store_i(r, "i64")
    else:
        src = t
        lines.append(f"  %a = view.load %av[%i] : view<{ITEMS}x{t}> -> {t}")
        lines.append(f"  %b = view.load %bv[%i] : view<{ITEMS}x{t}> -> {t}")
        for op in FLT_BIN:
            r = new(); lines.append(f"  {r} = scalar.{op} %a, %b : {t}"); store_f(r)
        for op in FLT_UN:
            r = new(); lines.append(f"  {r} = scalar.{op} %a : {t}"); store_f(r)
        r = new(); lines.append(f"  {r} = scalar.fmaf %a, %b, %a : {t}"); store_f(r)
        for p in FCMP:
            r = new(); lines.append(f"  {r} = scalar.cmpf {p}, %a, %b : {t}"); store_i(r, "i1")
        for op in ("isnanf", "isinff", "isfinitef"):
            r = new(); lines.append(f"  {r} = scalar.{op} %a : {t}"); store_i(r, "i1")
        for conv, to in (("fptosi", "i32"), ("fptosi", "i8"), ("fptosi", "i64"), ("fptoui", "i32"), ("fptoui", "i16"), ("fptoui", "i64")):
            r = new(); lines.append(f"  {r} = scalar.{conv} %a : {t} to {to}"); store_i(r, to)
        other = "f64" if t == "f32" else "f32"
        r = new(); lines.append(f"  {r} = scalar.{'fptrunc' if t == 'f64' else 'extf'} %a : {t} to {other}")
        bits = "i32" if other == "f32" else "i64"
        q = new(); lines.append(f"  {q} = scalar.bitcast {r} : {other} to {bits}"); store_i(q, bits)
        if t in ("f16", "bf16"):
            # Rounding from f32 and f64 (Note [Native f16 and bf16]), and from integers.
            w = new(); lines.append(f"  {w} = scalar.extf %a : {t} to f32")
            w2 = new(); lines.append(f"  {w2} = scalar.extf %b : {t} to f32")
            p = new(); lines.append(f"  {p} = scalar.mulf {w}, {w2} : f32")
            r = new(); lines.append(f"  {r} = scalar.fptrunc {p} : f32 to {t}"); store_f(r)
            r = new(); lines.append(f"  {r} = scalar.fptosi %a : {t} to i32")
            r2 = new(); lines.append(f"  {r2} = scalar.muli {r}, {r} : i32")
            r3 = new(); lines.append(f"  {r3} = scalar.sitofp {r2} : i32 to {t}"); store_f(r3)
            other = "bf16" if t == "f16" else "f16"
            r = new(); lines.append(f"  {r} = scalar.fptrunc {w} : f32 to {other}")
            r2 = new(); lines.append(f"  {r2} = scalar.extf {r} : {other} to f32")
            r3 = new(); lines.append(f"  {r3} = scalar.fptrunc {r2} : f32 to {t}"); store_f(r3)
    head = f"""\
amdgpu.target<gfx1151> @gpu
kernel.def target(@gpu) export("ops_{t}") @ops_{t}() {{
  %one = index.constant 1 : index
  %w = index.constant 64 : index
  %g = index.constant 4 : index
  kernel.launch.config workgroups(%g, %one, %one) workgroup_size(%w, %one, %one) : index
}} launch(%x: buffer, %y: buffer, %oib: buffer, %ofb: buffer) {{
  %z = index.constant 0 : offset
  %zero64 = scalar.constant 0 : i64
  %i = kernel.workitem.dispatch.id<x> : index
  %av = buffer.view %x[%z] : buffer -> view<{ITEMS}x{src}>
  %bv = buffer.view %y[%z] : buffer -> view<{ITEMS}x{src}>
  %oi = buffer.view %oib[%z] : buffer -> view<{ITEMS}x64xi64>
  %of = buffer.view %ofb[%z] : buffer -> view<{ITEMS}x64x{'f32' if not flt else t}>
"""
    return head + "\n".join(lines) + "\n  kernel.return\n}\n", icol


from hypothesis import given, settings, HealthCheck, strategies as st  # noqa: E402

_INTS = st.one_of(st.integers(-(2**63), 2**63 - 1), st.sampled_from([0, 1, -1, 2**31, -(2**31), 2**63 - 1, -(2**63), 7, 64, 255]))


@pytest.mark.parametrize("t", ["i8", "i16", "i32", "i64", "f32", "f64", "f16", "bf16"])
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_scalar_op_matches_the_interpreter(t, data):
    src, _ = _ops_kernel(t)
    art = hx.loom.compile(src, f"ops_{t}", target="gfx1151")
    assert art.executor == "native", art.executor_reason
    if t in ("f16", "bf16"):
        # Bit patterns: every class (subnormals, infinities, NaNs) of the narrow type.
        bits = st.one_of(st.integers(0, 0xFFFF), st.sampled_from([0x7C00, 0xFC00, 0x7E01, 0x7F80, 0x7F81, 0x0001, 0x8001, 0x3C00, 0x7BFF]))
        a = np.array(data.draw(st.lists(bits, min_size=32, max_size=32)), dtype=np.uint16)
        b = np.array(data.draw(st.lists(bits, min_size=32, max_size=32)), dtype=np.uint16)
        a = np.resize(a, ITEMS)
        b = np.concatenate([np.roll(b, k) for k in range(ITEMS // 32)])
    elif t.startswith("f"):
        dt = np.float32 if t == "f32" else np.float64
        fl = st.floats(width=32 if t == "f32" else 64, allow_nan=True, allow_infinity=True, allow_subnormal=True)
        a = np.array(data.draw(st.lists(fl, min_size=32, max_size=32)), dtype=dt)
        b = np.array(data.draw(st.lists(fl, min_size=32, max_size=32)), dtype=dt)
        a = np.resize(a, ITEMS)
        b = np.concatenate([np.roll(b, k) for k in range(ITEMS // 32)])
    else:
        dt = np.int64
        a = np.array(data.draw(st.lists(_INTS, min_size=32, max_size=32)), dtype=dt)
        b = np.array(data.draw(st.lists(_INTS, min_size=32, max_size=32)), dtype=dt)
        a = np.resize(a, ITEMS)
        b = np.concatenate([np.roll(b, k) for k in range(ITEMS // 32)])
    fsize = 8 if t == "f64" else 2 if t in ("f16", "bf16") else 4
    bufs = [a.view(np.uint8), b.view(np.uint8), np.zeros(ITEMS * 64 * 8, np.uint8), np.zeros(ITEMS * 64 * fsize, np.uint8)]
    want = _run(art, bufs, b"", [], interpret=True)
    got = _run(art, bufs, b"", [], interpret=False)
    assert want[0] == "ok" and got[0] == "ok"
    # NaN payloads are the one difference allowed (Note [Native Loom executor]): LLVM may
    # commute a float op's operands, and the payload of a NaN result follows the operand order.
    def canonical(raw, k):
        if k != 3:
            return raw
        if t == "bf16":
            v = np.frombuffer(raw, np.uint16).copy()
            v[(v & 0x7FFF) > 0x7F80] = 0x7FC0
            return v.tobytes()
        v = np.frombuffer(raw, {"f64": np.float64, "f16": np.float16}.get(t, np.float32)).copy()
        v[np.isnan(v)] = np.nan
        return v.tobytes()
    want = ("ok", [canonical(w, k) for k, w in enumerate(want[1])])
    got = ("ok", [canonical(g, k) for k, g in enumerate(got[1])])
    for k, (w, g) in enumerate(zip(want[1], got[1])):
        if w != g:
            width = 8 if k == 2 else fsize
            wv, gv = np.frombuffer(w, f"u{width}").reshape(ITEMS, 64), np.frombuffer(g, f"u{width}").reshape(ITEMS, 64)
            bad = np.argwhere(wv != gv)[0]
            pytest.fail(f"binding {k}: lane {bad[0]} column {bad[1]}: interpreter {wv[tuple(bad)]:#x}, native {gv[tuple(bad)]:#x}; "
                        f"inputs {a[bad[0]]!r}, {b[bad[0]]!r}")


# Workgroup memory and barriers (phase 3): a tree reduction whose barrier sits in a uniform
# scf.for, over workgroups of 96 (six chunks of 16 lanes);
# %spill indexes one past the workgroup array when set, to check the out-of-bounds text.
TREE = """\
amdgpu.target<gfx1151> @gpu
kernel.def target(@gpu) export("tree") @tree(%groups: index) {
  %one = index.constant 1 : index
  %w = index.constant 96 : index
  kernel.launch.config workgroups(%groups, %one, %one) workgroup_size(%w, %one, %one) : index
} launch(%spill: index, %x: buffer, %out: buffer) {
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %c2 = index.constant 2 : index
  %c7 = index.constant 7 : index
  %w = index.constant 96 : index
  %bytes = index.constant 512 : offset
  %t = kernel.workitem.id<x> : index
  %g = kernel.workgroup.id<x> : index
  %i = index.madd %g, %w, %t : index
  %xv = buffer.view %x[%z] : buffer -> view<1024xf32>
  %ov = buffer.view %out[%z] : buffer -> view<16xf32>
  %lds = buffer.alloca<workgroup> align(16) %bytes : buffer
  %lv = buffer.view %lds[%z] : buffer -> view<160xf32>
  %v = view.load %xv[%i] : view<1024xf32> -> f32
  %at = index.add %t, %spill : index
  view.store %v, %lv[%at] : f32, view<160xf32>
  %zero = scalar.constant 0.0 : f32
  kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)
  scf.for %k = [%c0 to %c7 step %c1] {
    %s = index.sub %c7, %k : index
    %span = index.shli %c1, %s : index
    %half = index.div %span, %c2 : index
    %lo = index.cmp ult, %t, %half : index
    %partner = index.add %t, %half : index
    %real = index.cmp ult, %partner, %w : index
    kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)
    scf.if %lo {
      %a = view.load %lv[%t] : view<160xf32> -> f32
      %b = scf.if %real -> (f32) {
        %p = view.load %lv[%partner] : view<160xf32> -> f32
        scf.yield %p : f32
      } else {
        scf.yield %zero : f32
      }
      %sum = scalar.addf %a, %b : f32
      view.store %sum, %lv[%t] : f32, view<160xf32>
    }
  }
  kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)
  %first = index.cmp eq, %t, %c0 : index
  scf.if %first {
    %r = view.load %lv[%c0] : view<160xf32> -> f32
    view.store %r, %ov[%g] : f32, view<16xf32>
  }
  kernel.return
}
"""


@pytest.mark.parametrize("spill", [0, 40])
def test_barriers_and_workgroup_memory_match_the_interpreter(spill):
    art = hx.loom.compile(TREE, "tree", target="gfx1151")
    assert art.executor == "native", art.executor_reason
    rng = np.random.default_rng(3)
    x = rng.standard_normal(1024).astype(np.float32)
    bufs = [x.view(np.uint8), np.zeros(64, np.uint8)]
    consts = art.pack_constants(spill=spill)
    want = _run(art, bufs, consts, [10], interpret=True)
    got = _run(art, bufs, consts, [10], interpret=False)
    assert got == want
    if spill:
        assert want[0] == "error" and "outside buffer.alloca<workgroup> at 19:10 of 512 bytes" in want[2], want[2]
        return
    # Independent: the same pairwise tree in NumPy float32.
    out = np.frombuffer(want[1][1], np.float32)
    for g in range(10):
        a = np.concatenate([x[96 * g:96 * g + 96], np.zeros(32, np.float32)])
        for k in range(7):
            half = (1 << (7 - k)) // 2
            a[:half] = a[:half] + np.where(np.arange(half) + half < 96, a[half:2 * half], np.float32(0))
        assert out[g] == a[0]


# A tile of workgroup memory that lies inside its alloca (Note [Static footprints]: the native
# fast path drops its byte check) read in a loop after a barrier through a value kept across
# the barrier (Note [Values read from earlier chunk loops]); %row / %col move the accesses
# past an axis of the tile while staying inside the alloca's bytes, or past both.
TILE = """\
amdgpu.target<gfx1151> @gpu
kernel.def target(@gpu) export("tile") @tile(%groups: index) {
  %one = index.constant 1 : index
  %w = index.constant 32 : index
  kernel.launch.config workgroups(%groups, %one, %one) workgroup_size(%w, %one, %one) : index
} launch(%row: index, %col: index, %x: buffer, %out: buffer) {
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %c4 = index.constant 4 : index
  %c16 = index.constant 16 : index
  %w = index.constant 32 : index
  %bytes = index.constant 1024 : offset
  %t = kernel.workitem.id<x> : index
  %g = kernel.workgroup.id<x> : index
  %i = index.madd %g, %w, %t : index
  %xv = buffer.view %x[%z] : buffer -> view<256xf32>
  %ov = buffer.view %out[%z] : buffer -> view<256xf32>
  %lds = buffer.alloca<workgroup> align(16) %bytes : buffer
  %lv = buffer.view %lds[%z] : buffer -> view<8x16xf32>
  %r = index.div %t, %c16 : index
  %c = index.rem %t, %c16 : index
  %v = view.load %xv[%i] : view<256xf32> -> f32
  view.store %v, %lv[%r, %c] : f32, view<8x16xf32>
  kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)
  %rr = index.add %r, %row : index
  %cc = index.add %c, %col : index
  %zero = scalar.constant 0.0 : f32
  %sum = scf.for %j = [%c0 to %c4 step %c1](%acc = %zero : f32) -> (f32) {
    %a = view.load %lv[%rr, %cc] : view<8x16xf32> -> f32
    %b = view.load %lv[%r, %j] : view<8x16xf32> -> f32
    %p = scalar.mulf %a, %b : f32
    %s = scalar.addf %acc, %p : f32
    scf.yield %s : f32
  }
  view.store %sum, %ov[%i] : f32, view<256xf32>
  kernel.return
}
"""


@pytest.mark.parametrize("row, col", [(0, 0), (1, 0), (0, 1), (7, 0), (0, 16), (6, 0)])
def test_tiles_inside_workgroup_memory_match_the_interpreter(row, col):
    art = hx.loom.compile(TILE, "tile", target="gfx1151")
    assert art.executor == "native", art.executor_reason
    x = np.random.default_rng(5).standard_normal(256).astype(np.float32)
    bufs = [x.view(np.uint8), np.zeros(1024, np.uint8)]
    consts = art.pack_constants(row=row, col=col)
    want = _run(art, bufs, consts, [8], interpret=True)
    got = _run(art, bufs, consts, [8], interpret=False)
    assert got == want
    if row + 1 >= 8 or col:  # row 7 + r = 1 and column 16 leave the tile, inside the alloca's 1,024 bytes
        assert want[0] == "error" and "out of bounds" in want[2], want
        return
    if row:  # rows past the two written read fresh workgroup memory: the executors agree, as above
        return
    # Independent: rows of 16 of each workgroup's 32 values, as NumPy computes the loop.
    out = np.frombuffer(want[1][1], np.float32)
    for g in range(8):
        tile = np.zeros((8, 16), np.float32)
        tile[:2] = x[32 * g:32 * g + 32].reshape(2, 16)
        for t in range(32):
            r, c = divmod(t, 16)
            acc = np.float32(0)
            for j in range(4):
                acc = np.float32(acc + np.float32(tile[r, c] * tile[r, j]))
            assert out[32 * g + t] == acc


def test_builtin_gpu_kernels_start_native_once_compiled():
    # hx.kernels.gpu plans the built-in in C++ on every load; the registry of compiled IR
    # makes those plans native once the built-in sources were compiled in this process.
    from importlib import resources

    from hrxarray import _loom_native, kernels

    text = resources.files("hrxarray").joinpath("programs", "elementwise.loom").read_text()
    kernels.gpu("add_f32", elements=16, delta=1.0)
    assert _l._plan_executor(text, "add_f32", "gfx1151") == "native"
    assert _l._plan_executor(text, "transform_i32", "gfx1151") == "native"
    # euler_bf16 computes in bf16 (Note [Native f16 and bf16]).
    assert _l._plan_executor(text, "euler_bf16", "gfx1151") == "native"


@pytest.mark.parametrize("width,groups", [(1, 256), (3, 86), (5, 52)])
def test_folded_chunks_across_workgroups_name_the_same_lane(width, groups):
    # Workgroups narrower than a chunk share one; the failing lane's workgroup and work-item
    # must still be named as the interpreter names them.
    src = COPY.replace("%width = index.constant 64", f"%width = index.constant {width}").replace(
        "%groups = index.constant 4", f"%groups = index.constant {groups}")
    art = hx.loom.compile(src, "copy", target="gfx1151")
    assert art.executor == "native", art.executor_reason
    x = np.arange(256, dtype=np.float32).view(np.uint8)
    for count in (256 if width * groups <= 256 else 200, 200):
        consts = art.pack_constants(count=count)
        want = _run(art, [x, np.zeros_like(x)], consts, [count], interpret=True)
        got = _run(art, [x, np.zeros_like(x)], consts, [count], interpret=False)
        assert got == want
    assert want[0] == "error" and f"workgroup ({200 // width}, 0, 0), work-item ({200 % width}, 0, 0)" in want[2]


# --- i1 read signed ------------------------------------------------------------------------

I1_SIGNED = """
amdgpu.target<gfx1151> @gpu
kernel.def target(@gpu) @i1s() {
  %one = index.constant 1 : index
  %n = index.constant 16 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%n, %one, %one) : index
} launch(%o: buffer, %f: buffer) {
  %z = index.constant 0 : offset
  %i = kernel.workitem.id<x> : index
  %two = index.constant 2 : index
  %r = index.rem %i, %two : index
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %c2 = index.constant 2 : index
  %odd = index.cmp eq, %r, %c1 : index
  %ov = buffer.view %o[%z] : buffer -> view<16x3xi32>
  %fv = buffer.view %f[%z] : buffer -> view<16xf32>
  %s = scalar.extsi %odd : i1 to i32
  %u = scalar.extui %odd : i1 to i32
  %s8 = scalar.extsi %odd : i1 to i8
  %s8w = scalar.extsi %s8 : i8 to i32
  view.store %s, %ov[%i, %c0] : i32, view<16x3xi32>
  view.store %u, %ov[%i, %c1] : i32, view<16x3xi32>
  view.store %s8w, %ov[%i, %c2] : i32, view<16x3xi32>
  %fl = scalar.sitofp %odd : i1 to f32
  view.store %fl, %fv[%i] : f32, view<16xf32>
  kernel.return
}
"""


# Barriers inside a uniform scf.for that carries values (Note [Barriers in loops with results]):
# each work-item keeps a running sum %acc (varying), a pair (%p, %q) the yield swaps, and a
# uniform counter %n, across two barriers per iteration over workgroups of 48 (three chunks).
CARRIED = """\
amdgpu.target<gfx1151> @gpu
kernel.def target(@gpu) export("carried") @carried(%groups: index) {
  %one = index.constant 1 : index
  %w = index.constant 48 : index
  kernel.launch.config workgroups(%groups, %one, %one) workgroup_size(%w, %one, %one) : index
} launch(%steps: index, %x: buffer, %out: buffer) {
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %w = index.constant 48 : index
  %bytes = index.constant 192 : offset
  %t = kernel.workitem.id<x> : index
  %g = kernel.workgroup.id<x> : index
  %i = index.madd %g, %w, %t : index
  %xv = buffer.view %x[%z] : buffer -> view<1024xf32>
  %ov = buffer.view %out[%z] : buffer -> view<1024xf32>
  %lds = buffer.alloca<workgroup> align(16) %bytes : buffer
  %lv = buffer.view %lds[%z] : buffer -> view<48xf32>
  %mine = view.load %xv[%i] : view<1024xf32> -> f32
  %zero = scalar.constant 0.0 : f32
  %two = scalar.constant 2.0 : f32
  %acc, %p, %q, %n = scf.for %k = [%c0 to %steps step %c1](%a = %zero : f32, %u = %mine : f32, %v = %two : f32, %m = %c0 : index) -> (f32, f32, f32, index) {
    %put = scalar.mulf %u, %v : f32
    view.store %put, %lv[%t] : f32, view<48xf32>
    kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)
    %nb0 = index.add %t, %k : index
    %nb1 = index.add %nb0, %c1 : index
    %nb = index.rem %nb1, %w : index
    %got = view.load %lv[%nb] : view<48xf32> -> f32
    %a2 = scalar.addf %a, %got : f32
    kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)
    %m2 = index.add %m, %k : index
    scf.yield %a2, %v, %u, %m2 : f32, f32, f32, index
  }
  %n32 = index.cast %n : index to i32
  %nf = scalar.sitofp %n32 : i32 to f32
  %r0 = scalar.addf %acc, %p : f32
  %r1 = scalar.mulf %r0, %q : f32
  %r = scalar.addf %r1, %nf : f32
  view.store %r, %ov[%i] : f32, view<1024xf32>
  kernel.return
}
"""


@pytest.mark.parametrize("interpret", [True, False])
def test_i1_true_reads_as_minus_one_when_signed(interpret):
    # Two's complement i1: its one bit is the sign bit, so extsi/sitofp of true give -1
    # (LLVM's sext/sitofp of i1), extui gives 1.
    art = hx.loom.compile(I1_SIGNED, "i1s", target="gfx1151")
    assert art.executor == "native", art.executor_reason
    status, (ints, floats) = _run(art, [np.zeros(16 * 3 * 4, np.uint8), np.zeros(16 * 4, np.uint8)], b"", [], interpret)
    odd = np.arange(16) % 2 == 1
    got = np.frombuffer(ints, np.int32).reshape(16, 3)
    assert np.array_equal(got[:, 0], np.where(odd, -1, 0))
    assert np.array_equal(got[:, 1], np.where(odd, 1, 0))
    assert np.array_equal(got[:, 2], np.where(odd, -1, 0))
    assert np.array_equal(np.frombuffer(floats, np.float32), np.where(odd, -1.0, 0.0).astype(np.float32))


@pytest.mark.parametrize("steps", [0, 1, 5])
def test_barriers_in_loops_with_results_match_the_interpreter(steps):
    art = hx.loom.compile(CARRIED, "carried", target="gfx1151")
    assert art.executor == "native", art.executor_reason
    rng = np.random.default_rng(5)
    x = rng.standard_normal(1024).astype(np.float32)
    bufs = [x.view(np.uint8), np.zeros(4096, np.uint8)]
    consts = art.pack_constants(steps=steps)
    want = _run(art, bufs, consts, [4], interpret=True)
    got = _run(art, bufs, consts, [4], interpret=False)
    assert got == want and want[0] == "ok", want[:2] if want[0] == "error" else ""
    # Independent: the same recurrence in NumPy float32, one workgroup at a time.
    out = np.frombuffer(want[1][1], np.float32)[:192]
    f32 = np.float32
    for g in range(4):
        u, v = x[48 * g:48 * g + 48].copy(), np.full(48, f32(2.0))
        acc, n = np.zeros(48, f32), 0
        for k in range(steps):
            lds = u * v
            acc = acc + lds[(np.arange(48) + k + 1) % 48]
            u, v, n = v, u, n + k
        np.testing.assert_array_equal(out[48 * g:48 * g + 48], (acc + u) * v + f32(n))


# Vectors (Note [Native Loom vectors]): matvec_q8_0's shape at a small size, with varying and
# uniform vector loads, lanewise conversions, vector.dotf with and without an accumulator and
# vector.splat; %shift moves the varying load's footprint past the end of its axis when set.
VECTORS = """\
amdgpu.target<gfx1151> @gpu
kernel.def target(@gpu) export("vecs") @vecs() {
  %one = index.constant 1 : index
  %w = index.constant 40 : index
  %g = index.constant 2 : index
  kernel.launch.config workgroups(%g, %one, %one) workgroup_size(%w, %one, %one) : index
} launch(%shift: index, %q: buffer, %x: buffer, %out: buffer) {
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %c4 = index.constant 4 : index
  %i = kernel.workitem.dispatch.id<x> : index
  %qs = buffer.view %q[%z] : buffer -> view<20x16xi8>
  %xs = buffer.view %x[%z] : buffer -> view<16xf32>
  %os = buffer.view %out[%z] : buffer -> view<80x3xf32>
  %row = index.div %i, %c4 : index
  %part = index.rem %i, %c4 : index
  %col0 = index.mul %part, %c4 : index
  %col = index.add %col0, %shift : index
  %q4 = vector.load %qs[%row, %col] : view<20x16xi8> -> vector<4xi8>
  %qi = vector.extsi %q4 : vector<4xi8> to vector<4xi32>
  %qf = vector.sitofp %qi : vector<4xi32> to vector<4xf32>
  %x4 = vector.load %xs[%col0] : view<16xf32> -> vector<4xf32>
  %u4 = vector.load %xs[%c4] : view<16xf32> -> vector<4xf32>
  %half = scalar.constant 0.5 : f32
  %dot = vector.dotf %qf, %x4, %half : vector<4xf32>, vector<4xf32>, f32 -> f32
  %raw = vector.dotf %qf, %u4 : vector<4xf32>, vector<4xf32> -> f32
  %s = vector.splat %dot : vector<4xf32>
  %both = vector.dotf %s, %x4 : vector<4xf32>, vector<4xf32> -> f32
  view.store %dot, %os[%i, %c0] : f32, view<80x3xf32>
  view.store %raw, %os[%i, %c1] : f32, view<80x3xf32>
  %c2 = index.constant 2 : index
  view.store %both, %os[%i, %c2] : f32, view<80x3xf32>
  kernel.return
}
"""


@pytest.mark.parametrize("shift", [0, 1, 13])
def test_vectors_match_the_interpreter(shift):
    art = hx.loom.compile(VECTORS, "vecs", target="gfx1151")
    assert art.executor == "native", art.executor_reason
    rng = np.random.default_rng(9)
    q = rng.integers(-128, 128, (20, 16), dtype=np.int8)
    x = rng.standard_normal(16).astype(np.float32)
    bufs = [q.view(np.uint8).reshape(-1), x.view(np.uint8), np.zeros(80 * 3 * 4, np.uint8)]
    consts = art.pack_constants(shift=shift)
    want = _run(art, bufs, consts, [], interpret=True)
    got = _run(art, bufs, consts, [], interpret=False)
    assert got == want
    if shift:
        assert want[0] == "error" and "footprint [" in want[2] and "out of bounds for axis 1 of extent 16" in want[2], want
        return
    assert want[0] == "ok"
    # Independent: the same dot products in float64 (the fma chain rounds in float32: a tolerance).
    out = np.frombuffer(want[1][2], np.float32).reshape(80, 3)
    i = np.arange(80)
    qv = np.stack([q[k // 4, 4 * (k % 4):4 * (k % 4) + 4] for k in i]).astype(np.float64)
    xv = np.stack([x[4 * (k % 4):4 * (k % 4) + 4] for k in i]).astype(np.float64)
    dot = 0.5 + (qv * xv).sum(1)
    np.testing.assert_allclose(out[:, 0], dot, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(out[:, 1], qv @ x[4:8].astype(np.float64), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(out[:, 2], out[:, 0].astype(np.float64) * xv.sum(1), rtol=1e-5, atol=1e-4)


# Vectors carried by scf.for and scf.if, vector.constant, lanewise arithmetic and vector.store
# (flash_decode's shape): each work-item accumulates acc = acc * 0.5 + x4 * s over %steps rows,
# stores it through a varying address and, work-item 0, through a uniform one.
CARRIED_VECTORS = """\
amdgpu.target<gfx1151> @gpu
kernel.def target(@gpu) export("cvecs") @cvecs() {
  %one = index.constant 1 : index
  %w = index.constant 24 : index
  %g = index.constant 2 : index
  kernel.launch.config workgroups(%g, %one, %one) workgroup_size(%w, %one, %one) : index
} launch(%steps: index, %shift: index, %x: buffer, %out: buffer) {
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %c4 = index.constant 4 : index
  %i = kernel.workitem.dispatch.id<x> : index
  %xs = buffer.view %x[%z] : buffer -> view<8x192xf32>
  %os = buffer.view %out[%z] : buffer -> view<49x4xf32>
  %col = index.mul %i, %c4 : index
  %acc0 = vector.constant 0.0 : vector<4xf32>
  %half = scalar.constant 0.5 : f32
  %h4 = vector.splat %half : vector<4xf32>
  %acc = scf.for %r = [%c0 to %steps step %c1](%a = %acc0 : vector<4xf32>) -> (vector<4xf32>) {
    %x4 = vector.load %xs[%r, %col] : view<8x192xf32> -> vector<4xf32>
    %rf0 = index.cast %r : index to i32
    %rf = scalar.sitofp %rf0 : i32 to f32
    %s4 = vector.splat %rf : vector<4xf32>
    %kept = vector.mulf %a, %h4 : vector<4xf32>
    %next = vector.fmaf %x4, %s4, %kept : vector<4xf32>
    %odd = index.rem %r, %c4 : index
    %skip = index.cmp eq, %odd, %c1 : index
    %y = scf.if %skip -> (vector<4xf32>) {
      scf.yield %a : vector<4xf32>
    } else {
      %d = vector.subf %next, %h4 : vector<4xf32>
      %q = vector.divf %d, %h4 : vector<4xf32>
      %e = vector.addf %q, %x4 : vector<4xf32>
      scf.yield %e : vector<4xf32>
    }
    scf.yield %y : vector<4xf32>
  }
  %row = index.add %i, %shift : index
  vector.store %acc, %os[%row, %c0] : vector<4xf32>, view<49x4xf32>
  %first = index.cmp eq, %i, %c0 : index
  scf.if %first {
    %c48 = index.constant 48 : index
    vector.store %acc, %os[%c48, %c0] : vector<4xf32>, view<49x4xf32>
  }
  kernel.return
}
"""


@pytest.mark.parametrize("steps,shift", [(0, 0), (6, 0), (6, 2)])
def test_carried_vectors_and_vector_stores_match_the_interpreter(steps, shift):
    art = hx.loom.compile(CARRIED_VECTORS, "cvecs", target="gfx1151")
    assert art.executor == "native", art.executor_reason
    x = np.random.default_rng(11).standard_normal((8, 192)).astype(np.float32)
    bufs = [x.view(np.uint8).reshape(-1), np.zeros(49 * 16, np.uint8)]
    consts = art.pack_constants(steps=steps, shift=shift)
    want = _run(art, bufs, consts, [], interpret=True)
    got = _run(art, bufs, consts, [], interpret=False)
    assert got == want
    if shift:
        assert want[0] == "error" and "out of bounds for axis 0 of extent 49" in want[2], want
        return
    # Independent: the same recurrence in NumPy float32 (fma rounded once: float64 then float32).
    f32 = np.float32
    acc = np.zeros((48, 4), f32)
    for r in range(steps):
        x4 = x[r].reshape(48, 4)
        nxt = (x4.astype(np.float64) * r + (acc * f32(0.5)).astype(np.float64)).astype(f32)
        if r % 4 != 1:
            acc = (nxt - f32(0.5)) / f32(0.5) + x4
    out = np.frombuffer(want[1][1], np.float32).reshape(49, 4)
    np.testing.assert_array_equal(out[:48], acc)
    np.testing.assert_array_equal(out[48], acc[0])


def test_inline_exp_gives_fmaths_bits_over_the_float_range():
    # Native code spells fmath's float exp out in IR (Note [float exp in float]): over every 61st float
    # bit pattern (both signs, so subnormal, overflowing, infinite and NaN inputs) and the edges of the
    # clamps, it must give the interpreter's bits and hx.exp's, within 1 ulp of the float64 exp.
    art = hx.loom.compile((ROOT / "examples" / "loom" / "exp_f32.loom").read_text(), "exp_f32", target="gfx1151")
    assert art.executor == "native", art.executor_reason
    bits = np.arange(0, 1 << 32, 61, dtype=np.uint64).astype(np.uint32)
    edges = np.array([-104.0, -103.97, -103.28, -87.34, 0.0, -0.0, 2.0 ** -24, 88.72, 88.7228, 89.0, 89.5,
                      np.inf, -np.inf, np.nan], np.float32)
    x = np.concatenate([bits.view(np.float32), edges])
    count = x.size
    consts = art.pack_constants(count=count)
    want = _run(art, [x.view(np.uint8), np.zeros(count * 4, np.uint8)], consts, [count], interpret=True)
    got = _run(art, [x.view(np.uint8), np.zeros(count * 4, np.uint8)], consts, [count], interpret=False)
    assert want[0] == "ok" and got == want
    ours = np.frombuffer(want[1][1], np.float32)
    ufunc = np.asarray(hx.exp(hx.asarray(x)))
    num = ~np.isnan(x)  # a signalling NaN: the interpreter quiets it, the ufunc's array form returns it as is
    assert np.array_equal(ours[num].view(np.uint32), ufunc[num].view(np.uint32)) and np.isnan(ufunc[~num]).all()
    with np.errstate(over="ignore", invalid="ignore"):
        ref = np.exp(x.astype(np.float64)).astype(np.float32)
    finite = ~np.isnan(ref)
    assert np.isnan(ours[~finite]).all()
    diff = np.abs(ours[finite].view(np.int32).astype(np.int64) - ref[finite].view(np.int32).astype(np.int64))
    assert diff.max() <= 1


@pytest.mark.parametrize("op", ["minimumf", "maximumf"])
def test_nan_propagating_min_max_keep_the_first_nans_payload(op):
    # fmath's minimum/maximum return the first NaN operand quieted (never a + b, whose payload depends
    # on the operand order a compiler picks): native code inlines the same, so the bits agree.
    src = (ROOT / "examples" / "loom" / "add_f32.loom").read_text().replace("scalar.addf", f"scalar.{op}")
    art = hx.loom.compile(src, "add_f32", target="gfx1151")
    assert art.executor == "native", art.executor_reason
    n = 64
    x = np.full(n, 0x7FC00011, np.uint32)
    y = np.full(n, 0x7FC00022, np.uint32)
    x[1::4] = np.float32(1.5).view(np.uint32)
    y[2::4] = np.float32(-0.0).view(np.uint32)
    x[3::4] = 0x7F800005  # a signalling NaN comes back quieted
    consts = art.pack_constants(count=n)
    outs = [_run(art, [x.view(np.uint8), y.view(np.uint8), np.zeros(n * 4, np.uint8)], consts, [n], interpret=i)
            for i in (True, False)]
    assert outs[0][0] == "ok" and outs[0] == outs[1]
    got = np.frombuffer(outs[0][1][2], np.uint32)
    assert list(got[:4]) == [0x7FC00011, 0x7FC00022, 0x7FC00011, 0x7FC00005]


# --- compares of a lane-stepping index (Note [Lane 0 as a scalar]) ---------------------------

_PREDS = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")


def _cmp_kernel(width: int, rows: int, groups: int, stepped: bool = False) -> tuple[str, int]:
    """A folded kernel storing, per work-item, every compare of %j = dispatch x + %shift with %u
    (with `stepped`, %j = dispatch x * %step + %shift, %step a launch argument)."""
    items = width * rows * groups
    lines = [f"""amdgpu.target<gfx1151> @gpu
kernel.def target(@gpu) export("cmps") @cmps() {{
  %one = index.constant 1 : index
  %w = index.constant {width} : index
  %h = index.constant {rows} : index
  %g = index.constant {groups} : index
  kernel.launch.config workgroups(%g, %one, %one) workgroup_size(%w, %h, %one) : index
}} launch(%shift_hi: index, %shift_lo: index, %u_hi: index, %u_lo: index,{" %step_hi: index, %step_lo: index," if stepped else ""} %out: buffer) {{
  %z = index.constant 0 : offset
  %two32 = index.constant 4294967296 : index
  %shift = index.madd %shift_hi, %two32, %shift_lo : index
  %u = index.madd %u_hi, %two32, %u_lo : index
  %x = kernel.workitem.dispatch.id<x> : index
  %y = kernel.workitem.dispatch.id<y> : index
  %span = index.constant {width * groups} : index
  %row = index.madd %y, %span, %x : index
  {"%step = index.madd %step_hi, %two32, %step_lo : index" if stepped else "%step = index.constant 1 : index"}
  %j = {"index.madd %x, %step, %shift" if stepped else "index.add %x, %shift"} : index
  %ov = buffer.view %out[%z] : buffer -> view<{items}x{2 * len(_PREDS)}xi32>"""]
    for k, p in enumerate(_PREDS):
        for side, (a, b) in enumerate((("%j", "%u"), ("%u", "%j"))):
            col = 2 * k + side
            lines.append(f"  %c{col} = index.cmp {p}, {a}, {b} : index")
            lines.append(f"  %e{col} = scalar.extui %c{col} : i1 to i32")
            lines.append(f"  %k{col} = index.constant {col} : index")
            lines.append(f"  view.store %e{col}, %ov[%row, %k{col}] : i32, view<{items}x{2 * len(_PREDS)}xi32>")
    return "\n".join(lines) + "\n  kernel.return\n}\n", items


def _cmp_reference(p: str, a: int, b: int) -> bool:
    if p[0] == "u":
        a, b = a % 2**64, b % 2**64
    return {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[p.lstrip("su") if p not in ("eq", "ne") else p]


def _split64(name: str, v: int) -> dict:
    # Index scalars in the constant block are 32 bits: v = hi * 2^32 + lo (mod 2^64), both int32.
    lo = ((v & 0xFFFFFFFF) ^ 0x80000000) - 0x80000000
    hi = (((v - lo) % 2**64) >> 32 ^ 0x80000000) - 0x80000000
    return {f"{name}_hi": hi, f"{name}_lo": lo}


_EDGES = [0, 1, -1, 31, 32, 33, 2**63 - 1, -(2**63), 2**63 - 20, -(2**63) + 5, -40, -5, 100, 2**32]


@pytest.mark.parametrize("width", [3, 5, 64])
@pytest.mark.parametrize("step,shift", [(2**63, 1), (2**63, -5), (2**62 + 1, 3), (-(2**62) - 7, 2**63 - 9)])
def test_compares_of_lanes_that_wrap_more_than_once_in_a_chunk(width, step, shift):
    # %j = x * step + shift wraps several times across a chunk (step 2^63: 1, -2^63 + 1, 1, ...):
    # its two ends can agree with the bound while lanes between them do not, so no executor may
    # answer a chunk from its ends. Both executors against Python, lane by lane.
    src, items = _cmp_kernel(width, 1, 40 if width < 64 else 2, stepped=True)
    art = hx.loom.compile(src, "cmps", target="gfx1151")
    u = 0
    consts = art.pack_constants(**_split64("shift", shift), **_split64("u", u), **_split64("step", step))
    out = [np.zeros(items * 2 * len(_PREDS) * 4, np.uint8)]
    want = _run(art, out, consts, [], interpret=True)
    got = _run(art, out, consts, [], interpret=False)
    assert want[0] == "ok" and got == want
    res = np.frombuffer(want[1][0], np.int32).reshape(items, 2 * len(_PREDS))
    span = width * (40 if width < 64 else 2)
    for row in range(items):
        j = ((row % span) * step + shift + 2**63) % 2**64 - 2**63
        for k, p in enumerate(_PREDS):
            assert res[row, 2 * k] == _cmp_reference(p, j, u), (row, p)
            assert res[row, 2 * k + 1] == _cmp_reference(p, u, j), (row, p)


@pytest.mark.parametrize("width,rows,groups", [(256, 1, 2), (64, 2, 3), (48, 1, 5), (3, 1, 40)])
@settings(max_examples=8, deadline=None)
@given(shift=st.one_of(st.sampled_from(_EDGES), st.integers(-(2**63), 2**63 - 1)),
       du=st.one_of(st.sampled_from([0, 1, 5, 31, 32, 40, -1, 200, 511, 512]), st.integers(-(2**63), 2**63 - 1)))
def test_lane_stepping_compares_match_the_interpreter_and_python(width, rows, groups, shift, du):
    # %j steps by one from lane to lane, %u by zero: native code counts the lanes below %u
    # instead of comparing vectors, where the chunk's lanes do not wrap in the compare's order.
    # Shifts near 2^63 and 2^64 make %j wrap inside a chunk; %u near %j's range puts the
    # boundary inside a chunk. Widths: one-dimensional launches, a two-dimensional
    # workgroup, and chunks that span workgroups (the other copies of a folded body).
    src, items = _cmp_kernel(width, rows, groups)
    art = hx.loom.compile(src, "cmps", target="gfx1151")
    assert art.executor == "native", art.executor_reason
    u = (shift + du + 2**63) % 2**64 - 2**63
    consts = art.pack_constants(**_split64("shift", shift), **_split64("u", u))
    out = [np.zeros(items * 2 * len(_PREDS) * 4, np.uint8)]
    want = _run(art, out, consts, [], interpret=True)
    got = _run(art, out, consts, [], interpret=False)
    assert want[0] == "ok" and got == want
    res = np.frombuffer(want[1][0], np.int32).reshape(items, 2 * len(_PREDS))
    span = width * groups
    for row in range(0, items, 7):
        x = row % span
        j = (x + shift + 2**63) % 2**64 - 2**63
        for k, p in enumerate(_PREDS):
            assert res[row, 2 * k] == _cmp_reference(p, j, u), (row, p)
            assert res[row, 2 * k + 1] == _cmp_reference(p, u, j), (row, p)
