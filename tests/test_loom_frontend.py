"""The Loom frontend (_core.loom): golden .loom-test files, LoomError's shape,
recovery, specialisation rules, and (with HRX_LOOM_CORPUS set) hrx-rs's own
Loom corpus."""

import hashlib
import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrxarray._core import loom

GOLDEN = Path(__file__).parent / "loom"
NPU = "amd.xdna.strix_halo.17f0_11"


# ---------------------------------------------------------------- golden files
#
# loom.md §6.4's format: `// RUN: verify` header, cases separated by `// ====`,
# `// ERROR@+N: DOMAIN[/CODE] "substring"` expecting an error N lines below
# the annotation (negative N: above). A case without annotations must verify.

ANNOTATION = re.compile(r'//\s*ERROR@([+-]\d+)?:\s*([A-Z]+(?:/\d{3})?)?\s*(?:"([^"]*)")?')


def golden_cases():
    for path in sorted(GOLDEN.glob("*.loom-test")):
        text = path.read_text(encoding="utf-8")
        assert text.startswith("// RUN: verify"), path
        cases = re.split(r"^// ====\n", text, flags=re.M)
        for k, case in enumerate(cases):
            yield pytest.param(case, id=f"{path.stem}-{k}")


def expected_errors(case):
    out = []
    for n, line in enumerate(case.splitlines(), start=1):
        m = ANNOTATION.search(line)
        if m:
            out.append((n + int(m.group(1) or 0), m.group(2) or "", m.group(3) or ""))
    return out


def actual_errors(case):
    try:
        loom.parse(case)
    except loom.LoomError as e:
        return [d for d in e.diagnostics if d.severity == "error"]
    return []


@pytest.mark.parametrize("case", list(golden_cases()))
def test_golden(case):
    expected = expected_errors(case)
    actual = actual_errors(case)
    unmatched = list(actual)
    for line, code, text in expected:
        hit = next(
            (d for d in unmatched if d.line == line and d.code.startswith(code) and text in d.message),
            None,
        )
        assert hit is not None, f"expected {code} {text!r} at line {line}; got {actual}"
        unmatched.remove(hit)
    assert not unmatched, f"unexpected diagnostics: {unmatched}"


def test_golden_files_cover_every_error_class():
    codes = set()
    for path in GOLDEN.glob("*.loom-test"):
        for line in path.read_text(encoding="utf-8").splitlines():
            m = ANNOTATION.search(line)
            if m and m.group(2):
                codes.add(m.group(2))
    for code in [
        "PARSE/001", "PARSE/002", "PARSE/003", "PARSE/005", "PARSE/006", "PARSE/007", "PARSE/009",
        "PARSE/013", "PARSE/022", "PARSE/023", "PARSE/024", "PARSE/025", "PARSE/026",
        "TYPE/001", "TYPE/003", "TYPE/004", "SHAPE/001", "STRUCTURE/001", "STRUCTURE/011",
        "STRUCTURE/013", "STRUCTURE/014", "STRUCTURE/021", "SYMBOL/001", "SYMBOL/002",
    ]:
        assert code in codes, code


# ---------------------------------------------------------------- LoomError

TWO_MISTAKES = """\
func.def @a(%x: index) {
  %y = index.add %x, %undefined : index
  func.return
}
func.def @b(%x: index) {
  %y = index.nonsense %x : index
  func.return
}
"""


def test_loom_error_is_a_value_error_with_summary_and_every_diagnostic():
    with pytest.raises(ValueError) as info:
        loom.parse(TWO_MISTAKES)
    e = info.value
    assert isinstance(e, loom.LoomError)
    # First error as line:col: message, then the count of the later ones.
    assert str(e) == (
        "2:22: use of undefined value '%undefined'\n(1 later error(s) suppressed as cascade)"
    )
    assert [(d.code, d.line, d.column, d.severity) for d in e.diagnostics] == [
        ("PARSE/001", 2, 22, "error"),
        ("PARSE/006", 6, 8, "error"),
    ]
    assert "check the dialect prefix" in e.diagnostics[1].message
    assert repr(e.diagnostics[0]).startswith("Diagnostic(error PARSE/001 at 2:22:")


def test_single_error_has_no_suppression_line():
    with pytest.raises(loom.LoomError) as info:
        loom.parse("func.def @f() {\n  %a = index.constant 1 : idx\n  func.return\n}\n")
    assert str(info.value) == "2:27: unknown type 'idx'"
    assert len(info.value.diagnostics) == 1


def test_twenty_errors_then_parse_012():
    body = "".join(f"  %v{k} = index.add %nope{k}, %nope{k} : index\n" for k in range(30))
    with pytest.raises(loom.LoomError) as info:
        loom.parse("func.def @f() {\n" + body + "  func.return\n}\n")
    codes = [d.code for d in info.value.diagnostics]
    assert codes[:20] == ["PARSE/001"] * 20
    assert codes[-1] == "PARSE/012" and len(codes) == 21


def test_columns_count_code_points():
    line = '  kernel.assert %c "ééé — ü" : i33'
    with pytest.raises(loom.LoomError) as info:
        loom.parse("func.def @f(%c: i1) {\n" + line + "\n  func.return\n}\n")
    (d,) = info.value.diagnostics
    assert (d.code, d.line, d.column) == ("PARSE/007", 2, line.index("i33") + 1)


def test_invalid_utf8_is_parse_019():
    src = "func.def @f() {\n  func.return\n}\n// caf\xe9\n".encode("latin-1")
    with pytest.raises(loom.LoomError) as info:
        loom.parse(src)
    (d,) = info.value.diagnostics
    assert (d.code, d.line, d.column) == ("PARSE/019", 4, 7)


def test_string_escapes_decode_json_style():
    m = loom.parse('kernel.decl export("a\\u00e9\\n\\"b") @k() launch()\n')
    assert m.symbols == {"k": "kernel"}


def test_surrogate_escapes():
    # A pair is one character; a lone surrogate is a bad escape.
    assert loom.parse('kernel.decl export("\\ud83d\\ude00") @k() launch()\n').symbols == {"k": "kernel"}
    with pytest.raises(loom.LoomError) as info:
        loom.parse('kernel.decl export("\\ud83d") @k() launch()\n')
    assert [d.code for d in info.value.diagnostics] == ["PARSE/023"]


def test_unexpected_non_ascii_character_is_quoted_whole():
    with pytest.raises(loom.LoomError) as info:
        loom.parse("func.def @f() {\n  func.return é\n}\n")
    (d,) = info.value.diagnostics
    assert (d.code, d.message, d.line, d.column) == ("PARSE/025", "unexpected character 'é'", 2, 15)


def test_module_symbols_and_digest():
    src = (GOLDEN / "valid.loom-test").read_text(encoding="utf-8").split("// ====\n")[-1]
    m = loom.parse(src)
    assert m.digest == hashlib.sha256(src.encode()).hexdigest()
    assert m.symbols == {
        "g11": "target", "mode": "config", "pick": "template", "pick_double": "template",
        "pick_same": "template", "ticks": "template", "read_clock": "low",
        "ticks_gfx11": "template", "chooser": "kernel",
    }
    assert m.warnings == []
    # The digest is the plain SHA-256 of the UTF-8 text, for any length.
    for n in (0, 55, 56, 63, 64, 65, 119, 1000):
        text = "// " + "x" * n + "\n"
        assert loom.parse(text).digest == hashlib.sha256(text.encode()).hexdigest()


def test_barrier_attribute_dictionary_spelling_is_accepted_with_a_portability_warning():
    kernel = """amdgpu.target<gfx1151> @gpu
kernel.def target(@gpu) @k() {{
  %one = index.constant 1 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%one, %one, %one) : index
}} launch() {{
  {barrier}
  kernel.return
}}
"""
    clause = loom.parse(kernel.format(barrier="kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)"))
    assert clause.warnings == []
    m = loom.parse(kernel.format(barrier="kernel.barrier<workgroup> {ordering = acq_rel, scope = workgroup}"))
    (w,) = m.warnings
    assert (w.code, w.line, w.column) == ("EMULATOR/100", 6, 29)
    assert "portability" in w.message and "scope(...)" in w.message
    assert w.severity == "warning"
    # a warning does not stop compilation
    m.specialize("k", "gfx1151", {})


# ---------------------------------------------------------------- specialisation

KERNEL = """\
amdgpu.target<{kind}> @t {{subgroup_size = {sg}}}
config.decl @k.grid : %g: index where [{preds}]
config.decl @k.unused : %u: index where [range(%u, 1, 2)]
config.def @k.step = 3 : index
kernel.def target(@t) @k() {{
  %one = index.constant 1 : index
  %grid = config.get @k.grid : index
  %step = config.get @k.step : index
  kernel.launch.config workgroups(%grid, %step, %one) workgroup_size(%one, %one, %one) : index
}} launch(%b: buffer) {{
  kernel.return
}}
"""


def kernel(preds="range(%g, 1, 8)", kind="gfx11-generic", sg=32):
    return loom.parse(KERNEL.format(preds=preds, kind=kind, sg=sg))


def test_specialize_binds_reachable_keys_and_defaults():
    s = kernel().specialize("k", "gfx1151", {"k.grid": "8", "never.declared": "5"})
    assert s["root"] == "kernel.def" and s["target"] == "gfx1151"
    # Unused keys (declared or not) are ignored; config.def supplies k.step.
    assert s["config"] == {"k.grid": 8, "k.step": 3}
    assert s["canonical_config"] == "k.grid=8;k.step=3"
    assert s["subgroup_size"] == 32 and s["index_bits"] == 32


def test_specialize_subgroup_size_comes_from_the_target_record():
    assert kernel(sg=64).specialize("k", "gfx1151", {"k.grid": "1"})["subgroup_size"] == 64


def test_binding_overrides_config_def():
    assert kernel().specialize("k", "gfx1151", {"k.grid": "1", "k.step": "9"})["config"]["k.step"] == 9


@pytest.mark.parametrize("value, ok", [("0", False), ("1", True), ("8", True), ("9", False), ("0x8", True)])
def test_range_is_inclusive(value, ok):
    m = kernel()
    if ok:
        assert m.specialize("k", "gfx1151", {"k.grid": value})["config"]["k.grid"] == int(value, 0)
    else:
        with pytest.raises(loom.LoomError) as info:
            m.specialize("k", "gfx1151", {"k.grid": value})
        (d,) = info.value.diagnostics
        assert d.code == "SUBRANGE/001"
        assert d.message == f"config value {value} for '@k.grid' violates range(%g, 1, 8)"


def test_missing_key_names_it():
    with pytest.raises(loom.LoomError) as info:
        kernel().specialize("k", "gfx1151", {})
    (d,) = info.value.diagnostics
    assert d.code == "SYMBOL/005" and "'@k.grid' has no value" in d.message and d.line == 7


def test_bad_literal_for_type():
    with pytest.raises(loom.LoomError) as info:
        kernel().specialize("k", "gfx1151", {"k.grid": "two"})
    assert info.value.diagnostics[0].code == "PARSE/015"


@pytest.mark.parametrize("bad", ["", "a b", "k/grid", "k@", "é"])
def test_invalid_symbol_or_key_is_a_plain_value_error(bad):
    m = kernel()
    for call in (lambda: m.specialize(bad, "gfx1151", {"k.grid": "1"}),
                 lambda: m.specialize("k", "gfx1151", {"k.grid": "1", bad: "1"})):
        with pytest.raises(ValueError, match="invalid Loom export or configuration key") as info:
            call()
        assert not isinstance(info.value, loom.LoomError)


def test_root_and_target_rules():
    m = kernel()
    with pytest.raises(loom.LoomError, match="no symbol '@nope'"):
        m.specialize("nope", "gfx1151", {})
    with pytest.raises(loom.LoomError, match="needs a pipeline.def") as info:
        m.specialize("k", NPU, {"k.grid": "1"})
    assert info.value.diagnostics[0].code == "TARGET/001"
    with pytest.raises(loom.LoomError, match="not compatible with gfx1151"):
        kernel(kind="gfx942").specialize("k", "gfx1151", {"k.grid": "1"})
    assert kernel(kind="gfx1151").specialize("k", "gfx1151", {"k.grid": "1"})["root"] == "kernel.def"
    with pytest.raises(loom.LoomError, match="unknown compile target"):
        m.specialize("k", "gfx90a", {"k.grid": "1"})


PIPELINE = """\
aie2p.target<array> @arr
aie2p.target<core> @core
config.decl @n.records : %r: index where [range(%r, 1, 64)]
pipeline.def<kernel> target(@arr) @p() launch(%a: buffer, %b: buffer) {
  %r = config.get @n.records : index
  %one = index.constant 1 : index
  %o = index.constant 0 : offset
  %g = group.create %one : index -> group
  %av = buffer.view %a[%o] : buffer -> view<[%r]x4xi32>
  %bv = buffer.view %b[%o] : buffer -> view<[%r]x4xi32>
  %f = pipeline.read %av on %g : view<[%r]x4xi32>, group -> pipeline.flow<tile<4xi32>>
  %h = pipeline.stage @copy4 on %g(%f) : (group, pipeline.flow<tile<4xi32>>) -> (pipeline.flow<tile<4xi32>>)
  pipeline.write %h to %bv : pipeline.flow<tile<4xi32>>, view<[%r]x4xi32>
  pipeline.return
}
func.def target(@core) @copy4(%i: buffer, %o: buffer) {
  %k = config.get @stage.only : index
  func.return
}
config.decl @stage.only : index
"""


def test_pipeline_specialisation_follows_stage_callees():
    m = loom.parse(PIPELINE)
    s = m.specialize("p", NPU, {"n.records": "5", "stage.only": "2"})
    assert s["root"] == "pipeline.def" and s["subgroup_size"] == 0
    assert s["config"] == {"n.records": 5, "stage.only": 2}
    with pytest.raises(loom.LoomError, match="'@stage.only' has no value"):
        m.specialize("p", NPU, {"n.records": "5"})
    with pytest.raises(loom.LoomError, match="needs a kernel.def"):
        m.specialize("p", "gfx1151", {})


TEMPLATES = """\
config.decl @sel : %s: index where [range(%s, 0, 2)]
template.decl @fam(%which: index, %x: i32) -> (i32)
template.def<@fam> @zero(%which: index, %x: i32) -> (i32) where [eq(%which, 0)] {{
  template.return %x : i32
}}
template.def<@fam> @low(%which: index, %x: i32) -> (i32) where [le(%which, 1)] {{
  template.return %x : i32
}}
template.def<@fam> {prio} @any(%which: index, %x: i32) -> (i32) {{
  template.return %x : i32
}}
kernel.def @k() {{
  %one = index.constant 1 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%one, %one, %one) : index
}} launch(%b: buffer) {{
  %w = config.get @sel : index
  %x = scalar.constant 5 : i32
  %r = template.apply<@fam>(%w, %x) : (index, i32) -> (i32)
  kernel.return
}}
"""


def test_template_choice_by_config_value_and_priority():
    m = loom.parse(TEMPLATES.format(prio="priority(-1)"))
    pick = lambda v: list(m.specialize("k", "gfx1151", {"sel": v})["templates"].values())
    # sel=2: only @any applies; sel=1: @low (priority 0) beats @any (-1);
    # sel=0: @zero and @low tie at priority 0.
    assert pick("2") == ["any"]
    assert pick("1") == ["low"]
    with pytest.raises(loom.LoomError) as info:
        pick("0")
    (d,) = info.value.diagnostics
    assert d.code == "SYMBOL/004" and "'@zero' and '@low'" in d.message
    top = loom.parse(TEMPLATES.format(prio="priority(5)"))
    assert list(top.specialize("k", "gfx1151", {"sel": "0"})["templates"].values()) == ["any"]


def test_template_with_unproven_predicate_is_not_chosen():
    # The apply's operand is a runtime value: no where-predicate is proven.
    src = TEMPLATES.format(prio="priority(-1)").replace(
        "%r = template.apply<@fam>(%w, %x)", "%v = kernel.workgroup.id<x> : index\n  %r = template.apply<@fam>(%v, %x)"
    )
    s = loom.parse(src).specialize("k", "gfx1151", {"sel": "0"})
    assert list(s["templates"].values()) == ["any"]


def test_unreachable_config_gets_need_no_value():
    src = KERNEL.format(preds="range(%g, 1, 8)", kind="gfx1151", sg=32) + (
        "config.decl @other : index\n"
        "func.def @never_called() {\n  %x = config.get @other : index\n  func.return\n}\n"
    )
    s = loom.parse(src).specialize("k", "gfx1151", {"k.grid": "2"})
    assert s["config"] == {"k.grid": 2, "k.step": 3}


# Plain-Python model of the declaration predicates (inclusive range).
def holds(name, args, v):
    if name == "range":
        return args[0] <= v <= args[1]
    if name == "mul":
        return v % args[0] == 0
    if name == "pow2":
        return v > 0 and v & (v - 1) == 0
    k = args[0]
    return {"eq": v == k, "ne": v != k, "lt": v < k, "le": v <= k, "gt": v > k, "ge": v >= k,
            "min": v >= k, "max": v <= k}[name]


predicate = st.one_of(
    st.tuples(st.just("range"), st.tuples(st.integers(-50, 50), st.integers(-50, 50))),
    st.tuples(st.just("mul"), st.tuples(st.integers(1, 9))),
    st.tuples(st.just("pow2"), st.just(())),
    st.tuples(st.sampled_from(["eq", "ne", "lt", "le", "gt", "ge", "min", "max"]), st.tuples(st.integers(-50, 50))),
)


@settings(max_examples=200, deadline=None)
@given(preds=st.lists(predicate, min_size=1, max_size=3), value=st.integers(-60, 60))
def test_config_predicates_match_a_plain_model(preds, value):
    text = ", ".join(f"{n}(%g{''.join(f', {a}' for a in args)})" for n, args in preds)
    m = kernel(preds=text)
    expect = all(holds(n, args, value) for n, args in preds)
    try:
        s = m.specialize("k", "gfx1151", {"k.grid": str(value)})
    except loom.LoomError as e:
        assert not expect, e
        assert e.diagnostics[0].code == "SUBRANGE/001" and f"config value {value} " in str(e)
    else:
        assert expect and s["config"]["k.grid"] == value


# ---------------------------------------------------------------- scale

def generated_module(lines):
    """A module of about `lines` lines: many small kernels."""
    out = ["amdgpu.target<gfx11-generic> @t {subgroup_size = 32}"]
    k = 0
    while len(out) < lines:
        out += [
            f"kernel.def target(@t) @k{k}(%n: index) {{",
            "  %one = index.constant 1 : index",
            "  kernel.launch.config workgroups(%n, %one, %one) workgroup_size(%one, %one, %one) : index",
            "} launch(%n: index, %b: buffer) {",
            "  %o = index.constant 0 : offset",
            "  %i = kernel.workitem.id<x> : index",
            "  %v = buffer.view %b[%o] : buffer -> view<[%n]xf32>",
            "  %in = index.cmp ult, %i, %n : index",
            "  scf.if %in {",
            "    %x = view.load %v[%i] : view<[%n]xf32> -> f32",
            "    %y = scalar.addf %x, %x : f32",
            "    view.store %y, %v[%i] : f32, view<[%n]xf32>",
            "  }",
            "  kernel.return",
            "}",
        ]
        k += 1
    return "\n".join(out) + "\n", k


def test_thousand_line_module_parses_verifies_and_specialises():
    # Its speed is measured in the report, never asserted here.
    src, kernels = generated_module(1000)
    m = loom.parse(src)
    assert len(m.symbols) == kernels + 1
    assert m.specialize(f"k{kernels - 1}")["root"] == "kernel.def"


# ---------------------------------------------------------------- corpus

CORPUS = os.environ.get("HRX_LOOM_CORPUS")
CORPUS_FILES = [
    "add_f32", "bounded_extrema", "completed_tick", "copy.xdna", "file_exchange.gpu", "gemm_bf16.xdna",
    "hrxdb_select_family", "mul_i32.xdna", "resident_exchange.gpu", "resident_exchange.xdna", "scratch",
    "workgroup_races", "batched_gemm.xdna",
]
# Root, target and config each corpus file is specialised with.
CORPUS_ROOTS = {
    "add_f32": [("add_f32", "gfx1151", {"add.grid": "4"})],
    "bounded_extrema": [("bounded_extrema", "gfx1151", {})],
    "copy.xdna": [("copy", NPU, {"copy.packets": "3"})],
    "file_exchange.gpu": [("file_exchange", "gfx1151", {})],
    "gemm_bf16.xdna": [("gemm", NPU, {})],
    "hrxdb_select_family": [("select", "gfx1151", {"db.batch": "2", "db.select.first": "1", "db.select.limit": "64"}),
                            ("select", "gfx1151", {"db.batch": "2", "db.select.first": "0", "db.select.limit": "64"})],
    "mul_i32.xdna": [("mul_i32", NPU, {})],
    "scratch": [("scratch", "gfx1151", {})],
    "workgroup_races": [(f"tsan_workgroup_{n}", "gfx1151", {}) for n in
                        ["write_race", "wide_upper_half_write_race", "wide_current_write_race",
                         "adjacent_wide_writes", "barrier_safe_write"]],
    "batched_gemm.xdna": [("gemm", NPU, {"gemm.batch": "7"})],
}


@pytest.mark.skipif(not CORPUS, reason="HRX_LOOM_CORPUS is not set")
@pytest.mark.parametrize("name", CORPUS_FILES)
def test_corpus_parses_verifies_and_specialises(name):
    m = loom.parse((Path(CORPUS) / f"{name}.loom").read_text(encoding="utf-8"))
    assert m.warnings == []
    for symbol, target, config in CORPUS_ROOTS.get(name, []):
        s = m.specialize(symbol, target, config)
        assert s["config"] == {k: int(v) for k, v in config.items()}
    if name == "hrxdb_select_family":
        firsts = [list(m.specialize("select", "gfx1151", {"db.batch": "2", "db.select.first": v,
                                                          "db.select.limit": "64"})["templates"].values())
                  for v in ("1", "0")]
        assert firsts == [["db.row_id"], ["db.merge_id"]]
    if name == "resident_exchange.gpu":
        # Its clock family is implemented in completed_tick.loom, another module.
        with pytest.raises(loom.LoomError, match="no implementation of template '@completed_tick'"):
            m.specialize("resident_exchange", "gfx1151", {})


# ---------------------------------------------------------------- robustness

FUZZ = r"""
import random, sys
from hrxarray._core import loom
src = open(sys.argv[1], encoding="utf-8").read()
rng = random.Random(int(sys.argv[2]))
pieces = ["%", "@", "{", "}", "(", ")", "[", "]", "<", ">", ",", ":", "=", "->", "\n", '"', "\\", "x", "0",
          "-", "-inf", "0x", "é", "scf.if %c", "index.add", "#e<", "^b", "where [", "launch("]
failed = 0
for _ in range(int(sys.argv[3])):
    s = src
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(s) + 1)
        r = rng.random()
        if r < 0.4:
            s = s[:i] + s[i + rng.randint(1, 8):]
        elif r < 0.8:
            s = s[:i] + rng.choice(pieces) + s[i:]
        else:
            j = rng.randrange(len(s) + 1)
            s = s[:i] + s[j:j + 20] + s[i:]
    try:
        m = loom.parse(s)
        config = {"scale.groups": "2", "tiles": "4", "mode": "1"}
        for name, kind in m.symbols.items():
            for target in ("gfx1151", "amd.xdna.strix_halo.17f0_11"):
                try:
                    m.specialize(name, target, config)
                except ValueError:  # LoomError, or an invalid symbol
                    pass
    except loom.LoomError as e:
        failed += 1
        errors = [(d.code, d.line, d.column, d.message) for d in e.diagnostics if d.severity == "error"]
        assert errors and len(errors) <= 21, errors
        # Every recovery makes progress: no diagnostic is reported twice.
        assert len(set(errors)) == len(errors), (s, errors)
print(failed)
"""


def test_whole_valid_golden_file_is_one_module():
    # The valid cases use distinct symbols, so together they form one module.
    m = loom.parse((GOLDEN / "valid.loom-test").read_text(encoding="utf-8"))
    assert {"scale", "loops", "collect", "vectors", "tiled", "chooser"} <= set(m.symbols)


def test_mutated_sources_give_diagnostics_never_crashes_or_hangs(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "fuzz.py"
    script.write_text(FUZZ)
    proc = subprocess.run(
        [sys.executable, str(script), str(GOLDEN / "valid.loom-test"), "1", "1500"],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert int(proc.stdout) > 1000  # most mutations are errors, and each was reported
