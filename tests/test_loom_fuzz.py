"""Mutated Loom sources (issue 24): valid programs (tests/loom_programs.py, the test programs of
tests/test_loom_exec.py and the built-in src/hrxarray/programs/*.loom) with lines and tokens deleted,
duplicated or swapped, numbers replaced by hostile ones and regions nested deeply. Every one must
parse, compile, plan, evaluate its launch program and (when that is cheap) run on tiny bindings, or
fail with the documented error of the step: hx.loom.LoomError when parsed, compiled or planned,
ValueError from the launch program and the footprints, hx.ExecutionError (or a data check's
ValueError) when run. Never a crash, a hang or another exception type.

The Hypothesis search runs in a child process, so that a crash fails the test (naming the source
that did it) instead of ending the run. A longer campaign (ASan build, many examples) runs the same
`check_source` and `mutate` through LOOM_FUZZ_EXAMPLES, e.g.
  LOOM_FUZZ_EXAMPLES=20000 python -c "import sys; sys.path.insert(0, 'tests'); import test_loom_fuzz as f; f.fuzz()"
"""

import os
import pathlib
import re
import struct
import sys

import numpy as np

from helpers import run_killable

HERE = pathlib.Path(__file__).resolve().parent
GPU = "gfx1151"
NPU = "amd.xdna.strix_halo.17f0_11"

# Numbers a mutation puts in place of a literal: the edges of every size and count check.
HOSTILE = [-8, -1, 0, 1, 3, 64, 4096, 65536, 65537, 2**31, 2**32, 2**40, 2**62, 2**63 - 1, -2**63, 2**64]
NUMBER = re.compile(r"(?<![\w%@#.$])-?\d+(?![\w.])")
ROOT = re.compile(r"\b(kernel|pipeline)\.def\b[^\n]*?@([A-Za-z_$][\w.$-]*)\(")
CONFIG_KEY = re.compile(r"\bconfig\.decl\s+@([\w.$-]+)")


def seed_sources():
    """The valid programs the mutations start from: (name, text)."""
    import hrxarray as hx
    import loom_programs
    import test_loom_exec

    out = []
    for mod in (loom_programs, test_loom_exec):
        for name, value in sorted(vars(mod).items()):
            if name.isupper() and isinstance(value, str) and ("kernel.def" in value or "pipeline.def" in value):
                out.append((f"{mod.__name__}.{name}", value.replace("ROUNDING", "flush_subnormal")))
    for path in sorted((HERE.parent / "src" / "hrxarray" / "programs").glob("*.loom")):
        out.append((path.name, path.read_text()))
    valid = []
    for name, text in out:
        try:
            hx.loom.parse(text)  # templates with placeholders stay out
            valid.append((name, text))
        except hx.loom.LoomError:
            pass
    return valid


def mutate(source, choose):
    """`source` after 1 to 4 mutations; ``choose(n)`` picks an int in [0, n). Returns (text, cheap):
    `cheap` is False when a mutation could make the program run long (a big number, a deep nest)."""
    lines = source.split("\n")
    cheap = True
    for _ in range(1 + choose(3)):
        # Numbers are replaced three times as often as anything else: most other edits end at the
        # parser, and the size checks are past it.
        kind = [0, 1, 2, 3, 4, 5, 5, 5, 6, 7][choose(10)]
        i, j = choose(len(lines)), choose(len(lines))
        if kind == 0:
            del lines[i]
        elif kind == 1:
            lines.insert(i, lines[i])
        elif kind == 2:
            lines[i], lines[j] = lines[j], lines[i]
        elif kind in (3, 4):
            toks = lines[i].split(" ")
            a, b = choose(len(toks)), choose(len(toks))
            if kind == 3:
                del toks[a]
            else:
                toks[a], toks[b] = toks[b], toks[a]
            lines[i] = " ".join(toks)
        elif kind == 5:
            # Replace one number of the program (counted across all lines) by a hostile one.
            spots = [(k, m) for k, line in enumerate(lines) for m in NUMBER.finditer(line)]
            if spots:
                k, m = spots[choose(len(spots))]
                value = HOSTILE[choose(len(HOSTILE))]
                # A while loop's exit test may never hold with another constant (as on hardware).
                cheap &= abs(value) <= 4096 and "scf.while" not in source
                lines[k] = lines[k][:m.start()] + str(value) + lines[k][m.end():]
        elif kind == 6:
            # Nest line i in `depth` scf.if regions on an i1 constant defined just before.
            depth = [1, 2, 255, 256, 257, 1000, 20000][choose(7)]
            cheap &= depth <= 2
            lines[i:i + 1] = (["%fz_c = scalar.constant 1 : i1"] + ["scf.if %fz_c {"] * depth + [lines[i]] +
                              ["}"] * depth)
        else:
            # Duplicate a token in place (a doubled operand, type or keyword).
            toks = lines[i].split(" ")
            a = choose(len(toks))
            toks.insert(a, toks[a])
            lines[i] = " ".join(toks)
    return "\n".join(lines), cheap


def _le(value, length, kind):
    if kind in ("f32", "bf16", "f16", "f64"):
        fmt = {2: "<e", 4: "<f", 8: "<d"}[length]
        return struct.pack(fmt, 1.5)[:length] if kind != "bf16" else struct.pack("<f", 1.5)[2:]
    return int(value).to_bytes(length, "little", signed=True)


def check_source(text, cheap, checked=False):
    """Runs `text` through every step for each root it still has; raises AssertionError for any
    outcome but success or the documented error of the step. Returns the outcomes (for counts)."""
    import hrxarray as hx
    from hrxarray import _core

    outcomes = []
    try:
        hx.loom.parse(text)
    except hx.loom.LoomError:
        return ["parse: LoomError"]
    config = {}
    defined = set(re.findall(r"\bconfig\.def\s+@([\w.$-]+)", text))
    for key in CONFIG_KEY.findall(text):
        if key not in defined:
            config[key] = "2"
    for kind, symbol in ROOT.findall(text):
        target = GPU if kind == "kernel" else NPU
        try:
            art = hx.loom.compile(text, symbol, target="gfx1151" if kind == "kernel" else "xdna", config=config)
        except hx.loom.LoomError:
            outcomes.append("compile: LoomError")
            continue
        except ValueError as e:
            # A mutated symbol or key that is not a valid name is refused as a plain ValueError.
            assert "invalid Loom export or configuration key" in str(e), f"compile: {type(e).__name__}: {e}"
            outcomes.append("compile: ValueError")
            continue
        try:
            info = _core.loom._plan_info(text, symbol, target, config, bytes(256))
        except hx.loom.LoomError:
            raise AssertionError("plan failed after compile succeeded") from None
        except ValueError as e:
            assert type(e) is ValueError and "footprints(" in str(e), f"plan: {type(e).__name__}: {e}"
            outcomes.append("footprints: ValueError")
            continue
        constants = bytearray(info["constant_byte_length"])
        for name, is_buffer, ty, off, length, _align in info["device_params"]:
            if not is_buffer and length:
                constants[off:off + length] = _le(3, length, ty)
        workload = [3] * len(info["workload_params"])
        if info["gpu"]:
            try:
                lc = art.launch_config(*workload)
            except ValueError as e:
                assert not isinstance(e, hx.loom.LoomError), f"launch_config: {e}"
                outcomes.append("launch: ValueError")
                continue
            except TypeError:
                # a workload parameter of a type launch_config does not take from an int
                outcomes.append("launch: TypeError")
                continue
            items = int(np.prod(lc.workgroups)) * int(np.prod(lc.workgroup_size))
            if not cheap or items > 4096:
                outcomes.append("planned")
                continue
        elif not cheap:
            outcomes.append("planned")
            continue
        bindings = [np.zeros(4096, np.uint8) for p in info["device_params"] if p[1]]
        try:
            _core.loom._run_program(text, symbol, target, config, bindings, bytes(constants), workload or None,
                                    checked, [])
            outcomes.append("ran")
        except hx.ExecutionError:
            outcomes.append("run: ExecutionError")
        except ValueError as e:
            assert not isinstance(e, hx.loom.LoomError), f"run: LoomError after planning: {e}"
            outcomes.append("run: ValueError")
    return outcomes


def fuzz():
    """The Hypothesis search (run in a child process by the test below, or by a campaign)."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    seeds = seed_sources()
    last = os.environ.get("LOOM_FUZZ_LAST")
    examples = os.environ.get("LOOM_FUZZ_EXAMPLES")
    extra = {"max_examples": int(examples)} if examples else {}

    @settings(deadline=None, suppress_health_check=list(HealthCheck), database=None, **extra)
    @given(st.data())
    def one(data):
        name, source = seeds[data.draw(st.integers(0, len(seeds) - 1), label="seed")]
        text, cheap = mutate(source, lambda n: data.draw(st.integers(0, max(n - 1, 0))))
        checked = data.draw(st.booleans(), label="checked")
        if last:
            pathlib.Path(last).write_text(f"// seed {name}, checked={checked}\n{text}")
        check_source(text, cheap, checked)

    one()


def test_mutated_sources_fail_only_with_documented_errors(tmp_path):
    last = tmp_path / "last.loom"
    env = dict(os.environ, LOOM_FUZZ_LAST=str(last), PYTHONPATH=os.pathsep.join([str(HERE)] + sys.path))
    code = "import conftest, test_loom_fuzz as f; f.fuzz()"
    r = run_killable([sys.executable, "-c", code], 900, "the Loom fuzz child", env=env, cwd=str(HERE))
    source = last.read_text() if last.exists() else "(none)"
    assert r.returncode == 0, f"exit {r.returncode}; last source:\n{source}\nstderr:\n{r.stderr[-6000:]}"


def test_mutations_reach_every_step():
    # The mutations are not all refused by the parser: over fixed choices, some programs still
    # compile and run, some are refused at each later step.
    import random

    rng = random.Random(7)
    seen = set()
    for name, source in seed_sources():
        for _ in range(10):
            text, cheap = mutate(source, rng.randrange)
            seen.update(o.split(":")[0] for o in check_source(text, cheap))
    assert {"parse", "ran"} <= seen and seen & {"compile", "footprints", "launch", "run"}, seen
