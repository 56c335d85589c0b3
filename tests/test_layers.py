"""The layer rules of DESIGN.md that the source tree must keep (checked on the sources,
so skipped where the tests run without them): memory/ depends on nothing of the runtime,
the runtime reaches device code only through the provider interface, the emulated provider
runs dispatches through its queue, the built-in programs' only device code is Loom, ext/core has no
Python, the bindings leave array orchestration (allocation, tasks, submission) to the core, and the
Python package's import graph has no cycle, its foundation modules importing no chapter module."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[1] / "ext" / "core"
PACKAGE = Path(__file__).resolve().parents[1] / "src" / "hrxarray"

pytestmark = pytest.mark.skipif(not CORE.is_dir(), reason="needs the source tree (ext/core)")


def sources(layer):
    return sorted(p for p in (CORE / layer).rglob("*") if p.suffix in (".h", ".cpp"))


def includes(path):
    return re.findall(r'^\s*#\s*include\s+"([^"]+)"', path.read_text(), re.MULTILINE)


def test_memory_includes_and_names_nothing_of_the_runtime():
    found = []
    for p in sources("memory"):
        found += [f"{p.name} includes {i}" for i in includes(p) if i.startswith(("runtime/", "array/", "loom/"))]
        found += [f"{p.name} names {m}" for m in re.findall(r"\b(RuntimeCore|Scheduler|Submission)\b", p.read_text())]
    assert sources("memory") and not found


# What the runtime may include below the provider interface: the Loom plan's query
# interface (launch program, footprints, signatures) that artifacts and contracts read,
# and the scalar conversions that pack a constant block. Running any code goes through
# provider::Executable, and every program, built-in or Loom artifact, is loaded by
# Provider::load_program (a planned artifact as ProgramImage::planned).
RUNTIME_MAY_INCLUDE = {"loom/plan.h", "kernels/elementwise.h"}


def test_runtime_reaches_device_code_only_through_the_provider_interface():
    found = [f"{p.name} includes {i}" for p in sources("runtime") for i in includes(p)
             if i.startswith(("kernels/", "provider/emulated/")) and i not in RUNTIME_MAY_INCLUDE]
    assert sources("runtime") and not found


def test_programs_load_only_through_the_provider():
    """Issue 26: Loom artifacts load through Provider::load_program like the built-ins; the emulated
    provider's Loom wrapper (provider/emulated/planned.h) is included by nothing outside it."""
    found = [f"{p.relative_to(CORE)} includes {i}" for p in sources(".") for i in includes(p)
             if i.endswith("emulated/planned.h") and not str(p.relative_to(CORE)).startswith("provider/emulated/")]
    assert found == []
    assert "provider.load_program(image)" in (CORE / "runtime" / "loom_artifact.cpp").read_text()


def test_emulated_provider_runs_dispatches_and_the_builtins_are_loom():
    emulated = CORE / "provider" / "emulated"
    assert not (CORE / "provider" / "emulated.cpp").exists()
    queue = (emulated / "queue.cpp").read_text()
    assert "Dispatch::Kind::Fill" in queue and "Dispatch::Kind::Copy" in queue and "Dispatch::Kind::Invoke" in queue
    # The Loom executor (planner, interpreter, native code generator) is the Loom layer's: the
    # provider receives dispatches and invokes a plan, it holds no Loom semantics of its own.
    assert not list(emulated.glob("loom_*")), "Loom executor files belong in ext/core/loom/"
    for name in ("plan.cpp", "interp.cpp", "codegen.cpp"):
        assert (CORE / "loom" / name).exists()
    # One owner of the built-ins' device code: their Loom sources; no hand-written bodies left.
    assert not (emulated / "builtins.cpp").exists()
    # Built-ins load as planned programs, as artifacts do (Note [Built-ins load as planned programs]):
    # the runtime plans their source, the provider never parses or plans Loom.
    programs = (CORE / "runtime" / "programs.cpp").read_text()
    assert "builtin_source(name).text" in programs and "loom_run(" in programs
    for f in emulated.glob("*.*"):
        text = f.read_text()
        assert "parse_module" not in text and "Program::plan" not in text and "specialize(" not in text, f.name
    provider_h = (CORE / "provider" / "provider.h").read_text()
    image = provider_h[provider_h.index("struct ProgramImage"):]
    image = image[:image.index("};")]
    assert "source" not in image, "a program image carries a planned program, not Loom source"
    # The scheduler hands fills, copies and kernels to the queue instead of running them.
    scheduler = (CORE / "runtime" / "scheduler.cpp").read_text()
    assert "std::memcpy(op.uses" not in scheduler and "kernel->run(" not in scheduler
    assert "queue.submit(d)" in scheduler


# Where core code outside the provider runs an executable itself instead of dispatching it on a lane's
# provider queue. Loaded kernels (hx.loom.function, graphs) are queue dispatches (Scheduler::dispatch);
# what is listed is left of issue 26 item 1.
CORE_MAY_INVOKE = {}  # hx.loom.ufunc's staged calls are StagedInvokeOp dispatches now


def test_loaded_kernels_run_as_dispatches_on_a_provider_queue():
    found = {}
    for p in sources("."):
        rel = str(p.relative_to(CORE))
        if rel.startswith("provider/"):
            continue
        n = len(re.findall(r"(?:->|\.)invoke\(", code_of(p)))
        if n:
            found[rel] = n
    assert found == CORE_MAY_INVOKE
    assert "invoke(" not in code_of(CORE / "runtime" / "kernel.h"), "Kernel::invoke ran kernels outside any queue"


def test_core_has_no_python():
    """ext/core is C++ without Python (DESIGN.md): the bindings parse, call and wrap; core code
    that may block marks it with BlockingWait (runtime/blocking.h) instead of releasing a GIL."""
    found = [f"{p.relative_to(CORE)} includes {i}" for p in sources(".")
             for i in re.findall(r'^\s*#\s*include\s+[<"]([^>"]+)[>"]', p.read_text(), re.MULTILINE)
             if i.startswith(("Python.h", "nanobind/", "pybind11/"))]
    found += [f"{p.relative_to(CORE)} names {m}" for p in sources(".")
              for m in set(re.findall(r"\b(PyObject|PyGILState_\w+|PyEval_\w+|Py_BEGIN_ALLOW_THREADS)\b", p.read_text()))]
    assert sources(".") and not found


BIND = CORE.parent / "bind"

# What orchestrating array work looks like: allocating a result, building a runtime task, submitting it,
# recording a completion as an array's writer. Each belongs to a core operation (ext/core/array/, and the
# runtime for graphs); a binding parses Python objects, makes one core call and wraps the result.
ORCHESTRATION = {
    "make_array(": r"\bmake_array\(",
    "*_task(": r"\b\w+_task\(",
    "submit(": r"\bsubmit\(",
    "add_writer(": r"\badd_writer\(",
}

# The places in ext/bind that may still match, with how many matches each may have, and why they are
# binding business rather than array orchestration.
BIND_MAY_ORCHESTRATE = {
    # ExecutableGraph.submit / submit_after: the Python methods of a graph the user built. Their helper
    # (named submit, defined and called once) parses the `after` list of Completion objects and makes one
    # core call, RuntimeCore::submit, whose checks (slots, capacity, host mappings) are the runtime's.
    ("bind_graph.cpp", "submit("): 3,
}


def code_of(path):
    """C++ source without comments and string or character literals (docstrings mention submit())."""
    pattern = r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])+\''
    return re.sub(pattern, lambda m: "" if m.group(0).startswith("/") else '""', path.read_text(), flags=re.DOTALL)


def orchestration_in(paths):
    found = {}
    for p in paths:
        text = code_of(p)
        for name, pattern in ORCHESTRATION.items():
            n = len(re.findall(pattern, text))
            if n:
                found[(p.name, name)] = n
    return found


def test_bindings_parse_call_and_wrap():
    """The bindings parse, call and wrap; array semantics live in ext/core/array/ (DESIGN.md's layers).
    No binding file allocates arrays, builds or submits tasks or records writers, except the listed places."""
    paths = sorted(p for p in BIND.glob("*") if p.suffix in (".h", ".cpp"))
    assert paths
    assert orchestration_in(paths) == BIND_MAY_ORCHESTRATE


# Leases, guards, host cache maintenance and provider queries are the core's (memory/guards.h,
# runtime/host_visibility.h): a binding holds the RAII owner the core hands it and wraps it.
GUARD_OR_PROVIDER = r"\b(acquire_host|release_host|acquire_host_lease|release_host_lease|acquire_device_use|" \
    r"release_device_use|take_lease|host_recipe|host_cache_control|merge_ranges|pair_info)\(|\bprovider\(\)"

# What is left (issue 26 item 3): the DLPack export's host lease, taken and given back in the bindings.
BIND_MAY_LEASE: dict[str, int] = {}  # DLPack exports lease in the core (array/dlpack.h) since issue 26


def test_bindings_take_no_lease_and_ask_no_provider():
    found = {}
    for p in sorted(BIND.glob("*")):
        if p.suffix in (".h", ".cpp"):
            n = len(re.findall(GUARD_OR_PROVIDER, code_of(p)))
            if n:
                found[p.name] = n
    assert found == BIND_MAY_LEASE


def test_one_python_integer_parser():
    """Integer arguments go through int64_index/int64_of (array_bind.h); the one other __index__ call is a
    device scalar's unsigned fallback beyond int64 (bind_loom.cpp's scalar_arg)."""
    found = {p.name: n for p in sorted(BIND.glob("*.cpp")) if (n := code_of(p).count("PyNumber_Index("))}
    assert found == {"bind_array.cpp": 1, "bind_loom.cpp": 1}


def test_bindings_never_import_the_package_facade():
    """The default runtime lives in the C++ core (Note [The default runtime]); no binding reaches back
    into ``hrxarray/__init__.py`` for it or anything else (issue 26: a one-way boundary)."""
    found = [p.name for p in sorted(BIND.glob("*.cpp")) if re.search(r'import_\(\s*"hrxarray"\s*\)', p.read_text())]
    assert found == []


def test_bindings_import_no_module_of_the_package():
    """No C++ file imports any module of hrxarray (issue 26: a one-way boundary): bfp16 is the core's
    object, the foreign-operand rule is the core's, and the Python classes of awaitables, host views and
    traces are handed to the bindings at import (Note [Python builders] in ext/bind/builders.cpp)."""
    found = [f"{p.relative_to(CORE.parent)}: {m}" for p in sorted(CORE.parent.rglob("*"))
             if p.suffix in (".h", ".cpp") for m in re.findall(r'import_\(\s*"hrxarray[."][^"]*"', p.read_text())]
    assert found == []


def test_orchestration_check_sees_calls_but_not_comments_or_strings(tmp_path):
    probe = tmp_path / "bind_probe.cpp"
    probe.write_text('// make_array(rt, p) in a comment\nm.def("f", &f, "then submit() it");\n'
                     "Array out = make_array(rt, p, shape, t, op);\nTaskSpec t = gather_task(in, out, op);\n"
                     "submit(rt, t);\nout.base->add_writer(c);\nchar q = '\"'; // submit(\n")
    assert orchestration_in([probe]) == {("bind_probe.cpp", "make_array("): 1, ("bind_probe.cpp", "*_task("): 1,
                                         ("bind_probe.cpp", "submit("): 1, ("bind_probe.cpp", "add_writer("): 1}


# --- the Python package's import graph (issue 26: a graph without cycles) -----------------------

# The foundation: the array type and its method table, dtypes, host views, traces, completions and
# the default runtime (with the compiled core). They import nothing but each other, so any chapter
# (creation, manipulation, statistics, linalg, loom, dask, ...) may build on all of them.
FOUNDATION = {"hrxarray._array", "hrxarray._dtypes", "hrxarray._hostview", "hrxarray._trace",
              "hrxarray._completion", "hrxarray._runtime"}


def _modules(root):
    """{dotted name: path} of every .py module of the package at `root` (a directory named like it)."""
    mods = {}
    for p in sorted(root.rglob("*.py")):
        parts = p.relative_to(root.parent).with_suffix("").parts
        mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return mods


def _type_checking_only(node):
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        isinstance(test, ast.Name) and test.id.endswith("TYPE_CHECKING")
        or isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def import_graph(root):
    """{module: set of package modules it imports}, counting imports anywhere in the module (in
    functions too: a lazy import is still a dependency) except under ``if TYPE_CHECKING:``.

    ``from pkg import name`` is an edge to the submodule ``pkg.name`` when there is one, else to
    ``pkg`` itself (the name comes from its __init__: the facade). The implicit import of a module's
    parent package by the import system is not an edge (every submodule has it)."""
    mods = _modules(root)
    top = root.name
    graph = {}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found = set()
        stack = list(ast.parse(path.read_text()).body)
        while stack:
            node = stack.pop()
            if _type_checking_only(node):
                stack.extend(node.orelse)
                continue
            stack.extend(ast.iter_child_nodes(node))
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.split(".")[0] == top)
            elif isinstance(node, ast.ImportFrom):
                base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
                mod = ".".join(base + ([node.module] if node.module else [])) if node.level else node.module or ""
                if mod.split(".")[0] != top:
                    continue
                for a in node.names:
                    sub = f"{mod}.{a.name}"
                    found.add(sub if sub in mods or sub.endswith("._core") else mod)
        graph[name] = {m for m in found if m in mods and m != name}
    return graph


def cycles(graph):
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_import_graph_reader_sees_lazy_facade_and_submodule_imports(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from . import a\nfrom .a import thing\nname = 1\n")
    (pkg / "a.py").write_text("from . import b\nimport typing\nif typing.TYPE_CHECKING:\n    from . import c\n")
    (pkg / "b.py").write_text("def f():\n    from pkg import name\n    return name\n")
    (pkg / "c.py").write_text("from .sub import d\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "d.py").write_text("from .. import c\nfrom pkg import _core\n")
    g = import_graph(pkg)
    assert g == {"pkg": {"pkg.a"}, "pkg.a": {"pkg.b"}, "pkg.b": {"pkg"}, "pkg.c": {"pkg.sub.d"},
                 "pkg.sub": set(), "pkg.sub.d": {"pkg.c"}}
    assert sorted(cycles(g)) == [["pkg", "pkg.a", "pkg.b"], ["pkg.c", "pkg.sub.d"]]


@pytest.mark.skipif(not PACKAGE.is_dir(), reason="needs the source tree (src/hrxarray)")
def test_the_package_imports_without_cycles():
    graph = import_graph(PACKAGE)
    assert len(graph) > 20 and FOUNDATION <= set(graph)
    assert cycles(graph) == [], "import cycles in src/hrxarray (lazy imports count)"


@pytest.mark.skipif(not PACKAGE.is_dir(), reason="needs the source tree (src/hrxarray)")
def test_foundation_modules_import_no_chapter_module():
    graph = import_graph(PACKAGE)
    found = {m: sorted(graph[m] - FOUNDATION) for m in FOUNDATION if graph[m] - FOUNDATION}
    assert found == {}


@pytest.mark.skipif(not PACKAGE.is_dir(), reason="needs the source tree (src/hrxarray)")
def test_one_broadcasting_rule():
    """Broadcasting is the core's rule (array/ops.h broadcast_shapes, as _core._broadcast_shapes): no module
    of the package computes it with NumPy's."""
    found = [f"{p.relative_to(PACKAGE)}:{i + 1}" for p in sorted(PACKAGE.rglob("*.py"))
             for i, line in enumerate(p.read_text().splitlines())
             if re.search(r"\bnp\.broadcast_shapes\(|\bnumpy\.broadcast_shapes\(|\bnp\.broadcast\(", line)]
    assert found == []


def test_loom_ops_find_their_handlers_by_catalogue_index():
    """Issue 25 item 4, Note [Handlers]: the parser stamps each op with its catalogue entry and the
    interpreter indexes a slot array with it: no string or hash lookup per executed op."""
    interp = code_of(CORE / "loom" / "interp.cpp")

    def body(src, head):
        start = src.index(head)
        return src[start:src.index("\n}\n", start)]

    resolve, run_region = body(interp, "void* Exec::resolve("), body(interp, "const Op* Exec::run_region(")
    assert "handler_slots()[op.entry - 1]" in resolve
    assert ".find(" not in run_region and "table()" not in run_region and "resolve(op)" in run_region
    assert "catalogue_index(op.name)" in code_of(CORE / "loom" / "parser.cpp")
    assert "handlers" not in code_of(CORE / "loom" / "plan.cpp")


def test_loom_interpreter_handlers_are_split_by_dialect():
    """Issue 25 item 4: the handlers live in one file per dialect family, the executor and op table in
    interp.cpp; no file holds the old 2,900-line struct."""
    loom = CORE / "loom"
    files = {name: code_of(loom / f"interp_{name}.cpp") for name in ("scalar", "memory", "vector", "kernel")}
    expect = {"scalar": "Ops::int_binary", "memory": "Ops::view_load", "vector": "Ops::mma", "kernel": "Ops::scf_for"}
    for name, fn in expect.items():
        assert fn + "(" in files[name], (name, fn)
    assert "Ops::table()" in code_of(loom / "interp.cpp")
    assert max(len((loom / f).read_text().splitlines()) for f in ("interp.cpp", *(f"interp_{n}.cpp" for n in files))) < 1200


def task_body(name):
    ops = code_of(CORE / "array" / "ops.cpp")
    start = ops.index(f"TaskSpec {name}(")
    return ops[start:ops.index("\n}\n", start)]


def test_elementwise_functions_are_provider_dispatches():
    """Issue 26 item 1, first family (Note [Array operations are dispatches]): a ufunc call is an
    elementwise dispatch on the lane's queue, which the emulated provider runs; no closure."""
    body = task_body("ufunc_task")
    assert "provider::ElementwiseOp" in body and "t.array = " in body
    assert "ufunc_run" not in body and "[plan]" not in body
    assert "Dispatch::Kind::Array: run_array_op" in code_of(CORE / "provider" / "emulated" / "queue.cpp")
    scheduler = code_of(CORE / "runtime" / "scheduler.cpp")
    assert "provider::Dispatch::Kind::Array" in scheduler
    # Fault injection sees array dispatches as it sees kernels (tests/test_failure.py drills it).
    assert "array_fault().take(op.label)" in scheduler and "kernel->fault.take()" in scheduler


# Each family moved into the provider: the array layer's task builder, the description it fills,
# and the kernel it must no longer call itself (the emulated provider's array_ops.cpp calls it).
ARRAY_OP_FAMILIES = {
    "copy_task": ("CopyCastOp", "copy_cast"),
    "reduce_task": ("ReduceOp", "reduce_run"),
    "arg_reduce_task": ("ArgReduceOp", "arg_reduce_run"),
    # hx.matmul, the NPU's bf16/bfp16 gemm on the NPU lane included.
    "matmul_task": ("MatmulOp", "matmul_bf16"),
}


@pytest.mark.parametrize("task", sorted(ARRAY_OP_FAMILIES))
def test_copies_casts_and_reductions_are_provider_dispatches(task):
    """Issue 26 item 1: copies and casts (bfp16 included), reductions and matmul are dispatches of an
    operation the provider supplies, like the elementwise functions; an operation with nothing
    to do is an EmptyOp dispatch (nothing_to_do), not an empty closure."""
    description, kernel = ARRAY_OP_FAMILIES[task]
    body = task_body(task)
    assert f"provider::{description}" in body and "t.array = " in body
    assert f"{kernel}(" not in body and "kernels::bfp16" not in body and "_rows(" not in body
    assert "t.fn" not in body
    assert f"{kernel}(" in code_of(CORE / "provider" / "emulated" / "array_ops.cpp")


def test_one_owner_stages_overlapping_operands():
    """Issue 26 item 1: an operand overlapping the output is staged (read through a dense copy
    before anything is written) by the provider's resolve alone, for every family; the array
    layer neither stages inside a task nor copies through a temporary array first."""
    assert "stage_into" not in code_of(CORE / "array" / "ops.cpp")
    assert "copy_task(tmp" not in code_of(CORE / "array" / "copy.cpp")
    provider = code_of(CORE / "provider" / "emulated" / "array_ops.cpp")
    assert provider.count("if (!a.stage)") == 1


# What is left of a body the provider does not supply: hx.fft's host function (provider::FftOp),
# NumPy's pocketfft entered through Python (Note [FFTs through NumPy's pocketfft] in array/fft.h),
# which the queue runs in order as hipLaunchHostFunc does. hrxarray writes no FFT of its own.
HOST_FUNCTION_OPS = ["FftOp"]


def test_array_operations_submit_no_closures():
    """Issue 26 item 1: every array operation is a dispatch of an operation the provider supplies
    (provider/provider.h, provider/array_ops.h), run by the emulated provider; the array layer
    builds descriptions and submits no closures (an operation with nothing to do is an EmptyOp)."""
    found = [str(p.relative_to(CORE)) for p in sorted((CORE / "array").glob("*.cpp")) if ".fn = " in code_of(p)]
    assert found == []
    ops_h = code_of(CORE / "array" / "ops.h")
    assert "std::function" not in ops_h[ops_h.index("struct TaskSpec"):ops_h.index("struct Operand")]
    # The runtime has no closure operations left: its one-operation submissions are dispatches.
    graph_h = code_of(CORE / "runtime" / "graph.h")
    assert "Task" not in graph_h[graph_h.index("enum class Kind"):graph_h.index("kind = Kind::Fill")]
    assert "op.task()" not in code_of(CORE / "runtime" / "scheduler.cpp")
    runs = code_of(CORE / "provider" / "emulated" / "more_ops.cpp")
    descriptions = code_of(CORE / "provider" / "array_ops.h")
    with_functions = [m for m in re.findall(r"struct (\w+Op) : ArrayOp \{(.*?)\n\};", descriptions, re.DOTALL)
                      if "std::function" in m[1]]
    assert [name for name, _ in with_functions] == HOST_FUNCTION_OPS
    families = re.findall(r"struct (\w+Op) : ArrayOp", descriptions)
    assert len(families) >= 20
    for f in families:
        if f != "EmptyOp":  # nothing to run
            assert f"as<{f}>(op)" in runs, f"the emulated provider does not run {f}"
    # The array layer describes; the kernels that compute are called by the provider alone.
    for name in ("gather(", "scatter(", "sort_rows(", "argsort_rows(", "unique_groups(", "scan_rows(",
                 "copy_triangle(", "random_real(", "bincount(", "median_rows(", "ufunc_at(", "invoke("):
        for p in (CORE / "array").glob("*.cpp"):
            assert f"kernels::{name}" not in code_of(p) and f"->{name}" not in code_of(p), (name, p.name)
    assert "run<float>" not in code_of(CORE / "array" / "linalg.cpp")


def test_no_other_projects_packages_or_binaries_in_the_tree():
    # Nothing from another project is copied into this one: no wheels, archives or prebuilt
    # libraries among the tracked files (a wheel of mpmath once slipped in with a test change).
    import shutil
    import subprocess

    root = CORE.parents[1]
    if not (root / ".git").exists() or shutil.which("git") is None:
        pytest.skip("needs a git checkout")
    files = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True, check=True).stdout
    foreign = [f for f in files.splitlines()
               if re.search(r"\.(whl|egg|tar\.gz|tgz|tar\.bz2|zip|so|a|dll|dylib|pyd)$", f)]
    assert not foreign, foreign
