"""Command line: ``hrxarray <command>`` (the console script) or ``python -m hrxarray <command>``."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

USAGE = """\
usage: {prog} <command> [options]

commands:
  doctor [--json]    report the backend in use, its devices, the CPU kernel
                     path and whether an HRX native bundle was found
  loom-ops [--json]  the Loom op table: which ops compile to native code,
                     which run in the interpreter only, which are refused
  numpy-functions [--json]
                     the NumPy functions that dispatch to DeviceArrays: which
                     run, which are refused (and why), which are not yet
"""


def prog() -> str:
    """How the user invoked us, for the usage text: the console script's name, or ``python -m hrxarray``."""
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return name if name and not name.endswith(".py") and name != "-c" else "python -m hrxarray"


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch to a subcommand; print usage to stderr and return 2 without a valid one."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("-h", "--help"):
        sys.stdout.write(USAGE.format(prog=prog()))
        return 0
    if args and args[0] == "doctor":
        from hrxarray import _doctor

        return _doctor.main(args[1:])
    if args and args[0] == "loom-ops":
        from hrxarray import _loom_table

        return _loom_table.main(args[1:])
    if args and args[0] == "numpy-functions":
        from hrxarray import _numpy_table

        return _numpy_table.main(args[1:])
    if args:
        sys.stderr.write(f"{prog()}: unknown command {args[0]!r}\n")
    sys.stderr.write(USAGE.format(prog=prog()))
    return 2


if __name__ == "__main__":
    sys.exit(main())
