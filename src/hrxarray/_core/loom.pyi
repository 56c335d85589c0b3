"""
The Loom frontend: parse and verify Loom modules (private; use hrxarray.loom).
"""

from collections.abc import Mapping
from typing import overload

import hrxarray._core


class Diagnostic:
    """
    One Loom diagnostic: its code ('PARSE/001'), message, 1-based line and
    column (code points; 0 = unknown) and severity ('error', 'warning', 'note').
    """

    @property
    def code(self) -> str:
        """Domain and code, e.g. 'PARSE/001'."""

    @property
    def message(self) -> str:
        """The message text."""

    @property
    def line(self) -> int:
        """1-based line; 0 when unknown."""

    @property
    def column(self) -> int:
        """1-based column in code points; 0 when unknown."""

    @property
    def severity(self) -> str:
        """'error', 'warning' or 'note'."""

    def __repr__(self) -> str: ...

class Module:
    """A parsed and verified Loom module."""

    @property
    def symbols(self) -> dict:
        """
        dict of every top-level symbol (without '@') to its kind: 'kernel', 'pipeline',
        'func', 'config', 'target', 'template', 'low' or 'check' (check.case/benchmark).
        """

    @property
    def digest(self) -> str:
        """Hex SHA-256 of the UTF-8 source."""

    @property
    def warnings(self) -> list[Diagnostic]:
        """Warning diagnostics (a list)."""

    @property
    def checks(self) -> list:
        """
        The module's check.case and check.benchmark ops as plain data (a list of dicts:
        kind, name, line, case (a benchmark's), attrs, ops (name, line, callee, params,
        operands, results (value names), operand_types, result_types, attrs, indices));
        hrxarray.loom.check() runs them.
        """

    def specialize(self, symbol: str, target: str = 'gfx1151', config: Mapping[str, str] = {}) -> dict:
        """
        Bind root `symbol` for `target` ('gfx1151' or the NPU target) with `config`
        (key -> Loom spelling). Returns dict(symbol, root, target, subgroup_size,
        index_bits, offset_bits, config (reachable keys -> int/float), canonical_config,
        templates ('line:col' of each reachable template.apply -> chosen symbol)).
        Raises LoomError, or ValueError for an invalid symbol or key.
        """

@overload
def parse(source: str) -> Module:
    """
    Tokenise, parse and verify Loom `source` (str). Returns a Module; raises
    LoomError (a ValueError) carrying every diagnostic when the source is invalid.
    """

@overload
def parse(source: bytes) -> Module:
    """The same for UTF-8 bytes (invalid UTF-8 is PARSE/019)."""

class LoomError(ValueError):
    """
    Invalid Loom source or specialisation (a ValueError). str() is the first error as
    'line:col: message' plus a count of the later ones; .diagnostics lists them all.
    """

class LoomUfunc(hrxarray._core.ufunc):
    """
    An hx.ufunc whose one loop is a Loom GPU kernel (hrxarray.loom.ufunc compiles one from source). LoomUfunc(artifact, nin=None, nout=None): the artifact's workload signature is (%count: index), its device signature (%count: index, scalars..., inputs..., outputs...). Calls take nin operands (broadcast together, NEP 50, cast same_kind to the kernel's element types), out= (an array or a tuple of nout) and every device scalar by name, and run the kernel once over the flattened broadcast shape as one operation on the GPU compute lane.
    """

    def __init__(self, artifact: hrxarray._core.Artifact, nin: int | None = None, nout: int | None = None) -> None:
        """
        Plan `artifact` (a Loom GPU kernel) as a ufunc; nin/nout default to the split at the first written buffer. ValueError naming the kernel when it does not follow the convention.
        """

    def __call__(self, *args: object, **kwargs: object) -> DeviceArray:
        """
        Apply elementwise: f(*inputs, out=None, dtype=None, **scalars) -> DeviceArray (out when given; a tuple when nout > 1). where= other than True is refused (TypeError).
        """

    @property
    def nin(self) -> int:
        """Number of inputs."""

    @property
    def nout(self) -> int:
        """Number of outputs."""

    @property
    def nargs(self) -> int:
        """Inputs plus outputs."""

    @property
    def ntypes(self) -> int:
        """Number of loops (1: the kernel)."""

    @property
    def types(self) -> list:
        """
        The kernel's loop as a NumPy-style type string ('ff->f'; bfloat16 is 'E').
        """

    @property
    def identity(self) -> None:
        """None: a Loom ufunc has no reduction identity."""

    @property
    def scalars(self) -> list[str]:
        """
        The kernel's device scalars (keyword arguments of a call), in signature order.
        """

    def __repr__(self) -> str: ...

class LaunchConfig:
    """
    The result of a GPU kernel's host launch program (loom.md §5.2) for one workload: the grid in workgroups, the workgroup size in work-items, the cluster size ((1, 1, 1) without clustering), the subgroup size (0 when the target has no fixed size) and the workgroup storage bytes.
    """

    @property
    def workgroups(self) -> tuple:
        """Workgroup count (x, y, z): the grid to pass to load_gpu_kernel."""

    @property
    def workgroup_size(self) -> tuple:
        """
        Work-items per workgroup (x, y, z): the block to pass to load_gpu_kernel.
        """

    @property
    def cluster_size(self) -> tuple:
        """Workgroups per cluster (x, y, z)."""

    @property
    def subgroup_size(self) -> int:
        """Work-items per subgroup (0: not fixed by the target)."""

    @property
    def workgroup_storage_bytes(self) -> int:
        """Workgroup (LDS) bytes each workgroup allocates."""

    def __eq__(self, arg: object, /) -> bool: ...

    def __repr__(self) -> str: ...
