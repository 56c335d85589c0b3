"""The Loom op catalogue (issue 25 item 4): every op of Loom's dialect definitions is in
``hx.loom.op_catalogue()``, and each is either executed by the emulator (a small program using it runs)
or refused when the program is compiled, with the catalogue's EMULATOR code, never with a parse error
and never only when it runs. Also the plan-time refusals of the matrix ops (fragments, encodings, mma)
and the kernel/func spellings issue 25 lists (subgroup shuffle typing, func.template/func.apply,
template.apply without results)."""

import pathlib
import re

import numpy as np
import pytest

import hrxarray as hx
from hrxarray import _core

GPU = "gfx1151"

# Op names extracted once from ROCm/hrx-system loom/py/loom/dialect/vector/defs.py at commit
# 0a3d23a46ecae058f11d5043d3f2e249744d80f7 (all of it) and kernel/defs.py at commit
# 0a81d197d9c480c0bf76266d74bd257b76003796 (its first 64,000 characters: through kernel.async.wait).
DEFS_VECTOR = """constant poison empty splat iota mask.range broadcast from_elements extract insert slice concat
transpose shuffle interleave deinterleave table.lookup table.quantize transform decode encode fragment
fragment.repack fragment.load fragment.store load store load.mask store.mask load.expand store.compress gather
scatter gather.mask scatter.mask atomic.reduce atomic.reduce.mask atomic.rmw atomic.rmw.mask atomic.cmpxchg
select cmpi cmpf addf subf mulf divf remf negf absf minimumf maximumf minnumf maxnumf clampf copysignf fmaf
addi subi muli divsi divui remsi remui ceildivsi ceildivui floordivsi negi absi minsi maxsi minui maxui fmai
andi ori xori shli shrsi shrui rotli rotri ctlzi cttzi ctpopi expf exp2f expm1f logf log2f log10f log1pf powf
sqrtf rsqrtf cbrtf sinf cosf sinturnsf costurnsf tanf asinf acosf atanf atan2f sinhf coshf tanhf asinhf acoshf
atanhf erff erfcf logisticf siluf softplusf geluf ceilf floorf roundf roundevenf truncf isnanf isinff isfinitef
signf signi extf fptrunc extsi extui trunci sitofp uitofp fptosi fptoui bitcast bitfield.extractu
bitfield.extracts bitfield.insert bitpack bitunpacku bitunpacks dotf dot2f dot4i dot8i4 dot4f8 mma reduce
reduce.axes""".split()
DEFS_KERNEL = """def launch.config return exit assert workitem.id workgroup.id workgroup.size workgroup.count
cluster.id cluster.workgroup.id cluster.workgroup.flat_id cluster.size cluster.count workitem.dispatch.id
subgroup.id subgroup.count subgroup.size subgroup.lane.id subgroup.shuffle subgroup.broadcast
subgroup.broadcast.first subgroup.reduce subgroup.scan subgroup.vote.any subgroup.vote.all subgroup.vote.ballot
subgroup.active.mask subgroup.match.any subgroup.match.all workgroup.reduce workgroup.scan workgroup.vote.any
workgroup.vote.all workgroup.vote.count tensor.lds.descriptor barrier async.copy async.copy.mask async.gather
async.gather.mask async.cluster.gather async.cluster.gather.mask async.tensor.load.to.lds
async.tensor.store.from.lds async.group async.wait""".split()
DEFS_OPS = ["vector." + n for n in DEFS_VECTOR] + ["kernel." + n for n in DEFS_KERNEL]

CATALOGUE = hx.loom.op_catalogue()
BY_NAME = {e["name"]: e for e in CATALOGUE}

HEAD = """
amdgpu.target<gfx1151> @gpu {subgroup_size = 32}
kernel.def target(@gpu) export("k") @k() {
  %one = index.constant 1 : index
  %w = index.constant 4 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%w, %one, %one) : index
} launch(%o: buffer) {
"""


def module(body, prelude=""):
    """A one-workgroup kernel @k (4 work-items, one buffer %o) around `body`."""
    return prelude + HEAD + body + "\n  kernel.return\n}\n"


def run(src, bindings=None):
    """Plans and runs @k over `bindings` (default: one 64-byte buffer)."""
    bindings = bindings if bindings is not None else [np.zeros(64, np.uint8)]
    views = [b.view(np.uint8).reshape(-1) for b in bindings]
    _core.loom._run_program(src, "k", GPU, {}, views, b"", None, False, [])


def test_every_defs_op_is_catalogued():
    missing = [n for n in DEFS_OPS if n not in BY_NAME]
    assert not missing, missing
    assert len(BY_NAME) == len(CATALOGUE)  # one entry per op


def test_each_entry_is_executed_or_carries_a_refusal():
    for e in CATALOGUE:
        assert e["dialect"] == e["name"].split(".")[0] or e["dialect"] == "target", e
        if e["executed"]:
            assert e["code"] is None and e["reason"] == ""
        else:
            assert re.fullmatch(r"EMULATOR/0\d\d", e["code"]), e


# --- every op: executed (a small program runs) or refused at compile time with its code ---------

TYPES = {"index": ["index"], "scalar": ["f32", "i32"], "vector": ["vector<4xf32>", "vector<4xi32>"]}
CAST_TO = {"f32": ["f64", "f16", "i32", "i64", "i16"], "i32": ["i64", "i16", "f32", "i8"],
           "vector<4xf32>": ["vector<4xf64>", "vector<4xf16>", "vector<4xi32>", "vector<4xi16>"],
           "vector<4xi32>": ["vector<4xi64>", "vector<4xi16>", "vector<4xf32>", "vector<4xi8>"], "index": ["i32"]}


def constant(t):
    """A line defining %a of type `t`."""
    d = "index" if t == "index" else "vector" if t.startswith("vector") else "scalar"
    return f"  %a = {d}.constant {'2.5' if 'f' in t.split('x')[-1] else '3'} : {t}"


def candidates(e):
    """Programs that use op `e` in its plainest spellings (the first that gets past the parser decides)."""
    name, dialect = e["name"], e["dialect"]
    n_ops = e["operands"] if e["operands"] in (1, 2, 3) else 1
    n_res = e["results"] if e["results"] is not None else 1
    res = ", ".join(f"%r{k}" for k in range(n_res)) + " = " if n_res else ""
    out = []
    for t in TYPES.get(dialect, ["f32", "i32", "index"]):
        args = ", ".join(["%a"] * n_ops)
        lines = [f"{res}{name} {args} : {t}", f"{res}{name} slt, {args} : {t}", f"{res}{name} olt, {args} : {t}",
                 f"{res}{name}<x> : index", f"{res}{name} : {t}", f"{res}{name} 1 : {t}"]
        lines += [f"{res}{name} %a : {t} to {u}" for u in CAST_TO.get(t, [])]
        out += [module(constant(t) + "\n  " + line) for line in lines]
    return out


# Ops whose spelling the plain candidates do not reach, with a program of their own.
SPECIAL = {
    "vector.fragment.load": module("  %v = buffer.view %o[%z] : buffer -> view<4x4xf32>\n"
                                   "  %c4 = index.constant 4 : index\n  %c0 = index.constant 0 : index\n"
                                   "  %f = vector.fragment.load<lhs> %v[%c0, %c0] shape [%c4, %c4] : view<4x4xf32> -> vector<16xf32>",
                                   ).replace("launch(%o: buffer) {\n", "launch(%o: buffer) {\n  %z = index.constant 0 : offset\n"),
    "vector.fragment.repack": module("  %a = vector.constant 1.0 : vector<16xf32>\n  %c4 = index.constant 4 : index\n"
                                     "  %f = vector.fragment.repack<lhs> %a shape [%c4, %c4] : vector<16xf32> -> vector<16xbf16>"),
    "vector.decode": module(
        "  %s = encoding.define #encoding.operand<element_format=bfp16ebs8, payload_elements=64, rounding=nearest_even> : encoding<schema>\n"
        "  %x = vector.constant 1.5 : vector<64xbf16>\n"
        "  %e = vector.encode %x using %s : vector<64xbf16>, encoding<schema> -> vector<72xi8>\n"
        "  %d = vector.decode %e using %s : vector<72xi8>, encoding<schema> -> vector<64xbf16>"),
    "vector.clampf": module("  %a = vector.constant 1.0 : vector<4xf32>\n"
                            "  %r = vector.clampf<ordered> %a, %a, %a : vector<4xf32>"),
    "low.invoke": module("  %a = scalar.constant 1 : i32\n  %r = low.invoke @lf(%a) : (i32) -> (i32)",
                         prelude='low.func.def @lf(%x: i32) -> (i32) asm { "v_mov_b32 $0, $1" }\n'),
}
# Executed ops the plain candidates cannot express (definitions, regions, memory, calls): each
# appears in a program the test suite runs (checked below by name).
SUITE = "\n".join(p.read_text() for p in sorted(pathlib.Path(__file__).parent.glob("test_*.py"))
                  if p.name != pathlib.Path(__file__).name)
SUITE += "\n".join(p.read_text() for p in sorted((pathlib.Path(__file__).parent / "loom").glob("*")) if p.is_file())
# Judged by tests/test_loom_pipeline_extras.py (pipeline.fold/reduce/buffer) and the low-asm tests.
ELSEWHERE = {"pipeline.buffer", "pipeline.fold", "pipeline.reduce", "low.func.def"}


# Executed ops no other program of the suite uses, run (and checked) by test_coordinates_votes_and_hints_run.
COVER = """
amdgpu.target<gfx1151> @gpu {subgroup_size = 32}
target.decl @later
target.generic @anywhere
kernel.def target(@gpu) export("k") @k() {
  %one = index.constant 1 : index
  %two = index.constant 2 : index
  %w = index.constant 64 : index
  kernel.launch.config workgroups(%two, %one, %one) workgroup_size(%w, %one, %one) : index
} launch(%o: buffer, %q: buffer) {
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %c2 = index.constant 2 : index
  %t = kernel.workitem.dispatch.id<x> : index
  %na, %nb = buffer.assume.noalias %o, %q : buffer, buffer
  %sa, %sb = buffer.assume.same_root %na, %nb : buffer, buffer
  %ov = buffer.view %sa[%z] : buffer -> view<128x16xi32>
  %rv = view.refine %ov : view<128x16xi32> -> view<128x16xi32>
  view.prefetch %rv[%t, %c0] : view<128x16xi32>
  scf.schedule.fence
  %t32 = index.cast %t : index to i32
  %ta = scalar.assume %t32 [range(%t32, 0, 128)] : i32
  %r = index.rem %t, %c2 : index
  %odd = index.cmp eq, %r, %c1 : index
  %first = kernel.subgroup.broadcast.first %ta : i32
  %any = kernel.subgroup.any %odd : i1
  %all = kernel.subgroup.all %odd : i1
  %vany = kernel.subgroup.vote.any %odd : i1
  %vall = kernel.subgroup.vote.all %odd : i1
  %vold = kernel.subgroup.vote<any> %odd : i1
  %bal = kernel.subgroup.vote.ballot %odd : i1 -> i64
  %wany = kernel.workgroup.vote.any %odd : i1
  %wall = kernel.workgroup.vote.all %odd : i1
  %wcnt = kernel.workgroup.vote.count %odd : i1 -> i32
  %ix = [kernel.subgroup.size : index, kernel.subgroup.count : index, kernel.workgroup.count<x> : index,
         kernel.cluster.size<x> : index, kernel.cluster.count<x> : index, target.subgroup.size : index]
  STORES
  kernel.return
}
"""
_COORDS = ["kernel.subgroup.size", "kernel.subgroup.count", "kernel.workgroup.count<x>", "kernel.cluster.size<x>",
           "kernel.cluster.count<x>", "target.subgroup.size"]
_VALUES = ["%first", "%any", "%all", "%vany", "%vall", "%vold", "%wany", "%wall", "%wcnt"]
_lines = [f"  %k{j} = {c} : index\n  %k{j}i = index.cast %k{j} : index to i32\n"
          f"  view.store %k{j}i, %rv[%t, {j}] : i32, view<128x16xi32>" for j, c in enumerate(_COORDS)]
for j, v in enumerate(_VALUES):
    col = len(_COORDS) + j
    if v in ("%first", "%wcnt"):
        _lines.append(f"  view.store {v}, %rv[%t, {col}] : i32, view<128x16xi32>")
    else:
        _lines.append(f"  %e{j} = scalar.extui {v} : i1 to i32\n  view.store %e{j}, %rv[%t, {col}] : i32, view<128x16xi32>")
_lines.append(f"  %bl = scalar.trunci %bal : i64 to i32\n  view.store %bl, %rv[%t, 15] : i32, view<128x16xi32>")
COVER = re.sub(r"  %ix = \[.*?\]\n", "", COVER, flags=re.S).replace("  STORES", "\n".join(_lines))
COVERED_HERE = {"buffer.assume.noalias", "buffer.assume.same_root", "view.refine", "view.prefetch", "scf.schedule.fence",
                "scalar.assume", "kernel.subgroup.broadcast.first", "kernel.subgroup.any", "kernel.subgroup.all",
                "kernel.subgroup.vote.any", "kernel.subgroup.vote.all", "kernel.subgroup.vote",
                "kernel.subgroup.vote.ballot", "kernel.workgroup.vote.any", "kernel.workgroup.vote.all",
                "kernel.workgroup.vote.count", "target.decl", "target.generic", "target.subgroup.size",
                "kernel.subgroup.size", "kernel.subgroup.count", "kernel.workgroup.count", "kernel.cluster.size",
                "kernel.cluster.count",
                "func.template", "func.apply"}  # these two: test_func_template_and_apply_run_with_a_portability_warning


def test_coordinates_votes_and_hints_run():
    o, q = np.zeros((128, 16), np.int32), np.zeros(4, np.int32)
    views = [o.view(np.uint8).reshape(-1), q.view(np.uint8).reshape(-1)]
    _core.loom._run_program(COVER, "k", GPU, {}, views, b"", None, False, [])
    t = np.arange(128)
    assert (o[:, :6] == [32, 2, 2, 1, 2, 32]).all()  # subgroup size/count, workgroups, cluster size/count, target fact
    assert np.array_equal(o[:, 6], t // 32 * 32)  # broadcast.first: the subgroup's first lane
    assert (o[:, 7:10] == [1, 0, 1]).all() and (o[:, 10:12] == [0, 1]).all()  # any, all, vote.any, vote.all, vote<any>
    assert (o[:, 12:14] == [1, 0]).all() and (o[:, 14] == 32).all()  # workgroup any, all, count of 64
    assert (o[:, 15].view(np.uint32) == 0xAAAAAAAA).all()  # ballot: the odd lanes


def outcome(src):
    """'ran', or the first diagnostic code of the compile/run error."""
    try:
        hx.loom.compile(src, "k", target=GPU)
        run(src)
        return "ran"
    except hx.loom.LoomError as err:
        return err.diagnostics[0].code
    except hx.HrxError as err:  # a run-time failure
        return "RUN: " + str(err)


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_op_runs_or_is_refused_at_compile_time(name):
    e = BY_NAME[name]
    if name in ELSEWHERE:
        pytest.skip("judged with the pipeline/low tests")
    if name in COVERED_HERE:
        return  # a test below runs and checks it
    if e["executed"] and e["dialect"] not in TYPES:
        # definitions, regions, memory, calls, coordinates: run by the suite's programs
        assert re.search(re.escape(name) + r"[\s<(]", SUITE), f"{name}: executed, but no program of the suite uses it"
        return
    progs = [SPECIAL[name]] if name in SPECIAL else candidates(e)
    seen = [outcome(p) for p in progs]
    assert "PARSE/006" not in seen, f"{name}: valid Loom met an unknown-op parse error"
    assert not any(s.startswith("RUN: ") and "not executed by the emulator" in s for s in seen), (name, seen)
    if e["executed"]:
        if "ran" not in seen:
            assert re.search(re.escape(name) + r"[\s<(]", SUITE), f"{name}: executed, but no program runs it ({seen[:4]})"
    else:
        assert e["code"] in seen, f"{name}: expected a compile-time {e['code']}, got {sorted(set(seen))}"
        assert "ran" not in seen


def test_refusals_name_the_op_and_why():
    src = module("  %a = vector.constant 1.0 : vector<4xf32>\n  %c = vector.constant 0 : vector<4xi32>\n"
                 "  %r = vector.dot4f8<fp8fp8> %c, %c, %a : vector<4xi32>, vector<4xf32>")
    with pytest.raises(hx.loom.LoomError, match=r"EMULATOR/001|vector.dot4f8 \(fp8/bf8") as info:
        hx.loom.compile(src, "k", target=GPU)
    d = info.value.diagnostics[0]
    assert d.code == "EMULATOR/001" and "vector.dot4f8" in d.message and "fp8" in d.message


# --- the integer ops the catalogue work added, against NumPy -----------------------------------

INTS = module("""  %z = index.constant 0 : offset
  %t = kernel.workitem.id<x> : index
  %c0 = index.constant 0 : index
  %av = buffer.view %o[%z] : buffer -> view<2x4x8xi32>
  %a = vector.load %av[%c0, %t, %c0] : view<2x4x8xi32> -> vector<8xi32>
  %b = vector.load %av[%c1, %t, %c0] : view<2x4x8xi32> -> vector<8xi32>
  %ov = buffer.view %res[%z] : buffer -> view<7x4x8xi32>
  %r0 = vector.rotli %a, %b : vector<8xi32>
  %r1 = vector.rotri %a, %b : vector<8xi32>
  %r2 = vector.ceildivsi %a, %b : vector<8xi32>
  %r3 = vector.ceildivui %a, %b : vector<8xi32>
  %r4 = vector.floordivsi %a, %b : vector<8xi32>
  %r5 = vector.signi %a : vector<8xi32>
  %r6 = vector.fmai %a, %b, %a : vector<8xi32>
  vector.store %r0, %ov[0, %t, %c0] : vector<8xi32>, view<7x4x8xi32>
  vector.store %r1, %ov[1, %t, %c0] : vector<8xi32>, view<7x4x8xi32>
  vector.store %r2, %ov[2, %t, %c0] : vector<8xi32>, view<7x4x8xi32>
  vector.store %r3, %ov[3, %t, %c0] : vector<8xi32>, view<7x4x8xi32>
  vector.store %r4, %ov[4, %t, %c0] : vector<8xi32>, view<7x4x8xi32>
  vector.store %r5, %ov[5, %t, %c0] : vector<8xi32>, view<7x4x8xi32>
  vector.store %r6, %ov[6, %t, %c0] : vector<8xi32>, view<7x4x8xi32>""").replace(
    "launch(%o: buffer) {\n", "launch(%o: buffer, %res: buffer) {\n  %c1 = index.constant 1 : index\n")


def test_integer_rotate_divide_sign_fma_match_numpy():
    rng = np.random.default_rng(5)
    a = rng.integers(-2**31, 2**31, (4, 8)).astype(np.int64)
    a[0, :4] = [7, -7, 0, -2**31]
    b = rng.integers(-40, 40, (4, 8)).astype(np.int64)
    b[b == 0] = 3
    b[0, :4] = [2, 2, 5, -1]
    res = np.zeros((7, 4, 8), np.int32)
    run(INTS, [np.stack([a, b]).astype(np.int32), res])
    ua, n = a & 0xFFFFFFFF, b % 32
    assert np.array_equal(res[0].view(np.uint32), ((ua << n) | (ua >> (32 - n))) & 0xFFFFFFFF)
    assert np.array_equal(res[1].view(np.uint32), ((ua >> n) | (ua << (32 - n))) & 0xFFFFFFFF)
    wrap = lambda v: ((v + 2**31) % 2**32 - 2**31)  # noqa: E731
    ceil, floor = wrap(-((-a) // b)), wrap(a // b)
    ceil[0, 3] = floor[0, 3] = 0  # INT_MIN / -1 overflows: 0, as the interpreter's divsi gives
    assert np.array_equal(res[2], ceil)
    ub = b & 0xFFFFFFFF
    assert np.array_equal(res[3].view(np.uint32), -((-ua) // ub))
    assert np.array_equal(res[4], floor)
    assert np.array_equal(res[5], np.sign(a))
    assert np.array_equal(res[6], wrap(a * b + a))


# --- plan-time refusals of the matrix ops --------------------------------------------------------

def refusal(body, prelude=""):
    """The first diagnostic of compiling @k around `body` (it must fail at compile time)."""
    with pytest.raises(hx.loom.LoomError) as info:
        hx.loom.compile(module(body, prelude), "k", target=GPU)
    return info.value.diagnostics[0]


def test_non_bfp16_encoding_is_refused_at_compile_time():
    d = refusal("  %s = encoding.define #encoding.operand<element_format=mxfp4, payload_elements=32> : encoding<schema>\n"
                "  %x = vector.constant 1.0 : vector<32xf32>\n"
                "  %e = vector.encode %x using %s : vector<32xf32>, encoding<schema> -> vector<17xi8>")
    assert d.code == "EMULATOR/001" and "encoding.define" in d.message and "mxfp4" in d.message


def test_encoding_auxiliary_operands_are_refused_at_compile_time():
    d = refusal("  %s = encoding.define #encoding.operand<element_format=bfp16ebs8, payload_elements=64> : encoding<schema>\n"
                "  %x = vector.constant 1.0 : vector<64xbf16>\n  %sc = vector.constant 1.0 : vector<1xf16>\n"
                "  %e = vector.encode %x using %s {scale = %sc : vector<1xf16>} : vector<64xbf16>, encoding<schema> -> vector<72xi8>")
    assert d.code == "EMULATOR/001" and "vector.encode" in d.message and "scale" in d.message


def test_distributed_fragment_shape_is_refused_at_compile_time():
    # a 16x16 tile held as 8 values per work-item (how a wave32 WMMA accumulator is laid out)
    d = refusal("  %c16 = index.constant 16 : index\n  %a = vector.constant 0.0 : vector<8xf32>\n"
                "  %f = vector.fragment<init> %a shape [%c16, %c16] : vector<8xf32>")
    assert d.code == "EMULATOR/001" and "vector.fragment" in d.message and "[16, 16]" in d.message


def test_batched_fragment_is_refused_at_compile_time():
    d = refusal("  %c2 = index.constant 2 : index\n  %c4 = index.constant 4 : index\n"
                "  %a = vector.constant 0.0 : vector<32xf32>\n"
                "  %f = vector.fragment<init> %a shape [blocks(%c2), %c4, %c4] : vector<32xf32>")
    assert d.code in ("EMULATOR/001", "PARSE/003")  # the block-count spelling may not parse in this profile
    if d.code == "EMULATOR/001":
        assert "block count" in d.message


def test_f16_mma_is_refused_at_compile_time():
    d = refusal("  %c4 = index.constant 4 : index\n  %a = vector.constant 1.0 : vector<16xf16>\n"
                "  %c = vector.constant 0.0 : vector<16xf32>\n"
                "  %fa = vector.fragment<lhs> %a shape [%c4, %c4] : vector<16xf16>\n"
                "  %fb = vector.fragment<rhs> %a shape [%c4, %c4] : vector<16xf16>\n"
                "  %fc = vector.fragment<init> %c shape [%c4, %c4] : vector<16xf32>\n"
                "  %p = vector.mma %fa, %fb, %fc : vector<16xf16>, vector<16xf16>, vector<16xf32>")
    assert d.code == "EMULATOR/001" and "vector.mma" in d.message and "f16" in d.message


# --- spellings: subgroup shuffle and broadcast, func.template / func.apply, template.apply --------

SHUFFLE = """
amdgpu.target<gfx1151> @gpu {subgroup_size = 32}
kernel.def target(@gpu) export("k") @k() {
  %one = index.constant 1 : index
  %w = index.constant 32 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%w, %one, %one) : index
} launch(%a: buffer, %o: buffer, %v: buffer, %bo: buffer) {
  %z = index.constant 0 : offset
  %t = kernel.workitem.id<x> : index
  %av = buffer.view %a[%z] : buffer -> view<32xf32>
  %x = view.load %av[%t] : view<32xf32> -> f32
  %off = scalar.constant 3 : i32
  %wd = scalar.constant WIDTH : i32
  %r, %ok = kernel.subgroup.shuffle<MODE> %x, %off, %wd : f32, i32, i32
  %lane = scalar.constant 5 : i32
  %b = kernel.subgroup.broadcast %x from %lane : f32, i32
  %ov = buffer.view %o[%z] : buffer -> view<32xf32>
  %vv = buffer.view %v[%z] : buffer -> view<32xi8>
  %bv = buffer.view %bo[%z] : buffer -> view<32xf32>
  view.store %r, %ov[%t] : f32, view<32xf32>
  %ok8 = scalar.extui %ok : i1 to i8
  view.store %ok8, %vv[%t] : i8, view<32xi8>
  view.store %b, %bv[%t] : f32, view<32xf32>
  kernel.return
}
"""


@pytest.mark.parametrize("mode", ["xor", "up", "down", "index"])
@pytest.mark.parametrize("width", [32, 8])
def test_subgroup_shuffle_types_and_width_match_python(mode, width):
    a = np.arange(32, dtype=np.float32) * 10 + 1
    o, v, bo = np.zeros(32, np.float32), np.zeros(32, np.int8), np.zeros(32, np.float32)
    run(SHUFFLE.replace("MODE", mode).replace("WIDTH", str(width)), [a, o, v, bo])
    for lane in range(32):
        base, k = lane // width * width, lane % width
        src = {"xor": k ^ 3, "up": k - 3, "down": k + 3, "index": 3}[mode]
        ok = 0 <= src < width
        assert v[lane] == ok and o[lane] == (a[base + src] if ok else a[lane]), (lane, mode, width)
    assert (bo == a[5]).all()


TEMPLATES = """
amdgpu.target<gfx1151> @gpu {subgroup_size = 32}
func.template<demo.pick> priority(1) @fallback(%value: i32) -> (i32) {
  func.return %value : i32
}
func.template<demo.pick> target(@gpu) priority(20) @on_gpu(%value: i32) -> (i32) {
  %two = scalar.constant 2 : i32
  %r = scalar.muli %value, %two : i32
  func.return %r : i32
}
template.decl @bump(%v: view<4xi32>, %i: index) -> ()
template.def<@bump> @bump_impl(%v: view<4xi32>, %i: index) -> () {
  %x = view.load %v[%i] : view<4xi32> -> i32
  %one = scalar.constant 1 : i32
  %y = scalar.addi %x, %one : i32
  view.store %y, %v[%i] : i32, view<4xi32>
  template.return
}
kernel.def target(@gpu) export("k") @k() {
  %one = index.constant 1 : index
  %w = index.constant 4 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%w, %one, %one) : index
} launch(%o: buffer) {
  %z = index.constant 0 : offset
  %t = kernel.workitem.id<x> : index
  %ov = buffer.view %o[%z] : buffer -> view<4xi32>
  %t32 = index.cast %t : index to i32
  %r = func.apply<demo.pick>(%t32) : (i32) -> (i32)
  view.store %r, %ov[%t] : i32, view<4xi32>
  template.apply<@bump>(%ov, %t) : (view<4xi32>, index)
  kernel.return
}
"""


def test_func_template_and_apply_run_with_a_portability_warning():
    m = hx.loom.parse(TEMPLATES)
    codes = [w.code for w in m.warnings]
    assert codes.count("EMULATOR/100") == 3  # two providers, one demand
    assert any("func.apply<demo.pick>" in w.message for w in m.warnings)
    o = np.zeros(4, np.int32)
    run(TEMPLATES, [o])
    assert np.array_equal(o, 2 * np.arange(4) + 1)  # the gpu provider (priority 20), then the result-less apply


def test_func_template_selection_falls_back_without_a_target_match():
    src = TEMPLATES.replace("target(@gpu) priority(20)", "target(@other) priority(20)").replace(
        "amdgpu.target<gfx1151> @gpu {subgroup_size = 32}",
        "amdgpu.target<gfx1151> @gpu {subgroup_size = 32}\namdgpu.target<gfx1100> @other {subgroup_size = 32}")
    o = np.zeros(4, np.int32)
    run(src, [o])
    assert np.array_equal(o, np.arange(4) + 1)


# --- view-typed kernel parameters ----------------------------------------------------------------

VIEW_PARAMS = """
amdgpu.target<gfx1151> @gpu {subgroup_size = 32}
kernel.def target(@gpu) export("vp") @vp(%n: index) {
  %one = index.constant 1 : index
  %w = index.constant 64 : index
  %g = index.div %n, %w : index
  kernel.launch.config workgroups(%g, %one, %one) workgroup_size(%w, %one, %one) : index
} launch(%n: index, %x: view<[%n]x2xf32>, %y: view<[%n]xf32>) {
  %i = kernel.workitem.dispatch.id<x> : index
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %a = view.load %x[%i, %c0] : view<[%n]x2xf32> -> f32
  %b = view.load %x[%i, %c1] : view<[%n]x2xf32> -> f32
  %s = scalar.addf %a, %b : f32
  view.store %s, %y[%i] : f32, view<[%n]xf32>
  kernel.return
}
"""


def test_view_parameters_are_view_bindings():
    art = hx.loom.compile(VIEW_PARAMS, "vp", target=GPU)
    params = art.manifest["functions"][0]["parameters"]
    assert [(p["name"], p["kind"]) for p in params] == [("n", "constant"), ("x", "pointer"), ("y", "pointer")]
    assert art.manifest["functions"][0]["interface"]["binding_count"] == 2
    c = art.contract_for(n=128)
    assert [(b.bytes, b.access) for b in c.bindings] == [(128 * 8, hx.Access.READ), (128 * 4, hx.Access.WRITE)]
    assert c.constants == np.uint32(128).tobytes()  # only %n: the views are bindings, not f32 scalars
    hx.Runtime().load_gpu_kernel(art, 2, 64, c)  # the contract from the footprints loads
    x = np.random.default_rng(1).standard_normal((128, 2)).astype(np.float32)
    y = np.zeros(128, np.float32)
    _core.loom._run_program(VIEW_PARAMS, "vp", GPU, {}, [x.view(np.uint8).reshape(-1), y.view(np.uint8)],
                            c.constants, [128], False, [])
    assert np.array_equal(y, x[:, 0] + x[:, 1])
