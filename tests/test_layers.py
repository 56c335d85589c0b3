"""The layer rules of DESIGN.md that the source tree must keep (checked on the sources,
so skipped where the tests run without them): memory/ depends on nothing of the runtime,
the runtime reaches device code only through the provider interface, the emulated provider
runs dispatches through its queue, the built-in programs' only device code is Loom, ext/core has no
Python, and the bindings leave array orchestration (allocation, tasks, submission) to the core."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[1] / "ext" / "core"

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
# provider::Executable (provider/loom_executable.h for Loom plans).
RUNTIME_MAY_INCLUDE = {"loom/plan.h", "kernels/elementwise.h"}


def test_runtime_reaches_device_code_only_through_the_provider_interface():
    found = [f"{p.name} includes {i}" for p in sources("runtime") for i in includes(p)
             if i.startswith(("kernels/", "provider/emulated/")) and i not in RUNTIME_MAY_INCLUDE]
    assert sources("runtime") and not found


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
    assert "load_loom" in (emulated / "provider.cpp").read_text()
    assert "builtin_source(name).text" in (CORE / "runtime" / "programs.cpp").read_text()
    # The scheduler hands fills, copies and kernels to the queue instead of running them.
    scheduler = (CORE / "runtime" / "scheduler.cpp").read_text()
    assert "std::memcpy(op.uses" not in scheduler and "kernel->run(" not in scheduler
    assert "queue.submit(d)" in scheduler


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


def test_orchestration_check_sees_calls_but_not_comments_or_strings(tmp_path):
    probe = tmp_path / "bind_probe.cpp"
    probe.write_text('// make_array(rt, p) in a comment\nm.def("f", &f, "then submit() it");\n'
                     "Array out = make_array(rt, p, shape, t, op);\nTaskSpec t = gather_task(in, out, op);\n"
                     "submit(rt, t);\nout.base->add_writer(c);\nchar q = '\"'; // submit(\n")
    assert orchestration_in([probe]) == {("bind_probe.cpp", "make_array("): 1, ("bind_probe.cpp", "*_task("): 1,
                                         ("bind_probe.cpp", "submit("): 1, ("bind_probe.cpp", "add_writer("): 1}
