"""check.case / check.benchmark (issue 25 item 2): modules with check cases compile their kernels as
before, and ``hx.loom.check(source)`` runs each case (parameters, generators, kernel.launch,
expectations) on the emulated GPU and reports it. The cases and kernels are written for these tests;
expected values come from the cases' own generators and from NumPy."""

import re

import numpy as np
import pytest

import hrxarray as hx
from hrxarray import loom

KERNELS = """
amdgpu.target<gfx1151> @gpu {subgroup_size = 32}
kernel.def target(@gpu) @iota(%count: index) {
  %one = index.constant 1 : index
  %c64 = index.constant 64 : index
  %c63 = index.constant 63 : index
  %r = index.add %count, %c63 : index
  %g = index.div %r, %c64 : index
  kernel.launch.config workgroups(%g, %one, %one) workgroup_size(%c64, %one, %one) : index
} launch(%count: index, %out: buffer) {
  %z = index.constant 0 : offset
  %i = kernel.workitem.dispatch.id<x> : index
  %ov = buffer.view %out[%z] : buffer -> view<[%count]xi32>
  %in = index.cmp ult, %i, %count : index
  scf.if %in {
    %v = index.cast %i : index to i32
    view.store %v, %ov[%i] : i32, view<[%count]xi32>
  }
  kernel.return
}
kernel.def target(@gpu) @axpy(%count: index) {
  %one = index.constant 1 : index
  %c64 = index.constant 64 : index
  %c63 = index.constant 63 : index
  %r = index.add %count, %c63 : index
  %g = index.div %r, %c64 : index
  kernel.launch.config workgroups(%g, %one, %one) workgroup_size(%c64, %one, %one) : index
} launch(%count: index, %alpha: f32, %x: buffer, %y: buffer) {
  %z = index.constant 0 : offset
  %i = kernel.workitem.dispatch.id<x> : index
  %xv = buffer.view %x[%z] : buffer -> view<[%count]xf32>
  %yv = buffer.view %y[%z] : buffer -> view<[%count]xf32>
  %in = index.cmp ult, %i, %count : index
  scf.if %in {
    %a = view.load %xv[%i] : view<[%count]xf32> -> f32
    %b = view.load %yv[%i] : view<[%count]xf32> -> f32
    %r2 = scalar.fmaf %alpha, %a, %b : f32
    view.store %r2, %yv[%i] : f32, view<[%count]xf32>
  }
  kernel.return
}
"""

CASES = KERNELS + """
check.case public @iota_fills {
  %n = check.param.choice values([1, 17, 64, 130]) name("n") : index
  %out = check.generate.fill value(-1) : tensor<[%n]xi32>
  kernel.launch @iota[%n](%n, %out) : [index](index, tensor<[%n]xi32>)
  %want = check.generate.iota offset(0) step(1) : tensor<[%n]xi32>
  check.expect.equal actual(%out) expected(%want) : tensor<[%n]xi32>
  check.expect.bitwise actual(%out) expected(%want) : tensor<[%n]xi32>
  check.expect.shape value(%out) shape([%n]) : tensor<[%n]xi32>
  check.return
}
check.case @axpy_close {
  %n = check.param.range po2 bounds(1 to 256) name("n") : index
  %seed = check.param.seed base(7) count(2) : i64
  %alpha = check.literal value(2.0) : f32
  %x = check.generate.iota offset(0.5) step(0.25) : tensor<[%n]xf32>
  %y = check.generate.fill value(1.0) : tensor<[%n]xf32>
  %noise = check.generate.random.uniform seed(%seed) range(-1.0 to 1.0) : tensor<[%n]xf32>
  kernel.launch @axpy[%n](%n, %alpha, %x, %y) : [index](index, f32, tensor<[%n]xf32>, tensor<[%n]xf32>)
  %want = check.generate.iota offset(2.0) step(0.5) : tensor<[%n]xf32>
  check.expect.close actual(%y) expected(%want) atol(0.0001) rtol(0.0001) nan(different) : tensor<[%n]xf32>
  check.return
}
check.case @literals {
  %a = check.literal value(42) : i32
  %b = check.literal value(42) : i32
  check.expect.equal actual(%a) expected(%b) : i32
  %p = check.generate.iota offset(0) step(1) period(3) : tensor<7xi32>
  %q = check.tensor.view %p offset(4) : tensor<7xi32> -> tensor<2xi32>
  %r = check.generate.iota offset(1) step(1) : tensor<2xi32>
  check.expect.equal actual(%q) expected(%r) : tensor<2xi32>
  check.return
}
check.benchmark<@iota_fills> @iota_large {n = 130}
"""


def test_a_module_with_check_cases_compiles_its_kernels_as_before():
    art = loom.compile(CASES, "iota", target="gfx1151")
    assert art.contract_for(count=10).bindings[0].bytes == 40
    assert loom.parse(CASES).symbols["iota_fills"] == "check"


def test_cases_that_pass():
    report = loom.check(CASES)
    assert [(r.name, r.kind, r.passed, r.skipped) for r in report] == [
        ("@iota_fills", "case", True, False), ("@axpy_close", "case", True, False),
        ("@literals", "case", True, False), ("@iota_large", "benchmark", False, True)]
    assert [r.samples for r in report[:3]] == [4, 9 * 2, 1]  # po2 in [1, 256]: 9 values, times 2 seeds
    assert report.ok and not report.failed
    text = str(report)
    assert "PASS @iota_fills (4 samples)" in text and "SKIP @iota_large" in text
    assert text.splitlines()[-1] == "3 passed, 0 failed, 1 skipped"


def test_a_kernel_with_a_deliberate_bug_fails_its_case():
    # Off by one past 16: the store writes i + 1 where i > 16.
    buggy = CASES.replace("""    %v = index.cast %i : index to i32
    view.store""", """    %c16 = index.constant 16 : index
    %big = index.cmp ugt, %i, %c16 : index
    %one1 = index.constant 1 : index
    %i2 = index.add %i, %one1 : index
    %j = scf.select %big, %i2, %i : i1, index
    %v = index.cast %j : index to i32
    view.store""")
    report = loom.check(buggy)
    r = report[0]
    assert (r.name, r.passed, r.skipped) == ("@iota_fills", False, False)
    # n = 1 and n = 17 hold no index above 16 and pass; n = 64 is the first to fail.
    assert r.samples == 3
    assert r.message.startswith("sample n=64: check.expect.equal at line ")
    assert "47 of 64 element(s) differ; first at [17]: actual 18, expected 17" in r.message
    assert "check.expect.bitwise at line" in r.message  # every failed expectation of the sample
    assert not report.ok and report.failed == [r]
    assert str(report).splitlines()[0].startswith("FAIL @iota_fills (3 samples): sample n=64")


def test_close_expectation_tolerances_and_nan_policy():
    src = KERNELS + """
check.case @close {
  %a = check.generate.fill value(1.0) : tensor<4xf32>
  %b = check.generate.fill value(1.001) : tensor<4xf32>
  check.expect.close actual(%a) expected(%b) atol(ATOL) rtol(0.0) nan(same) : tensor<4xf32>
  check.return
}
"""
    assert loom.check(src.replace("ATOL", "0.01"))[0].passed
    r = loom.check(src.replace("ATOL", "0.0001"))[0]
    assert not r.passed and "4 of 4 element(s) differ; first at [0]" in r.message


def test_a_tensor_smaller_than_the_footprint_fails_naming_the_contract():
    src = KERNELS + """
check.case @short {
  %n = check.literal value(8) : index
  %m = check.literal value(4) : index
  %out = check.generate.fill value(0) : tensor<[%m]xi32>
  kernel.launch @iota[%n](%n, %out) : [index](index, tensor<[%m]xi32>)
  check.return
}
"""
    r = loom.check(src)[0]
    assert not r.passed and not r.skipped
    assert "kernel.launch at line" in r.message and "does not cover" in r.message


def test_cases_outside_the_emulator_are_skipped_with_the_reason():
    src = KERNELS + """
func.decl @gemv(%a: i32) -> (i32)
check.case @oracle {
  %a = check.literal value(5) : i32
  %e = check.oracle.call<reference.scalar> callee(@gemv) inputs(%a) : (i32) -> (i32)
  check.expect.equal actual(%a) expected(%e) : i32
  check.return
}
check.case @needs_cdna {
  check.requires<target.feature> {feature = "amdgpu.gfx9"}
  check.return
}
check.case @needs_gfx11 {
  check.requires<target.feature> {feature = "amdgpu.gfx11"}
  check.return
}
"""
    report = loom.check(src)
    assert [(r.name, r.skipped, r.passed) for r in report] == [
        ("@oracle", True, False), ("@needs_cdna", True, False), ("@needs_gfx11", False, True)]
    assert "check.oracle.call at line" in report[0].message and "not run by hx.loom.check" in report[0].message
    assert "not met by the emulated devices" in report[1].message
    assert report.ok


@pytest.mark.parametrize("bad,code,what", [
    ("%v = check.literal : i32", "PARSE/015", "needs its value(...) clause"),
    ("%v = check.param.range bounds(1 to 4) : index", "PARSE/015", "needs a sampling policy"),
    ("check.expect.equal actual(%nope) expected(%nope) : i32", "PARSE/001", "undefined value '%nope'"),
    ("check.frobnicate", "PARSE/006", "unknown op 'check.frobnicate'"),
    ("kernel.launch @iota[](%x) : [](i32)", "STRUCTURE/013", "passes 0 workload value(s) and 1 argument(s)"),
    ("kernel.launch @nowhere[]() : []()", "SYMBOL/001", "'kernel.launch' names '@nowhere'"),
])
def test_a_malformed_case_is_a_loom_error(bad, code, what):
    src = KERNELS + "check.case @bad {\n  %x = check.literal value(1) : i32\n  " + bad + "\n  check.return\n}\n"
    with pytest.raises(loom.LoomError) as info:
        loom.check(src)
    assert any(d.code == code and what in d.message for d in info.value.diagnostics), info.value.diagnostics


def test_a_case_must_end_with_check_return_and_a_benchmark_names_a_case():
    with pytest.raises(loom.LoomError, match="must end with 'check.return'"):
        loom.check("check.case @open {\n  %x = check.literal value(1) : i32\n}\n")
    with pytest.raises(loom.LoomError, match="'check.benchmark' names '@missing', which is not a check.case"):
        loom.check("check.benchmark<@missing> @b\n")


def test_linear_ranges_and_npy_fixtures(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    np.save("x.npy", np.arange(5, dtype=np.float32) * np.float32(0.5))
    src = KERNELS + """
check.case @fixture {
  %n = check.param.range linear bounds(2 to 8) step(3) name("n") : index
  %alpha = check.param.range linear bounds(0.0 to 1.0) step(0.5) name("alpha") : f32
  %x = check.file.read.npy path("x.npy") : tensor<5xf32>
  %want = check.generate.iota offset(0.0) step(0.5) : tensor<5xf32>
  check.expect.bitwise actual(%x) expected(%want) : tensor<5xf32>
  check.file.write.npy value(%x) path("out.npy") mode(always) : tensor<5xf32>
  check.return
}
"""
    r = loom.check(src)[0]
    assert r.passed and r.samples == 3 * 3  # n in {2, 5, 8}, alpha in {0, 0.5, 1}
    assert np.array_equal(np.load("out.npy"), np.load("x.npy"))
    bad = src.replace("tensor<5xf32>\n  %want", "tensor<4xf32>\n  %want")
    r = loom.check(bad)[0]
    assert not r.passed and "x.npy holds float32[5], the case reads tensor<4xf32>" in r.message


@pytest.mark.parametrize("bad,what", [
    ("%p = check.param.range linear bounds(1 to 4) step(0) : index", "step must be positive, got 0"),
    ("%p = check.param.range po2 bounds(5 to 7) : index", "check.param.range at line 43 gives no samples"),
    ("%p = check.param.range linear bounds(4) : index", "bounds(lo to hi) takes two values, got 4"),
])
def test_a_case_check_cannot_run_as_written_is_a_loom_error(bad, what):
    src = KERNELS + "check.case @bad {\n  " + bad + "\n  check.return\n}\n"
    with pytest.raises(loom.LoomError, match=re.escape(what)):
        loom.check(src)
