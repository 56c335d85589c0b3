"""Hostile Loom programs (issue 24, "Hardening 3"): calls of declarations. Each program runs in a child process
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
                                bytes.fromhex(job["constants"]), job["workload"], job["checked"], False)
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
