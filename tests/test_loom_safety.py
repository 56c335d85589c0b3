"""Hostile Loom programs (issue 24, "Hardening 3"): calls of declarations, sizes out of range,
deep nesting and reads of device memory nothing wrote. Each program runs in a child process
(tests/helpers.py run_killable), so that a crash fails its test instead of ending the run; the
child reports what happened as JSON (the outcome's exception type, diagnostic codes, message and
the bindings' contents afterwards)."""

import json
import struct
import sys

import numpy as np
import pytest

from helpers import run_killable

GPU = "gfx1151"
NPU = "amd.xdna.strix_halo.17f0_11"

CHILD = r"""
import json, sys
import numpy as np
import hrxarray as hx
from hrxarray import _core
job = json.load(open(sys.argv[1]))
arrays = [np.array(v, dtype=t) for t, v in job["bindings"]]
res = {"kind": "ok", "codes": [], "message": ""}
try:
    if job.get("api"):
        exec(job["api"], {"hx": hx, "np": np, "job": job, "arrays": arrays, "res": res})
    else:
        views = [a.view(np.uint8).reshape(-1) for a in arrays]
        _core.loom._run_program(job["src"], job["symbol"], job["target"], job["config"], views,
                                bytes.fromhex(job["constants"]), job["workload"], job["checked"], [])
except hx.loom.LoomError as e:
    res.update(kind="LoomError", codes=[d.code for d in e.diagnostics], message=str(e))
except Exception as e:
    res.update(kind=type(e).__name__, message=str(e))
res["bindings"] = [a.tolist() for a in arrays]
print(json.dumps(res))
"""


def outcome(tmp_path, src, symbol, bindings=(), *, constants=b"", workload=(), target=GPU, config=None,
            checked=False, api=None):
    """Plans and runs `src` in a child process: a dict (kind, codes, message, bindings)."""
    job = {"src": src, "symbol": symbol, "target": target, "config": {k: str(v) for k, v in (config or {}).items()},
           "bindings": [(str(np.asarray(b).dtype), np.asarray(b).tolist()) for b in bindings],
           "constants": constants.hex(), "workload": list(workload), "checked": checked, "api": api}
    path = tmp_path / "job.json"
    path.write_text(json.dumps(job))
    (tmp_path / "child.py").write_text(CHILD)
    r = run_killable([sys.executable, str(tmp_path / "child.py"), str(path)], 120, "the Loom child")
    assert r.returncode == 0, f"the child died with {r.returncode}: {r.stderr[-3000:]}"
    return json.loads(r.stdout.strip().splitlines()[-1])


# --- item 1: calls of body-less declarations ------------------------------------------------------

DECL_CALL = """
func.decl @f(%x: i32) -> (i32)
kernel.def @k(%n: index) {
  %one = index.constant 1 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%one, %one, %one) : index
} launch(%out: buffer) {
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %v = scalar.constant 5 : i32
  %r = func.call @f(%v) : (i32) -> (i32)
  %ov = buffer.view %out[%z] : buffer -> view<1xi32>
  view.store %r, %ov[%c0] : i32, view<1xi32>
  kernel.return
}
"""

DECL_STAGE = """
aie2p.target<array> @array
aie2p.target<core> @core
pipeline.def<kernel> target(@array) @p() launch(%src: buffer, %dst: buffer) {
  %lanes = index.constant 1 : index
  %origin = index.constant 0 : offset
  %w = group.create %lanes : index -> group
  %sv = buffer.view %src[%origin] : buffer -> view<1x16xi32>
  %dv = buffer.view %dst[%origin] : buffer -> view<1x16xi32>
  %in = pipeline.read %sv on %w : view<1x16xi32>, group -> pipeline.flow<tile<16xi32>>
  %out = pipeline.stage @worker on %w(%in) : (group, pipeline.flow<tile<16xi32>>) -> (pipeline.flow<tile<16xi32>>)
  pipeline.write %out to %dv : pipeline.flow<tile<16xi32>>, view<1x16xi32>
  pipeline.return
}
func.decl target(@core) @worker(%in: buffer, %out: buffer)
"""

# template.call and template.apply reach a template.def (always defined) whose body calls a
# declaration.
DECL_TEMPLATE = """
func.decl @g(%x: i32) -> (i32)
template.decl @fam(i32) -> (i32)
template.def<@fam> @impl(%x: i32) -> (i32) {
  %r = func.call @g(%x) : (i32) -> (i32)
  template.return %r : i32
}
kernel.def @k(%n: index) {
  %one = index.constant 1 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%one, %one, %one) : index
} launch(%out: buffer) {
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %v = scalar.constant 5 : i32
  %a = template.call @impl(%v) : (i32) -> (i32)
  %b = template.apply<@fam>(%v) : (i32) -> (i32)
  %ov = buffer.view %out[%z] : buffer -> view<1xi32>
  view.store %v, %ov[%c0] : i32, view<1xi32>
  kernel.return
}
"""


def test_gpu_call_of_a_declaration_is_emulator_002_when_planned(tmp_path):
    r = outcome(tmp_path, DECL_CALL, "k", [np.full(1, 9, np.int32)], workload=[1])
    assert r["kind"] == "LoomError" and r["codes"] == ["EMULATOR/002"], r
    assert "@f" in r["message"] and "no body" in r["message"]
    assert r["bindings"] == [[9]]


def test_gpu_call_of_a_declaration_through_the_public_api(tmp_path):
    api = """
art = hx.loom.compile(job["src"], "k", target="gfx1151")
"""
    r = outcome(tmp_path, DECL_CALL, "k", api=api)
    assert r["kind"] == "LoomError" and r["codes"] == ["EMULATOR/002"], r


def test_npu_stage_of_a_declared_worker_is_emulator_002_and_writes_nothing(tmp_path):
    src, dst = np.arange(16, dtype=np.int32), np.full(16, 7, np.int32)
    r = outcome(tmp_path, DECL_STAGE, "p", [src, dst], target=NPU)
    assert r["kind"] == "LoomError" and r["codes"] == ["EMULATOR/002"], r
    assert "@worker" in r["message"]
    assert r["bindings"][1] == [7] * 16


def test_template_call_and_template_apply_reaching_declarations_are_emulator_002(tmp_path):
    r = outcome(tmp_path, DECL_TEMPLATE, "k", [np.zeros(1, np.int32)], workload=[1])
    assert r["kind"] == "LoomError" and r["codes"] == ["EMULATOR/002"], r
    assert "func.call of @g" in r["message"]
    r = outcome(tmp_path, DECL_TEMPLATE.replace("%b = template.apply", "// "), "k", [np.zeros(1, np.int32)],
                workload=[1])
    assert r["kind"] == "LoomError" and r["codes"] == ["EMULATOR/002"], r
    r = outcome(tmp_path, DECL_TEMPLATE.replace("%a = template.call", "// "), "k", [np.zeros(1, np.int32)],
                workload=[1])
    assert r["kind"] == "LoomError" and r["codes"] == ["EMULATOR/002"], r


# --- item 2: sizes ----------------------------------------------------------------------------------

def alloca_kernel(kind, size_line):
    """A kernel of 4 work-items that stores 7 at word 12 of a 16-word alloca and copies it out."""
    return f"""
kernel.def @k(%n: index) {{
  %one = index.constant 1 : index
  %four = index.constant 4 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%four, %one, %one) : index
}} launch(%out: buffer, %sz: offset) {{
  %z = index.constant 0 : offset
  {size_line}
  %s = buffer.alloca<{kind}> align(16) %bytes : buffer
  %sv = buffer.view %s[%z] : buffer -> view<16xi32>
  %i = kernel.workitem.id<x> : index
  %v = scalar.constant 7 : i32
  %c12 = index.constant 12 : index
  view.store %v, %sv[%c12] : i32, view<16xi32>
  %r = view.load %sv[%c12] : view<16xi32> -> i32
  %ov = buffer.view %out[%z] : buffer -> view<4xi32>
  view.store %r, %ov[%i] : i32, view<4xi32>
  kernel.return
}}
"""


STATIC = "%bytes = index.constant {} : offset"
DYNAMIC = "%bytes = index.add %sz, %z : offset"


@pytest.mark.parametrize("kind", ["workgroup", "private"])
@pytest.mark.parametrize("checked", [False, True])
def test_negative_constant_alloca_size_is_subrange_002_when_planned(tmp_path, kind, checked):
    r = outcome(tmp_path, alloca_kernel(kind, STATIC.format(-8)), "k", [np.zeros(4, np.int32)],
                constants=struct.pack("<q", 0), workload=[1], checked=checked)
    assert r["kind"] == "LoomError" and r["codes"] == ["SUBRANGE/002"], r
    assert "-8" in r["message"] and f"buffer.alloca<{kind}>" in r["message"]
    assert r["bindings"] == [[0, 0, 0, 0]]


@pytest.mark.parametrize("checked", [False, True])
@pytest.mark.parametrize("size", [-8, 2**40, 2**63 - 1, 65 * 1024])
def test_private_alloca_size_out_of_range_at_run_time_names_the_op_and_size(tmp_path, checked, size):
    r = outcome(tmp_path, alloca_kernel("private", DYNAMIC), "k", [np.zeros(4, np.int32)],
                constants=struct.pack("<q", size), workload=[1], checked=checked)
    assert r["kind"] == "ExecutionError", r
    assert "9:8: buffer.alloca: size " + str(size) in r["message"]
    assert "bad_alloc" not in r["message"]
    assert r["bindings"] == [[0, 0, 0, 0]]


def test_private_alloca_at_the_limit_runs(tmp_path):
    r = outcome(tmp_path, alloca_kernel("private", DYNAMIC), "k", [np.zeros(4, np.int32)],
                constants=struct.pack("<q", 64 * 1024), workload=[1])
    assert r["kind"] == "ok", r
    assert r["bindings"] == [[7, 7, 7, 7]]


@pytest.mark.parametrize("kind", ["workgroup", "private"])
def test_huge_constant_alloca_is_emulator_005_naming_size_and_limit(tmp_path, kind):
    r = outcome(tmp_path, alloca_kernel(kind, STATIC.format(2**40)), "k", [np.zeros(4, np.int32)],
                constants=struct.pack("<q", 0), workload=[1])
    assert r["kind"] == "LoomError" and r["codes"] == ["EMULATOR/005"], r
    assert str(2**40) in r["message"] and "65536" in r["message"]


def grid_kernel(x, y, z):
    """A kernel of grid (x, y, z) workgroups of one work-item; z None: the workload's %n + 1."""
    zdef = "%z = index.add %n, %one : index" if z is None else f"%z = index.constant {z} : index"
    return f"""
kernel.def @k(%n: index) {{
  %one = index.constant 1 : index
  %x = index.constant {x} : index
  %y = index.constant {y} : index
  {zdef}
  kernel.launch.config workgroups(%x, %y, %z) workgroup_size(%one, %one, %one) : index
}} launch(%out: buffer) {{
  %zero = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %v = scalar.constant 5 : i32
  %ov = buffer.view %out[%zero] : buffer -> view<1xi32>
  view.store %v, %ov[%c0] : i32, view<1xi32>
  kernel.return
}}
"""


def test_constant_grid_overflowing_int64_is_subrange_002_when_planned(tmp_path):
    r = outcome(tmp_path, grid_kernel(2**32, 2**32, 2), "k", [np.zeros(1, np.int32)], workload=[1])
    assert r["kind"] == "LoomError" and r["codes"] == ["SUBRANGE/002"], r
    assert "4294967296" in r["message"] and "kernel.launch.config" in r["message"]
    assert r["bindings"] == [[0]]


def test_grid_from_the_workload_over_the_limit_is_refused_by_the_launch_program(tmp_path):
    r = outcome(tmp_path, grid_kernel(2**31, 2**31, None), "k", [np.zeros(1, np.int32)], workload=[1])
    assert r["kind"] == "ValueError", r
    assert "kernel.launch.config" in r["message"] and "2147483648" in r["message"]
    r = outcome(tmp_path, grid_kernel(65536, 65536, None), "k", [np.zeros(1, np.int32)], workload=[2**40])
    assert r["kind"] == "ValueError" and "4294967295 work-items along axis z" in r["message"], r


def test_load_gpu_kernel_refuses_a_grid_over_the_limit(tmp_path):
    api = """
art = hx.loom.compile(job["src"], "k", target="gfx1151")
rt = hx.default_runtime()
k = rt.load_gpu_kernel(art, (2**32, 2**32, 2), (1, 1, 1), art.contract)
"""
    r = outcome(tmp_path, grid_kernel(1, 1, 1), "k", api=api)
    assert r["kind"] == "ValueError" and "work-items" in r["message"], r


def nested(depth, op="if"):
    if op == "if":
        openers = "  scf.if %c {\n" * (depth - 1)
    else:
        openers = "".join(f"  scf.for %i{k} = [%lo to %hi step %st] {{\n" for k in range(depth - 1))
    return f"""
kernel.def @k(%n: index) {{
  %one = index.constant 1 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%one, %one, %one) : index
}} launch(%out: buffer) {{
  %c = scalar.constant 1 : i1
  %lo = index.constant 0 : index
  %hi = index.constant 1 : index
  %st = index.constant 1 : index
  %zero = index.constant 0 : offset
  %ov = buffer.view %out[%zero] : buffer -> view<1xi32>
{openers}  %v = scalar.constant 5 : i32
  view.store %v, %ov[%lo] : i32, view<1xi32>
{"  }" * (depth - 1)}
  kernel.return
}}
"""


@pytest.mark.parametrize("op", ["if", "for"])
def test_nesting_deeper_than_256_is_parse_021_and_256_runs(tmp_path, op):
    r = outcome(tmp_path, nested(10_000, op), "k", [np.zeros(1, np.int32)], workload=[1])
    assert r["kind"] == "LoomError" and r["codes"] == ["PARSE/021"], r
    assert "256" in r["message"]
    r = outcome(tmp_path, nested(257, op), "k", [np.zeros(1, np.int32)], workload=[1])
    assert r["kind"] == "LoomError" and r["codes"] == ["PARSE/021"], r
    r = outcome(tmp_path, nested(256, op), "k", [np.zeros(1, np.int32)], workload=[1])
    assert r["kind"] == "ok" and r["bindings"] == [[5]], r


def test_deep_flow_type_is_parse_021(tmp_path):
    t = "pipeline.flow<" * 50_000 + "tile<16xi32>" + ">" * 50_000
    src = f"func.def @f(%x: {t}) {{\n  func.return\n}}\n"
    r = outcome(tmp_path, src, "f")
    assert r["kind"] == "LoomError" and "PARSE/021" in r["codes"], r


def call_chain(n, body_depth=1):
    """@k calls @f0, @f(i) calls @f(i+1), each call inside `body_depth - 1` scf.if levels."""
    fns = []
    for i in range(n):
        inner = (f"  %r = func.call @f{i + 1}(%x) : (i32) -> (i32)\n" if i + 1 < n else "  %r = scalar.addi %x, %x : i32\n")
        opens = "  scf.if %c {\n" * (body_depth - 1)
        closes = "  }\n" * (body_depth - 1)
        fns.append(f"func.def @f{i}(%x: i32) -> (i32) {{\n  %c = scalar.constant 1 : i1\n{opens}{inner}{closes}"
                   f"  func.return %x : i32\n}}\n")
    return "".join(fns) + """
kernel.def @k(%n: index) {
  %one = index.constant 1 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%one, %one, %one) : index
} launch(%out: buffer) {
  %v = scalar.constant 5 : i32
  %r = func.call @f0(%v) : (i32) -> (i32)
  kernel.return
}
"""


def test_nesting_through_calls_over_256_and_recursion_are_emulator_006(tmp_path):
    r = outcome(tmp_path, call_chain(255), "k", [np.zeros(1, np.int32)], workload=[1])
    assert r["kind"] == "ok", r
    r = outcome(tmp_path, call_chain(5000), "k", [np.zeros(1, np.int32)], workload=[1])
    assert r["kind"] == "LoomError" and r["codes"] == ["EMULATOR/006"], r
    assert "5001 levels" in r["message"]
    r = outcome(tmp_path, call_chain(60, body_depth=5), "k", [np.zeros(1, np.int32)], workload=[1])
    assert r["kind"] == "LoomError" and r["codes"] == ["EMULATOR/006"], r
    recursive = call_chain(3).replace("%r = scalar.addi %x, %x : i32", "%r = func.call @f0(%x) : (i32) -> (i32)")
    r = outcome(tmp_path, recursive, "k", [np.zeros(1, np.int32)], workload=[1])
    assert r["kind"] == "LoomError" and r["codes"] == ["EMULATOR/006"], r
    assert "recursive call: @f0" in r["message"]


def test_vector_over_the_limit_is_emulator_005(tmp_path):
    src = """
kernel.def @k(%n: index) {
  %one = index.constant 1 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%one, %one, %one) : index
} launch(%out: buffer) {
  %f = scalar.constant 1.0 : f32
  %v = vector.splat %f : vector<1099511627776xf32>
  kernel.return
}
"""
    r = outcome(tmp_path, src, "k", [np.zeros(1, np.int32)], workload=[1])
    assert r["kind"] == "LoomError" and r["codes"] == ["EMULATOR/005"], r


# --- item 5: device memory nothing wrote -----------------------------------------------------------

UNINIT_I32 = int(np.frombuffer(b"\xa5" * 4, np.int32)[0])  # Note [Uninitialised device memory]


def run_here(src, symbol, bindings, constants=b"", workload=None, *, target=GPU, checked=False):
    """Runs one root in this process over `bindings` (modified in place)."""
    from hrxarray import _core

    views = [b.view(np.uint8).reshape(-1) for b in bindings]
    return _core.loom._run_program(src, symbol, target, {}, views, constants, workload, checked, [])


def scratch_reader(kind, write_first):
    """4 work-items; each stores its id at word 0 of a 16-word alloca (when `write_first`), then
    copies words 0 (its own store) and 1 (never written) out."""
    store = "view.store %i32, %sv[%c0] : i32, view<16xi32>" if write_first else ""
    words = "%c1" if write_first else "%c0"
    return f"""
kernel.def @k(%n: index) {{
  %one = index.constant 1 : index
  %four = index.constant 4 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%four, %one, %one) : index
}} launch(%out: buffer) {{
  %z = index.constant 0 : offset
  %bytes = index.constant 64 : offset
  %s = buffer.alloca<{kind}> align(16) %bytes : buffer
  %sv = buffer.view %s[%z] : buffer -> view<16xi32>
  %i = kernel.workitem.id<x> : index
  %i32 = index.cast %i : index to i32
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %c4 = index.constant 4 : index
  {store}
  %mine = view.load %sv[%c0] : view<16xi32> -> i32
  %other = view.load %sv[{words}] : view<16xi32> -> i32
  %ov = buffer.view %out[%z] : buffer -> view<8xi32>
  %j = index.add %i, %c4 : index
  view.store %mine, %ov[%i] : i32, view<8xi32>
  view.store %other, %ov[%j] : i32, view<8xi32>
  kernel.return
}}
"""


def test_private_scratch_starts_as_the_documented_pattern_and_checked_mode_reports_reads():
    out = np.zeros(8, np.int32)
    run_here(scratch_reader("private", True), "k", [out], workload=[1])
    assert out.tolist() == [0, 1, 2, 3] + [UNINIT_I32] * 4
    out[:] = 0
    with pytest.raises(Exception) as e:
        run_here(scratch_reader("private", True), "k", [out], workload=[1], checked=True)
    assert type(e.value).__name__ == "ExecutionError"
    assert "18:12: view.load: reads 4 bytes at offset 4 of buffer.alloca<private>" in str(e.value)
    assert "never written" in str(e.value) and "work-item (0, 0, 0)" in str(e.value)


def test_workgroup_scratch_read_before_any_write_is_reported_in_checked_mode():
    out = np.zeros(8, np.int32)
    run_here(scratch_reader("workgroup", False), "k", [out], workload=[1])
    assert out.tolist() == [UNINIT_I32] * 8
    with pytest.raises(Exception, match=r"17:11: view.load: reads 4 bytes at offset 0 of buffer.alloca<workgroup>.*never written.*"
                                        r"work-item \(0, 0, 0\)"):
        run_here(scratch_reader("workgroup", False), "k", [out], workload=[1], checked=True)


def test_written_scratch_reads_back_in_checked_mode():
    src = scratch_reader("private", True).replace("%other = view.load %sv[%c1]", "%other = view.load %sv[%c0]")
    out = np.zeros(8, np.int32)
    run_here(src, "k", [out], workload=[1], checked=True)
    assert out.tolist() == [0, 1, 2, 3, 0, 1, 2, 3]


def stage_program(words, body):
    """A one-lane pipeline over 2 records of `words` i32, the stage `@w(%in, %out)` running `body`."""
    return f"""
aie2p.target<array> @array
aie2p.target<core> @core
pipeline.def<kernel> target(@array) @p() launch(%src: buffer, %dst: buffer) {{
  %lanes = index.constant 1 : index
  %origin = index.constant 0 : offset
  %g = group.create %lanes : index -> group
  %sv = buffer.view %src[%origin] : buffer -> view<2x{words}xi32>
  %dv = buffer.view %dst[%origin] : buffer -> view<2x{words}xi32>
  %in = pipeline.read %sv on %g : view<2x{words}xi32>, group -> pipeline.flow<tile<{words}xi32>>
  %out = pipeline.stage @w on %g(%in) : (group, pipeline.flow<tile<{words}xi32>>) -> (pipeline.flow<tile<{words}xi32>>)
  pipeline.write %out to %dv : pipeline.flow<tile<{words}xi32>>, view<2x{words}xi32>
  pipeline.return
}}
func.def target(@core) @w(%a: buffer, %b: buffer) {{
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %iv = buffer.view %a[%z] : buffer -> view<{words}xi32>
  %ov = buffer.view %b[%z] : buffer -> view<{words}xi32>
{body}
  func.return
}}
"""


# Word 0 of each output tile gets input word 0 + the output's word 1, which nothing wrote.
READS_OUTPUT = """
  %x = view.load %iv[%c0] : view<{w}xi32> -> i32
  %y = view.load %ov[%c1] : view<{w}xi32> -> i32
  %s = scalar.addi %x, %y : i32
  view.store %s, %ov[%c0] : i32, view<{w}xi32>
"""


@pytest.mark.parametrize("words", [16, 8])  # 64-byte records are written in place, 32-byte ones through an arena
def test_npu_output_tiles_start_as_the_documented_pattern_and_checked_mode_reports_reads(words):
    src = np.arange(2 * words, dtype=np.int32)
    dst = np.zeros(2 * words, np.int32)
    prog = stage_program(words, READS_OUTPUT.format(w=words))
    run_here(prog, "p", [src, dst], target=NPU)
    want = np.full((2, words), UNINIT_I32, np.int32)
    with np.errstate(over="ignore"):
        want[:, 0] = src.reshape(2, words)[:, 0] + np.int32(UNINIT_I32)
    assert dst.tolist() == want.reshape(-1).tolist()
    with pytest.raises(Exception, match=r"view.load: reads 4 bytes at offset 4 of output tile 0.*never written.*record 0"):
        run_here(prog, "p", [src, dst], target=NPU, checked=True)


def test_npu_stage_private_scratch_read_is_reported_in_checked_mode():
    body = """
  %bytes = index.constant 64 : offset
  %s = buffer.alloca<private> align(16) %bytes : buffer
  %sv = buffer.view %s[%z] : buffer -> view<16xi32>
  %x = vector.load %iv[%c0] : view<16xi32> -> vector<16xi32>
  vector.store %x, %sv[%c0] : vector<16xi32>, view<16xi32>
  %y = vector.load %sv[%c0] : view<16xi32> -> vector<16xi32>
  vector.store %y, %ov[%c0] : vector<16xi32>, view<16xi32>
"""
    src = np.arange(32, dtype=np.int32)
    dst = np.zeros(32, np.int32)
    run_here(stage_program(16, body), "p", [src, dst], target=NPU, checked=True)
    assert dst.tolist() == src.tolist()
    unwritten = body.replace("vector.store %x, %sv[%c0]", "// ")
    with pytest.raises(Exception, match=r"vector.load: reads 4 bytes at offset 0 of buffer.alloca<private>.*never written"):
        run_here(stage_program(16, unwritten), "p", [src, dst], target=NPU, checked=True)


# --- what the fuzz campaign found (tests/test_loom_fuzz.py) ---------------------------------------

def test_fragment_with_negative_extents_is_an_execution_error(tmp_path):
    # [-8, -8] covers 64 values too: it reached vector.mma as a 2^64-element product (SIGFPE).
    import pathlib

    gemm = (pathlib.Path(__file__).resolve().parent.parent / "src/hrxarray/programs/gemm.loom").read_text()
    src = gemm.replace("%eight = index.constant 8 : index", "%eight = index.constant -8 : index")
    a = np.zeros(64, np.uint16)
    r = outcome(tmp_path, src, "gemm", [a, a, np.zeros(64, np.float32)], target=NPU)
    assert r["kind"] == "ExecutionError" and "vector.fragment: fragment shape [-8, -8]" in r["message"], r


def test_non_positive_cluster_size_is_an_execution_error(tmp_path):
    # cluster_size = -8 stepped the reduction's cluster loop backwards for ever.
    from test_loom_exec import REDUCE

    src = REDUCE.replace("{cluster_size = 8}", "{cluster_size = -8}")
    assert src != REDUCE
    r = outcome(tmp_path, src, "wg_sum", [np.zeros(1024, np.uint8)] * 3, workload=[1])
    assert r["kind"] == "ExecutionError" and "cluster_size must be positive, got -8" in r["message"], r


@pytest.mark.parametrize("fact", ["subgroup_size = 0", "subgroup_size = -32", "index_bits = 7", "offset_bits = 0"])
def test_target_facts_out_of_range_are_target_004(tmp_path, fact):
    src = alloca_kernel("private", STATIC.format(64)).replace("kernel.def @k", "kernel.def target(@gpu) @k")
    src = "amdgpu.target<gfx1151> @gpu {" + fact + "}\n" + src
    r = outcome(tmp_path, src, "k", [np.zeros(4, np.int32)], constants=struct.pack("<q", 0), workload=[1])
    assert r["kind"] == "LoomError" and r["codes"] == ["TARGET/004"], r
    assert fact.replace(" ", "") in r["message"].replace(" ", "")


@pytest.mark.parametrize("size, code", [(-8, "SUBRANGE/002"), (2**40, "EMULATOR/005")])
def test_constant_alloca_size_in_a_stage_function_is_refused_when_planned(tmp_path, size, code):
    body = f"""
  %bytes = index.constant {size} : offset
  %s = buffer.alloca<private> align(16) %bytes : buffer
"""
    src = stage_program(16, body)
    r = outcome(tmp_path, src, "p", [np.zeros(32, np.int32), np.full(32, 5, np.int32)], target=NPU)
    assert r["kind"] == "LoomError" and r["codes"] == [code], r
    assert str(size) in r["message"] and r["bindings"][1] == [5] * 32


def test_op_missing_an_operand_is_an_execution_error_naming_it(tmp_path):
    # kernel.subgroup.shuffle takes any operand count in its format; with one it raised IndexError.
    from test_loom_exec import SUBGROUP

    src = SUBGROUP.replace("kernel.subgroup.shuffle<xor> %t32, %three", "kernel.subgroup.shuffle<xor> %three")
    assert src != SUBGROUP
    r = outcome(tmp_path, src, "sg", [np.zeros(4096, np.uint8)])
    assert r["kind"] == "ExecutionError" and "kernel.subgroup.shuffle: the op lacks an operand" in r["message"], r
