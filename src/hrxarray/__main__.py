"""Command line: ``python -m hrxarray <command>``."""

from __future__ import annotations

import sys
from collections.abc import Sequence

USAGE = """\
usage: python -m hrxarray <command> [options]

commands:
  doctor [--json]   report the backend in use, its devices, the CPU kernel
                    path and whether an HRX native bundle was found
"""


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch to a subcommand; print usage to stderr and return 2 without a valid one."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return 0
    if args and args[0] == "doctor":
        from hrxarray import _doctor

        return _doctor.main(args[1:])
    if args:
        sys.stderr.write(f"python -m hrxarray: unknown command {args[0]!r}\n")
    sys.stderr.write(USAGE)
    return 2


if __name__ == "__main__":
    sys.exit(main())
