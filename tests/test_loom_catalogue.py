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

# The reference: every op of Loom's dialect definitions, ROCm/hrx-system loom/py/loom/dialect/<dir>/defs.py,
# each read in full (its Op(...) definitions, the ops its helper functions build, and its ALL_*_OPS registry)
# at the newest stored version the index gave, recorded per file in DEFS_COMMITS. The scalar dialect's ops live
# in scalar/{arithmetic,math,comparison,conversion,bitwise,analysis}.py (ALL_SCALAR_OPS in scalar/__init__.py).
# Left out on purpose: the `test` dialect (test/defs.py at 02c73c7298e726f9567cb2c770e78062e73a043d, 107 ops),
# which its own docstring says is "not part of the loom compiler" but fixtures for the DSL, printer and parser
# (register_by_default=False). hal/__init__.py defines types only (hal.buffer); atomic.py, cache.py, memory.py and
# combining.py hold shared enums and no ops.
DEFS_COMMITS = {
    "vector": "0a3d23a46ecae058f11d5043d3f2e249744d80f7", "kernel": "0a81d197d9c480c0bf76266d74bd257b76003796",
    "buffer": "0633d9f29a5cb329df30f5bafc503a02e3d314a4", "cfg": "49a728b89ff8d8dde6e826c5974e8ea2046f8c21",
    "check": "07fc45391a27045bd3785c7dfe3832d874ddf132", "command": "25ae17e7d59aba0279fa2c46100492a704433ba7",
    "config": "28be388d59e65f4bd59a3df60798aae847e17e4d", "encoding": "0edc9dc8b8895c156b67899adbcf1e8ea62fe311",
    "func": "0880959fe0e55cafce44f2ab34556ded9151b95d", "global": "0d8d285833df521440f969a42888c26639e37c27",
    "group": "618364bb3d76b8241954055801d2f82b59f662b6", "index": "318e57bce712142ef64a573f2bd35edcf3f198bc",
    "llvmir": "520310725cec934e535890fb4e23bdf5ecb585e2", "low": "0169e383fca56b1a5ed9e72b1ce5b0621afe3abe",
    "metadata": "713a99c6d522d964a7d32ce74415c2cb79824c8a", "module": "1c2c89eec41321a4bcd19787aa68b903de57e56a",
    "pass": "501d16e50299119872dd88ea2426d598d39b8df6", "pipeline": "441706ca810c4a0e66dd020efd5a6129febd8196",
    "pool": "aef6852dc7ce4575a7a1ac6d3b36f9337528d2c1", "sanitizer": "25ae17e7d59aba0279fa2c46100492a704433ba7",
    # scalar: analysis.py at 318e57bc..., bitwise.py at aef6852d..., the other four at 501d16e5...
    "scalar": "501d16e50299119872dd88ea2426d598d39b8df6", "scf": "019714bbca55bfb0b16ae8820c90cdd0c46b5436",
    "target": "25ae17e7d59aba0279fa2c46100492a704433ba7", "template": "603693e04557377fc0e69d61679bda6a80faf988",
    "view": "0a3d23a46ecae058f11d5043d3f2e249744d80f7",
}
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
DEFS = {
    "vector": DEFS_VECTOR,
    "kernel": """def launch.config return exit barrier async.copy async.copy.mask async.gather async.gather.mask
async.group async.wait tensor.lds.descriptor async.tensor.load.to.lds async.tensor.store.from.lds async.cluster.gather
async.cluster.gather.mask workitem.id workgroup.id workgroup.size workgroup.count workitem.dispatch.id subgroup.id
subgroup.count subgroup.size subgroup.lane.id subgroup.shuffle subgroup.broadcast subgroup.broadcast.first
subgroup.reduce subgroup.scan subgroup.vote.any subgroup.vote.all subgroup.vote.ballot subgroup.active.mask
subgroup.match.any subgroup.match.all workgroup.reduce workgroup.scan workgroup.vote.any workgroup.vote.all
workgroup.vote.count assert cluster.id cluster.workgroup.id cluster.workgroup.flat_id cluster.size cluster.count decl
launch launch.yield launch.serial launch.concurrent""".split(),
    "buffer": "alloca assume.alignment assume.memory_space assume.noalias assume.same_root view pack length".split(),
    "cfg": "br cond_br switch".split(),
    "check": """case return requires skip_if param.range param.choice param.seed literal generate.iota generate.fill
generate.random.uniform file.read.npy file.write.npy oracle.call expect.equal expect.bitwise expect.close expect.shape
expect expect.event benchmark tensor.view""".split(),
    "command": "program.def program.decl program.launch return yield serial concurrent parameter".split(),
    "config": "decl def get".split(),
    "encoding": """layout.dense layout.strided define isa layout.assume.dense layout.assume.strided assume.spec matches
assume.match""".split(),
    "func": "def decl template ukernel call apply return provider.decl".split(),
    "global": "constant variable rodata.def load store rodata.decl".split(),
    "group": ["create"],
    "index": """constant cast assume add sub mul scale div rem min max madd andi ori xori shli shrsi shrui rotli rotri
ctlzi cttzi ctpopi cmp""".split(),
    "llvmir": "target inline_asm intrinsic".split(),
    "low": """func.def kernel.def func.decl return func.call op const copy move slice concat invoke storage.reserve
storage.view spill reload storage.address br cond_br resource live_in scf.yield scf.condition scf.if scf.for scf.while
schedule.fence assume""".split(),
    "metadata": ["module"],
    "module": ["import"],
    "pass": "pipeline for where repeat call run fail halt yield".split(),
    "pipeline": "def scatter read stage buffer fold reduce write return".split(),
    "pool": "load store pin unpin buffer".split(),
    "sanitizer": "assert.access assert.value assert.op assert.layout race.access race.sync assert.accesses".split(),
    "scalar": """addi subi muli divsi divui remsi remui ceildivsi ceildivui floordivsi negi absi minsi maxsi minui maxui
fmai addf subf mulf divf remf negf absf minimumf maximumf minnumf maxnumf clampf copysignf expf exp2f expm1f logf log2f
log10f log1pf powf sqrtf rsqrtf cbrtf sinf cosf sinturnsf costurnsf tanf asinf acosf atanf atan2f sinhf coshf tanhf
asinhf acoshf atanhf erff erfcf logisticf siluf softplusf geluf fmaf ceilf floorf roundf roundevenf truncf cmpi cmpf
isnanf isinff isfinitef signf signi sitofp uitofp fptosi fptoui extf fptrunc extsi extui trunci bitcast constant poison
andi ori xori shli shrsi shrui rotli rotri ctlzi cttzi ctpopi bitfield.extractu bitfield.extracts assume""".split(),
    "scf": "for if switch yield select lookup condition while schedule.fence".split(),
    "target": "generic decl subgroup.size".split(),
    "template": "decl def ukernel apply call return".split(),
    "view": "subview refine load store atomic.reduce atomic.rmw atomic.cmpxchg prefetch atomic.load atomic.store".split(),
}
DEFS_OPS = [f"{d}.{n}" for d, names in DEFS.items() for n in names]
# Module-level declarations the emulator accepts and ignores (Note [Module-level catalogue ops]).
IGNORED = {"global.constant", "global.variable", "global.rodata.def", "global.rodata.decl", "metadata.module",
           "module.import"}

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
            # module-level declarations the emulator accepts and ignores say so (Note [Module-level catalogue ops])
            assert e["code"] is None and (e["reason"] == "" or e["reason"].startswith("accepted and ignored: ")), e
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

# Programs that hold the ops living outside kernels (host launch programs, check cases, command programs, pass
# pipelines, target-low code, opaque implementations, LLVM targets), written after the defs' own examples, with the
# symbol compile() is asked for: the ops must parse, and compiling that symbol must be refused with their code.
HOST = module("") + """func.def @host(%b: buffer) {
  kernel.launch @k[](%b) : [](buffer)
  kernel.launch.serial {
    kernel.launch @k[](%b) : [](buffer)
    kernel.launch.yield
  }
  kernel.launch.concurrent {
    kernel.launch.yield
  }
  func.return
}
"""
CHECK = module("") + """check.case public @smoke {
  check.requires<target.feature> {feature = "amdgpu.gfx11"}
  check.skip_if<device.memory> {max_bytes = 1073741824} reason("fixture too large")
  %m = check.param.range po2 bounds(1 to 64) : index
  %k = check.param.choice values([16, 24, 32, 64]) : index
  %seed = check.param.seed base(0x4c6f6f6d) count(32) : i64
  %scalar = check.literal value(42) : i32
  %lhs = check.generate.iota offset(0) step(1) : tensor<[%m]xi32>
  %rhs = check.generate.fill value(17) : tensor<[%m]xi32>
  %noise = check.generate.random.uniform seed(%seed) range(-1.0 to 1.0) : tensor<[%m]xf32>
  %input = check.file.read.npy path("fixtures/input.npy") : tensor<1024xf32>
  check.file.write.npy value(%input) path("outputs/input.npy") mode(on_failure) : tensor<1024xf32>
  %packed = check.generate.fill value(0) : tensor<144xi8>
  %payload = check.tensor.view %packed offset(16) : tensor<144xi8> -> tensor<32xi32>
  %eight = check.generate.iota offset(0) step(1) : tensor<8xi32>
  %want = check.oracle.call<reference.scalar> callee(@ref) inputs(%eight) : (tensor<8xi32>) -> (tensor<8xi32>)
  check.expect.equal actual(%eight) expected(%want) : tensor<8xi32>
  check.expect.bitwise actual(%lhs) expected(%rhs) : tensor<[%m]xi32>
  check.expect.close actual(%noise) expected(%noise) atol(0.0001) rtol(0.0001) nan(same) : tensor<[%m]xf32>
  check.expect.shape value(%lhs) shape([%m]) : tensor<[%m]xi32>
  check.expect<topk.equal> actual(%lhs) expected(%rhs) {k = 5} : tensor<[%m]xi32>
  check.expect.event<device> {type = "asan_report", count = 1}
  check.return
}
check.benchmark<@smoke> @smoke_bench {m = 8}
func.def @ref(%x: tensor<8xi32>) -> (tensor<8xi32>) {
  func.return %x : tensor<8xi32>
}
"""
COMMAND = module("") + """command.program.def public @decode(%token_count: index) launch(%parameters: buffer, %transient: buffer) {
  %embedding = command.parameter %parameters, "token_embd.weight" : view<175030272xi8, #dense>
  command.serial {
    command.program.launch @static_program(%parameters) : (buffer)
    command.yield
  }
  command.concurrent {
    command.yield
  }
  command.return
}
command.program.decl @static_program() launch(%parameters: buffer)
"""
PASSES = module("") + """pass.pipeline<module> @cleanup pipeline {
  canonicalize
  pass.run<canonicalize> {max_iterations = 10}
  pass.for<func> pipeline {
    cse
  }
  pass.where<name> {value = "matmul"} pipeline {
    dce
  }
  pass.repeat<until_converged> {max_iterations = 10} pipeline {
    pass.call @cleanup
  }
  pass.fail "expected canonical form"
  pass.halt "inspect lowered IR"
  pass.yield
}
"""
_R1, _S1 = "reg<amdgpu.vgpr x1>", "reg<amdgpu.sgpr x1>"
LOW = module("") + f"""low.func.def target<amdgpu.gfx11.generic.core>(@gpu) @add(%lhs: {_R1}, %rhs: {_R1}) -> ({_R1}) {{
  %sum = low.op<amdgpu.v_add_u32>(%lhs, %rhs) : ({_R1}, {_R1}) -> {_R1}
  %c0 = low.const<amdgpu.s_mov_b32> {{imm = 0}} : {_S1}
  %copy = low.copy %sum : {_R1} -> {_R1}
  %moved = low.move %copy : {_R1} -> {_R1}
  %pair = low.concat(%c0, %c0) : ({_S1}, {_S1}) -> reg<amdgpu.sgpr x2>
  %lo = low.slice %pair[1] : reg<amdgpu.sgpr x2> -> {_S1}
  %slot = low.storage.reserve {{byte_alignment = 4, byte_length = 16}} : low.storage<private>
  %tile = low.storage.view %slot {{offset = 0, byte_length = 8}} : low.storage<private> -> low.storage<private>
  low.spill %moved, %slot : {_R1}, low.storage<private>
  %reload = low.reload %slot : low.storage<private> -> {_R1}
  %addr = low.storage.address %slot : low.storage<private> -> {_R1}
  %binding = low.resource<hal_binding> {{index = 0, source_type = hal.buffer}} : reg<amdgpu.sgpr x2>
  %kernarg = low.live_in<amdgpu.kernarg_segment_ptr> : reg<amdgpu.sgpr x2>
  %two = low.assume %c0 [eq(%c0, 3)] : {_S1}
  %called = low.func.call @extern_add(%lhs) : ({_R1}) -> ({_R1})
  low.scf.if %lo {{
    low.scf.yield
  }} else {{
    low.scf.yield
  }}
  low.scf.for [%c0 to %two step %lo] do(%iv: {_S1}) {{
    low.scf.yield
  }}
  low.scf.while {{
    low.scf.condition %lo : {_S1}
  }} do {{
    low.scf.yield
  }}
  low.schedule.fence
  low.cond_br %lo, ^then, ^done : {_S1}
^then:
  low.br ^done
^done:
  low.return %sum : {_R1}
}}
low.kernel.def target<amdgpu.gfx11.generic.core>(@gpu) export("lk") workgroup_size(16, 4, 1) @lk(%a: reg<amdgpu.sgpr x4>) {{
  low.return
}}
low.func.decl target<amdgpu.gfx11.generic.core>(@gpu) @extern_add(%lhs: {_R1}) -> ({_R1})
"""
OPAQUE = module("") + """func.ukernel<tile.contract> device @vnni_q8_asm(%w: tensor<[%M]xi8>, %x: tensor<[%K]xf32>) -> (tensor<[%M]xf32>) where [mul(%M, 16)]
func.provider.decl<qwen.routed_down> @routed_down(%x: tensor<16xf32>) -> (tensor<16xf32>)
template.decl public @vector_transform(%value: vector<32xf32>) -> (vector<32xf32>)
template.ukernel<@vector_transform> device priority(10) @vector_transform_asm(%value: vector<32xf32>) -> (vector<32xf32>)
llvmir.target<object> @llvm_host {triple = "x86_64-unknown-linux-gnu"}
"""
# Kernel-body ops in the spelling of the defs' examples.
_K = "launch(%o: buffer) {\n"
BODY = {
    "buffer.pack": "  %hb = index.constant 16 : offset\n  %pb = index.constant 256 : offset\n"
                   "  %total, %header_offset, %payload_offset = buffer.pack [align(16) %hb, align(256) %pb] : offset",
    "cfg.br": "  %sel = index.constant 0 : index\n  %p = index.cmp eq, %sel, %c : index\n  cfg.cond_br %p, ^then, ^else\n"
              "^then:\n  cfg.br ^join(%sel: index)\n^else:\n  cfg.switch %sel cases [0, 2] -> [^join, ^join] default ^join\n"
              "^join(%v: index):\n  %w = index.add %v, %c : index",
    "encoding.isa": "  %schema = encoding.define #encoding.operand<element_format=bfp16ebs8, payload_elements=64> : encoding<schema>\n"
                    "  %is_q4 = encoding.isa<#ggml.q4_k> %schema : encoding<schema>",
    "encoding.matches": "  %schema = encoding.define #encoding.operand<element_format=bfp16ebs8, payload_elements=64> : encoding<schema>\n"
                        "  %ok = encoding.matches<element_format = u4, payload_packing = multi_stream, affine = scale_plus_min> %schema : encoding<schema>",
    "encoding.assume.match": "  %schema = encoding.define #encoding.operand<element_format=bfp16ebs8, payload_elements=64> : encoding<schema>\n"
                             "  %s2 = encoding.assume.match<element_format = u4, affine = scale_plus_min> %schema : encoding<schema>",
    "encoding.assume.spec": "  %schema = encoding.define #encoding.operand<element_format=bfp16ebs8, payload_elements=64> : encoding<schema>\n"
                            "  %s2 = encoding.assume.spec %schema, #ggml.q4_0 : encoding<schema>",
    "global.load": "  %pi = global.load @pi : f32",
    "global.store": "  %x = scalar.constant 1.0 : f32\n  global.store %x, @pi : f32",
    "llvmir.inline_asm": "  %lhs = scalar.constant 1 : i32\n"
                         '  %sum = llvmir.inline_asm<sideeffect> "addl $2, $0", "=r,r,r"(%lhs, %lhs) : (i32, i32) -> i32',
    "llvmir.intrinsic": "  %ticks = llvmir.intrinsic<llvm.x86.rdtsc> () : () -> i64",
    "pool.load": "  %pid = scalar.constant 0 : i32\n  %pb = index.constant 4096 : offset\n"
                 "  %tile = pool.load %pool, %pid, %pb : pool<[%BS]>, i32, offset -> tile<16x128xf16>",
    "pool.store": "  %pid = scalar.constant 0 : i32\n  %pb = index.constant 4096 : offset\n  %t = vector.constant 0.0 : vector<4xf16>\n"
                  "  pool.store %pool, %pid, %pb, %pb, %t : pool<[%BS]>, i32, offset, offset, vector<4xf16>",
    "pool.pin": "  %bid = scalar.constant 0 : i32\n  pool.pin %pool, %bid : pool<[%BS]>, i32",
    "pool.unpin": "  %bid = scalar.constant 0 : i32\n  pool.unpin %pool, %bid : pool<[%BS]>, i32",
    "pool.buffer": "  %buf = pool.buffer %pool : pool<[%BS]> -> hal.buffer",
    "sanitizer.assert.access": "  %v = buffer.view %o[%z] : buffer -> view<16xf32>\n  sanitizer.assert.access<read> %v[%c] : view<16xf32>",
    "sanitizer.assert.accesses": "  %v = buffer.view %o[%z] : buffer -> view<16xf32>\n"
                                 "  sanitizer.assert.accesses<write> %v[%c] {static_extents = [1], static_strides = [1], static_count = 4} : view<16xf32>",
    "sanitizer.assert.value": "  %n = sanitizer.assert.value %c [range(%c, 0, 4096), mul(%c, 16)] : index",
    "sanitizer.assert.op": "  sanitizer.assert.op %c, %c [ne(%c, 0)] : index, index",
    "sanitizer.assert.layout": "  %v = buffer.view %o[%z] : buffer -> view<16xf32>\n"
                               "  %checked = sanitizer.assert.layout %v : view<16xf32> -> view<16xf32>",
    "sanitizer.race.access": "  %v = buffer.view %o[%z] : buffer -> view<16xf32>\n"
                             "  sanitizer.race.access<read_write> %v[%c] {atomic = true, ordering = acq_rel, scope = workgroup} : view<16xf32>",
    "sanitizer.race.sync": "  sanitizer.race.sync<workgroup> scope(workgroup) ordering(acq_rel)",
    "scf.lookup": "  %a = index.constant 5 : index\n  %b = index.constant 7 : index\n"
                  "  %r, %q = scf.lookup %c {\n    0 = (%a, %b),\n    1 = (%b, %a)\n  } default(%a, %a) : index, index",
}
for _n in ("cfg.cond_br", "cfg.switch"):
    BODY[_n] = BODY["cfg.br"]
_PRE = {"global": "global.constant @pi : f32 = 3.14159265358979\n", "pool": ""}
for _n, _body in BODY.items():
    _src = module("  %z = index.constant 0 : offset\n  %c = index.constant 1 : index\n" + _body, _PRE.get(_n.split(".")[0], ""))
    if _n.startswith("pool."):
        _src = _src.replace("launch(%o: buffer)", "launch(%o: buffer, %pool: pool<[%BS]>)")
    SPECIAL[_n] = _src
_CONTEXT = {"kernel.launch": (HOST, "host"), "command": (COMMAND, "decode"), "pass": (PASSES, "cleanup"),
            "low": (LOW, "add"), "check": (CHECK, "smoke")}
for _d, _names in DEFS.items():
    for _n in _names:
        _name = f"{_d}.{_n}"
        _ctx = _CONTEXT.get(_name.rsplit(".", 1)[0] if _name.startswith("kernel.launch") else _d)
        if _name.startswith("kernel.launch") and _name != "kernel.launch.config":
            _ctx = _CONTEXT["kernel.launch"]
        elif _d == "kernel":
            _ctx = None
        if _ctx and _name not in SPECIAL and _name not in ("low.invoke",):
            SPECIAL[_name] = _ctx
SPECIAL.update({"command.program.decl": (COMMAND, "static_program"), "check.benchmark": (CHECK, "smoke_bench"),
                "low.kernel.def": (LOW, "lk"), "low.func.decl": (LOW, "extern_add"),
                "func.ukernel": (OPAQUE, "vnni_q8_asm"), "func.provider.decl": (OPAQUE, "routed_down"),
                "template.ukernel": (OPAQUE, "vector_transform_asm"), "llvmir.target": (OPAQUE, "llvm_host")})

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
                "kernel.cluster.count", "encoding.layout.assume.dense",  # test_assumed_dense_layout_reads_row_major
                *IGNORED,  # test_ignored_declarations_leave_the_kernel_as_it_was
                "func.template", "func.apply"}  # these two: test_func_template_and_apply_run_with_a_portability_warning


def test_assumed_dense_layout_reads_row_major():
    body = ("  %z = index.constant 0 : offset\n  %t = kernel.workitem.id<x> : index\n"
            "  %raw = encoding.layout.dense : encoding<layout>\n"
            "  %lay = encoding.layout.assume.dense %raw : encoding<layout>\n"
            "  %iv = buffer.view %o[%z] : buffer -> view<4xi32, %lay>\n  %x = view.load %iv[%t] : view<4xi32, %lay> -> i32\n"
            "  %y = scalar.addi %x, %x : i32\n  %ov = buffer.view %res[%z] : buffer -> view<4xi32>\n"
            "  view.store %y, %ov[%t] : i32, view<4xi32>")
    src = module(body).replace("launch(%o: buffer)", "launch(%o: buffer, %res: buffer)")
    a, out = np.array([3, -1, 7, 40], np.int32), np.zeros(4, np.int32)
    run(src, [a, out])
    assert np.array_equal(out, 2 * a)


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


def outcome(src, symbol="k"):
    """'ran', or the first diagnostic code of the compile/run error (compiling `symbol`; running @k)."""
    try:
        hx.loom.compile(src, symbol, target=GPU)
        if symbol != "k":
            return "compiled"
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
    seen = [outcome(*p) if isinstance(p, tuple) else outcome(p) for p in progs]
    assert "PARSE/006" not in seen, f"{name}: valid Loom met an unknown-op parse error"
    assert not any(s.startswith("RUN: ") and "not executed by the emulator" in s for s in seen), (name, seen)
    if e["executed"]:
        if "ran" not in seen:
            assert re.search(re.escape(name) + r"[\s<(]", SUITE), f"{name}: executed, but no program runs it ({seen[:4]})"
    else:
        assert e["code"] in seen, f"{name}: expected a compile-time {e['code']}, got {sorted(set(seen))}"
        assert "ran" not in seen


DECLARATIONS = """global.constant @pi : f32 = 3.14159265358979
global.constant @weights : tile<[%m]x[%k]xf32> where [mul(%m, 16)]
global.variable @step_count : index = 0
global.rodata.def @loom_sanitizer_sites = align(8) bytes("4c53495401000000")
global.rodata.decl @iree_asan_config
metadata.module "model.revision" = u64(3)
metadata.module "help.summary" = "Example model"
module.import "motif/format/ggml.loom" [@decode_q4, @decode_q6]
"""


def test_ignored_declarations_leave_the_kernel_as_it_was():
    # exactly the ops the catalogue accepts and ignores; the kernel beside them computes what it computes alone
    assert {e["name"] for e in CATALOGUE if e["reason"].startswith("accepted and ignored: ")} == IGNORED
    assert IGNORED <= {line.split()[0] for line in DECLARATIONS.splitlines()}
    body = ("  %z = index.constant 0 : offset\n  %t = kernel.workitem.id<x> : index\n"
            "  %v = buffer.view %o[%z] : buffer -> view<4xi32>\n  %t32 = index.cast %t : index to i32\n"
            "  %sq = scalar.muli %t32, %t32 : i32\n  view.store %sq, %v[%t] : i32, view<4xi32>")
    hx.loom.compile(module(body, DECLARATIONS), "k", target=GPU)  # compiling @k beside them refuses nothing
    alone, beside = np.zeros(4, np.int32), np.zeros(4, np.int32)
    run(module(body), [alone])
    run(module(body, DECLARATIONS), [beside])
    assert np.array_equal(beside, np.arange(4) ** 2) and np.array_equal(alone, beside)
    assert set(hx.loom.parse(module(body, DECLARATIONS)).symbols) >= {"pi", "weights", "step_count", "k"}


def test_a_global_is_reached_only_through_refused_loads_and_stores():
    d = refusal("  %pi = global.load @pi : f32", "global.constant @pi : f32 = 3.14159265358979\n")
    assert d.code == "EMULATOR/001" and "global.load" in d.message and "kernel argument" in d.message


OUTSIDE = [(HOST, "host", "EMULATOR/010", "kernel.launch", "hx.loom.check"),
           (CHECK, "smoke", "EMULATOR/012", "check.case @smoke", "hx.loom.check"),
           (CHECK, "smoke_bench", "EMULATOR/012", "check.benchmark @smoke_bench", "hx.loom.check"),
           (COMMAND, "decode", "EMULATOR/010", "command.program.def @decode", "graph.gpu"),
           (PASSES, "cleanup", "EMULATOR/011", "pass.pipeline @cleanup", "loom-opt"),
           (LOW, "add", "EMULATOR/002", "low.func.def @add", "Loom source"),
           (LOW, "lk", "EMULATOR/002", "low.kernel.def @lk", "Loom source"),
           (OPAQUE, "vector_transform_asm", "EMULATOR/002", "template.ukernel @vector_transform_asm", "template.def"),
           (OPAQUE, "llvm_host", "EMULATOR/011", "llvmir.target @llvm_host", "gfx1151")]


@pytest.mark.parametrize("src, symbol, code, what, instead", OUTSIDE, ids=[o[1] for o in OUTSIDE])
def test_ops_outside_kernels_are_refused_when_compiled_and_say_what_to_do(src, symbol, code, what, instead):
    with pytest.raises(hx.loom.LoomError) as info:
        hx.loom.compile(src, symbol, target=GPU)
    d = info.value.diagnostics
    assert d[0].code == code and what in d[0].message and instead in d[0].message, d[0]
    # A refused symbol op is refused alone; a host function names each refused op it holds once, in order,
    # and is still not a kernel (Note [Compiling a symbol the emulator does not plan]).
    if symbol == "host":
        launches = ["kernel.launch", "kernel.launch.serial", "kernel.launch.yield", "kernel.launch.concurrent"]
        assert [x.code for x in d] == ["EMULATOR/010"] * 4 + ["TARGET/001"], [x.code for x in d]
        assert [x.message.split("emulator: ", 1)[1].split(" (")[0] for x in d[:4]] == launches
    else:
        assert len(d) == 1, [x.code for x in d]
    # The kernel beside them compiles and runs: they do not change what @k means.
    o = np.zeros(16, np.uint8)
    run(src.replace("  kernel.return\n}\n", "  %z = index.constant 0 : offset\n  %v = buffer.view %o[%z] : buffer -> view<4xi32>\n"
                    "  %c = index.constant 2 : index\n  %x = scalar.constant 7 : i32\n"
                    "  view.store %x, %v[%c] : i32, view<4xi32>\n  kernel.return\n}\n", 1), [o])
    assert list(o.view(np.int32)) == [0, 0, 7, 0]


@pytest.mark.parametrize("src, op", [(HOST, "kernel.launch.yield"), (HOST, "kernel.launch"), (CHECK, "check.literal"),
                                     (CHECK, "check.expect.event"), (COMMAND, "command.parameter"),
                                     (COMMAND, "command.yield"), (LOW, "low.op"), (LOW, "low.storage.view"),
                                     (LOW, "low.br")])
def test_bodies_outside_kernels_are_parsed_not_skipped(src, op):
    # a misspelt op inside the body is an unknown op: the body is parsed statement by statement
    # (pass pipelines are the exception: their bodies are pass-pipeline syntax, kept as text)
    bad, n = re.subn(re.escape(op) + r"(?=[\s<(])", op + "_misspelt", src, count=1)
    assert n == 1
    with pytest.raises(hx.loom.LoomError) as info:
        hx.loom.parse(bad)
    assert [(d.code, op + "_misspelt" in d.message) for d in info.value.diagnostics][:1] == [("PARSE/006", True)]
    hx.loom.parse(src)  # and the program as written parses


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


def native_outcome(src):
    """'native', or why a compiled GPU program keeps the interpreter (None when it does not compile)."""
    try:
        art = hx.loom.compile(src, "k", target=GPU)
    except (hx.loom.LoomError, hx.HrxError):
        return None
    return "native" if art.executor == "native" else art.executor_reason


# A kernel with a float view of %o: vector loads, a splat, a dot and a vector store, all native.
VECTOR_OPS = module("""  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %v = buffer.view %o[%z] : buffer -> view<16xf32>
  %x = vector.load %v[%c0] : view<16xf32> -> vector<4xf32>
  %d = vector.dotf %x, %x : vector<4xf32>, vector<4xf32> -> f32
  %s = vector.splat %d : vector<4xf32>
  vector.store %s, %v[%c0] : vector<4xf32>, view<16xf32>""")
NATIVE_SPELLINGS = {
    "index.assume": [module("  %a = index.constant 3 : index\n  %n = index.assume %a [range(%a, 1, 8)] : index")],
    "scalar.assume": [module("  %a = scalar.constant 3 : i32\n  %n = scalar.assume %a [range(%a, 1, 8)] : i32")],
    "scalar.geluf": [module(constant("f32") + f"\n  %r = scalar.geluf<{m}> %a : f32") for m in ("erf", "tanh")],
    **{f"vector.{op}": [VECTOR_OPS] for op in ("load", "store", "splat", "dotf")},
}


@pytest.mark.parametrize("name", sorted(n for n, e in BY_NAME.items() if e["native"] and e["dialect"] in TYPES))
def test_native_column_ops_compile_to_native_code(name):
    """The op table's native column (the generator's own op_native) holds: a kernel using the op in one of
    its plain spellings compiles to native code."""
    seen = [native_outcome(p) for p in NATIVE_SPELLINGS.get(name) or candidates(BY_NAME[name])]
    assert "native" in seen, (name, [s for s in seen if s][:3])


def test_native_column_is_a_subset_of_executed():
    assert all(e["executed"] for e in CATALOGUE if e["native"])
    assert sum(e["native"] for e in CATALOGUE) > 100
