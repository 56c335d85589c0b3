"""Linear algebra at the top level of the namespace: matrix_transpose, tensordot, vecdot, NumPy's dot, einsum.

Every contraction is lowered to ``hx.matmul`` over permuted and reshaped
operands (views where the layout allows, one compute-lane copy where it does
not), so it runs where matmul runs and with matmul's numerics: bfloat16
operands multiply exactly and accumulate in float32, giving float32, as
``hx.matmul`` does. Diagonals (a repeated einsum index) are strided views;
sums over an index only one operand has are ``hx.sum`` in the operand's dtype.

``hx.linalg`` exposes matrix_transpose, tensordot and vecdot under the same names.
"""

from __future__ import annotations

import builtins
import math
import operator
from typing import Any, Sequence

import numpy as np

from . import _array, _core, _manipulation, _statistical
from ._array import DeviceArray, _axes, _device, _dtype, _permute, bfp16

__all__ = ["matmul", "matrix_transpose", "tensordot", "vecdot", "dot", "einsum"]


def _U(name: str):
    return _array._U[name]


def matrix_transpose(x: DeviceArray, /) -> DeviceArray:
    """A view of ``x`` with its last two axes swapped (ValueError for fewer than two dimensions)."""
    op = "matrix_transpose"
    x = _device(x, op)
    if x.ndim < 2:
        raise ValueError(f"{op}: x must have at least 2 dimensions, got shape {x.shape}")
    return _permute(x, tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2), op)


def _common(a: DeviceArray, b: DeviceArray, op: str) -> tuple[DeviceArray, DeviceArray]:
    for x in (a, b):
        if x.dtype is bfp16:
            raise TypeError(f"{op}: bfp16 operands are for hx.matmul(compute='bfp16'); convert with astype first")
    return a, b


def _contract(a: DeviceArray, b: DeviceArray, a_axes: list[int], b_axes: list[int], op: str) -> DeviceArray:
    """sum over paired axes of a and b; the result has a's free axes, then b's (tensordot's layout)."""
    for i, j in zip(a_axes, b_axes):
        if a.shape[i] != b.shape[j]:
            raise ValueError(f"{op}: shape mismatch for sum: axis {i} of x1 {a.shape} has size {a.shape[i]}, "
                             f"axis {j} of x2 {b.shape} has size {b.shape[j]}")
    free_a = [i for i in range(a.ndim) if i not in a_axes]
    free_b = [j for j in range(b.ndim) if j not in b_axes]
    m = math.prod(a.shape[i] for i in free_a)
    k = math.prod(a.shape[i] for i in a_axes)
    n = math.prod(b.shape[j] for j in free_b)
    am = _permute(a, tuple(free_a + a_axes), op).reshape(m, k)
    bm = _permute(b, tuple(b_axes + free_b), op).reshape(k, n)
    out = matmul(am, bm)
    return out.reshape(tuple(a.shape[i] for i in free_a) + tuple(b.shape[j] for j in free_b))


def _axis_pairs(axes: Any, a: DeviceArray, b: DeviceArray, op: str) -> tuple[list[int], list[int]]:
    if isinstance(axes, (int, np.integer)) and not isinstance(axes, (bool, np.bool_)):
        n = operator.index(axes)
        if n < 0 or n > a.ndim or n > b.ndim:
            raise ValueError(f"{op}: axes={n} must be a non-negative integer no larger than either operand's "
                             f"number of dimensions ({a.ndim} and {b.ndim})")
        return list(range(a.ndim - n, a.ndim)), list(range(n))
    try:
        xa, xb = axes
    except (TypeError, ValueError):
        raise TypeError(f"{op}: axes must be an integer or a pair of axis sequences, got {axes!r}") from None
    xa = (xa,) if isinstance(xa, (int, np.integer)) else tuple(xa)
    xb = (xb,) if isinstance(xb, (int, np.integer)) else tuple(xb)
    if len(xa) != len(xb):
        raise ValueError(f"{op}: axes {axes!r} pair {len(xa)} axes of x1 with {len(xb)} of x2")
    return list(_axes(xa, a.ndim, op)), list(_axes(xb, b.ndim, op))


def tensordot(x1: DeviceArray, x2: DeviceArray, /, axes: int | tuple[Sequence[int], Sequence[int]] = 2) -> DeviceArray:
    """Sum of products over ``axes`` (the last ``axes`` of x1 with the first of x2, or explicit pairs).

    ``axes`` may be given by position, as NumPy's ``tensordot(a, b, 1)``.

    The result has x1's remaining axes followed by x2's, and matmul's dtype.
    """
    op = "tensordot"
    a, b = _common(_device(x1, op), _device(x2, op, x1), op)
    ia, ib = _axis_pairs(axes, a, b, op)
    return _contract(a, b, ia, ib, op)


def vecdot(x1: DeviceArray, x2: DeviceArray, /, *, axis: int = -1) -> DeviceArray:
    """The dot product of vectors along ``axis`` (x1 conjugated when complex), broadcasting the other axes.

    The contracted axis must have the same size in both (no broadcasting along
    it); the result has the promoted dtype of x1 and x2.
    """
    op = "vecdot"
    a, b = _common(_device(x1, op), _device(x2, op, x1), op)
    from ._manipulation import _broadcast_shapes, moveaxis

    nd = builtins.max(a.ndim, b.ndim)
    if not builtins.min(a.ndim, b.ndim):
        raise ValueError(f"{op}: x1 and x2 must have at least one dimension, got shapes {a.shape} and {b.shape}")
    (ax,) = _axes(axis, nd, op)
    neg = ax - nd
    if -neg > builtins.min(a.ndim, b.ndim) or a.shape[neg] != b.shape[neg]:
        raise ValueError(f"{op}: x1 {a.shape} and x2 {b.shape} must have the same size along axis {axis}")
    _broadcast_shapes([a.shape, b.shape], op)
    if a.dtype.kind == "c":
        a = _U("conjugate")(a)
    prod = _U("multiply")(moveaxis(a, neg, -1), moveaxis(b, neg, -1))
    return _statistical.sum(prod, axis=-1, dtype=prod.dtype)


def dot(a: DeviceArray, b: DeviceArray, out: DeviceArray | None = None) -> DeviceArray:
    """NumPy's ``dot``: a product for 0-d operands, the inner product of vectors, matmul of matrices, and
    for N-d operands the sum over a's last axis and b's second-to-last."""
    op = "dot"
    x, y = _common(_device(a, op), _device(b, op, a), op)
    if x.ndim == 0 or y.ndim == 0:
        res = _U("multiply")(x, y)
    else:
        res = _contract(x, y, [x.ndim - 1], [builtins.max(y.ndim - 2, 0)], op)
    if out is None:
        return res
    if not isinstance(out, DeviceArray):
        raise TypeError(f"{op}: out must be a DeviceArray, got {type(out).__name__}")
    if out.shape != res.shape or out.dtype != res.dtype:
        raise ValueError(f"{op}: out must have shape {res.shape} and dtype {res.dtype}, got {out.shape} "
                         f"{out.dtype}")
    out._copy_from(res, False, op)
    return out


# --- einsum --------------------------------------------------------------------------------------


def _parse_term(term: str, ndim: int, ell: int, op: str, which: str) -> list:
    """A term's labels, ``...`` expanded to ("...", i) labels aligned to the right over ``ell`` ellipsis axes."""
    if term.count("...") > 1 or term.replace("...", "").count(".") or term.count("...") == 0 and "." in term:
        raise ValueError(f"{op}: invalid ellipsis in {which} {term!r}")
    head, dots, tail = term.partition("...")
    for c in head + tail:
        if not c.isalpha() or not c.isascii():
            raise ValueError(f"{op}: invalid subscript {c!r} in {which} {term!r} (letters a-z and A-Z only)")
    if not dots:
        if len(term) != ndim:
            raise ValueError(f"{op}: {which} {term!r} has {len(term)} subscripts for an operand of {ndim} "
                             "dimensions")
        return list(term)
    n = ndim - len(head) - len(tail)
    if n < 0:
        raise ValueError(f"{op}: {which} {term!r} has more subscripts than the operand's {ndim} dimensions")
    return list(head) + [("...", i) for i in range(ell - n, ell)] + list(tail)


def _diagonal(x: DeviceArray, labels: list) -> tuple[DeviceArray, list]:
    """x with repeated labels taken along their diagonal (a strided view), and its unique labels."""
    uniq: list = []
    shape: list[int] = []
    strides: list[int] = []
    for lab, n, s in zip(labels, x.shape, x.strides):
        if lab in uniq:  # sizes already checked equal (_einsum_sizes)
            strides[uniq.index(lab)] += s
            continue
        uniq.append(lab)
        shape.append(n)
        strides.append(s)
    if len(uniq) == len(labels):
        return x, labels
    return x._view(x._offset, tuple(shape), tuple(strides)), uniq


def _sum_labels(x: DeviceArray, labels: list, drop: set) -> tuple[DeviceArray, list]:
    axes = tuple(i for i, lab in enumerate(labels) if lab in drop)
    if not axes:
        return x, labels
    return _statistical.sum(x, axis=axes, dtype=x.dtype), [lab for lab in labels if lab not in drop]


def _pair(a: DeviceArray, la: list, b: DeviceArray, lb: list, keep: set, op: str) -> tuple[DeviceArray, list]:
    """The contraction of a and b over their shared labels not in ``keep``, as one batched matmul."""
    a, la = _sum_labels(a, la, set(la) - set(lb) - keep)
    b, lb = _sum_labels(b, lb, set(lb) - set(la) - keep)
    batch = [lab for lab in la if lab in lb and lab in keep]
    summed = [lab for lab in la if lab in lb and lab not in keep]
    only_a = [lab for lab in la if lab not in lb]
    only_b = [lab for lab in lb if lab not in la]
    size = dict(zip(la, a.shape))
    size.update(zip(lb, b.shape))

    def prod(labels: list) -> int:
        return math.prod(size[lab] for lab in labels)

    am = _permute(a, tuple(la.index(lab) for lab in batch + only_a + summed), op)
    bm = _permute(b, tuple(lb.index(lab) for lab in batch + summed + only_b), op)
    am = am.reshape(prod(batch), prod(only_a), prod(summed))
    bm = bm.reshape(prod(batch), prod(summed), prod(only_b))
    if summed:
        out = matmul(am, bm)
    else:
        # Nothing to sum (elementwise and outer products): the k = 1 matmul is a broadcast
        # multiply, far cheaper than many tiny matrices; bfloat16 products are taken in float32,
        # exact, as matmul takes them.
        if am.dtype.name == "bfloat16":
            am, bm = am.astype(np.float32), bm.astype(np.float32)
        out = _U("multiply")(am, bm)
    labels = batch + only_a + only_b
    return out.reshape(tuple(size[lab] for lab in labels)), labels


def _greedy_order(terms: list, keep_out: set) -> list[tuple[int, int]]:
    """Pairs to contract (indices into a shrinking list), smallest intermediate result first."""
    labels = [set(lab for lab in t[1]) for t in terms]
    sizes: dict = {}
    for x, lab in terms:
        sizes.update(zip(lab, x.shape))
    order = []
    while len(labels) > 1:
        best = None
        for i in range(len(labels)):
            for j in range(i + 1, len(labels)):
                rest = set().union(*(labels[k] for k in range(len(labels)) if k not in (i, j))) | keep_out
                kept = (labels[i] | labels[j]) & rest
                cost = math.prod(sizes[lab] for lab in kept)
                if best is None or cost < best[0]:
                    best = (cost, i, j, kept)
        _, i, j, kept = best
        order.append((i, j))
        labels = [labels[k] for k in range(len(labels)) if k not in (i, j)] + [kept]
    return order


def einsum(subscripts: str | Any, *operands: Any, out: DeviceArray | None = None, dtype: Any = None,
           casting: str = "safe", optimize: bool | str = False) -> DeviceArray:
    """Einstein summation (NumPy's ``einsum``): explicit (``"ij,jk->ik"``) and implicit output,
    ``...`` broadcasting, repeated subscripts (diagonals) and sums.

    NumPy's sublist form is accepted too: ``einsum(a, [0, 1], b, [1, 2], [0, 2])``
    (subscripts 0-51 and ``...``; the last sublist, when the count is odd, is the
    output). Operands are converted to their common dtype first, or to
    ``dtype`` when given (each cast allowed by ``casting``, NumPy's rule names,
    "safe" by default). Contractions run as batched ``hx.matmul`` calls over
    permuted and reshaped operands, pairwise: left to right, or smallest
    intermediate first when ``optimize`` is true or ``"greedy"``/``"optimal"``
    (both the greedy order here). The result's dtype is matmul's for
    contractions (float32 for bfloat16), the operands' for pure sums,
    transposes and diagonals (views where NumPy gives views). With ``out`` (a
    DeviceArray of the result's shape, the result castable to it under
    ``casting``) the result is written there and ``out`` returned.
    """
    op = "einsum"
    if optimize not in (False, True, "greedy", "optimal"):
        raise ValueError(f"{op}: optimize must be False, True, 'greedy' or 'optimal', got {optimize!r}")
    if casting not in _CASTINGS:
        raise ValueError(f"{op}: casting must be one of {', '.join(map(repr, _CASTINGS))}, got {casting!r}")
    if out is not None and not isinstance(out, DeviceArray):
        raise TypeError(f"{op}: out must be a DeviceArray, got {type(out).__name__}")
    if not isinstance(subscripts, str):
        subscripts, operands = _sublists(subscripts, operands, op)
    dt = _dtype(dtype, op)
    xs = [_device(x, op, operands[0]) for x in operands]
    for x in xs:
        if x.dtype is bfp16:
            raise TypeError(f"{op}: bfp16 operands are for hx.matmul(compute='bfp16'); convert with astype first")
    labels, out_labels = _einsum_labels(subscripts, xs, op)
    size = _einsum_sizes(xs, labels, op)
    if dt is not None:
        for i, x in enumerate(xs):
            _check_cast(x.dtype, dt, casting, op, f"operand {i}")
    if out is not None and out.shape != tuple(size[lab] for lab in out_labels):
        raise ValueError(f"{op}: out has shape {out.shape}, the result has "
                         f"{tuple(size[lab] for lab in out_labels)}")
    # Every check has passed: only now does anything run (a refused call changes nothing).
    from ._data_types import result_type

    common = result_type(*xs) if dt is None else dt
    work = []
    for x, ls in zip(xs, labels):
        x, ls = _diagonal(x if x.dtype == common else x.astype(common), ls)
        drop = [i for i, lab in enumerate(ls) if x.shape[i] == 1 and size[lab] != 1]
        if drop:
            x = _manipulation.squeeze(x, tuple(drop))
            ls = [lab for i, lab in enumerate(ls) if i not in drop]
        work.append((x, ls))
    keep_out = set(out_labels)
    if len(work) > 1:
        pairs = _greedy_order(work, keep_out) if optimize else [(0, 1)] * (len(work) - 1)
        for i, j in pairs:
            (a, la), (b, lb) = work[i], work[j]
            rest = [w for k, w in enumerate(work) if k not in (i, j)]
            keep = keep_out.union(*(set(ls) for _, ls in rest))
            done = _pair(a, la, b, lb, keep, op)
            # Left to right keeps the result first, where the next pair (0, 1) finds it;
            # the greedy order's indices count it last.
            work = rest + [done] if optimize else [done] + rest
    x, ls = work[0]
    x, ls = _sum_labels(x, ls, set(ls) - keep_out)
    for lab in out_labels:
        if lab not in ls:  # every operand had size 1 there: reinstate the axis
            x = _manipulation.expand_dims(x, x.ndim)
            ls = ls + [lab]
    perm = tuple(ls.index(lab) for lab in out_labels)
    if perm != tuple(range(len(perm))) or builtins.any(x is y for y in xs):
        x = _permute(x, perm, op)  # a view, never an operand itself (NumPy returns a view)
    if out is None:
        return x
    _check_cast(x.dtype, out.dtype, casting, op, "the result")
    out._copy_from(x, False, op)  # reads everything before writing when out overlaps an operand
    return out


_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def _check_cast(src: Any, dst: Any, casting: str, op: str, what: str) -> None:
    """TypeError naming ``op`` unless ``src`` casts to ``dst`` under NumPy's ``casting`` rule."""
    if not _core._elementwise.can_cast(src.name, dst.name, casting):
        raise TypeError(f"{op}: cannot cast {what} from {src} to {dst} according to the rule {casting!r}")


def _sublists(first: Any, rest: tuple, op: str) -> tuple[str, tuple]:
    """NumPy's sublist form (op0, sublist0, op1, sublist1, ..., [output sublist]) as a subscripts string
    and the operands; subscript k is the k-th of A-Z, a-z (so implicit output follows k's order)."""
    args = (first, *rest)
    output = args[-1] if len(args) % 2 else None
    pairs = args[:-1] if len(args) % 2 else args

    def term(sub: Any, which: str) -> str:
        try:
            items = list(sub)
        except TypeError:
            raise TypeError(f"{op}: {which} must be a list of subscripts (integers and ...), got {sub!r}") from None
        chars = []
        for item in items:
            if item is Ellipsis:
                chars.append("...")
                continue
            if isinstance(item, (bool, np.bool_)):
                raise TypeError(f"{op}: {which} holds {item!r}; subscripts are integers in [0, 52) or ...")
            try:
                k = operator.index(item)
            except TypeError:
                raise TypeError(f"{op}: {which} holds {item!r}; subscripts are integers in [0, 52) or ...") from None
            if not 0 <= k < 52:
                raise ValueError(f"{op}: subscript {k} in {which} is not within the valid range [0, 52)")
            chars.append(chr(ord("A") + k) if k < 26 else chr(ord("a") + k - 26))
        return "".join(chars)

    terms = [term(sub, f"sublist {i}") for i, sub in enumerate(pairs[1::2])]
    subscripts = ",".join(terms) + ("" if output is None else "->" + term(output, "the output sublist"))
    return subscripts, tuple(pairs[0::2])


def _einsum_labels(subscripts: Any, xs: list, op: str) -> tuple[list, list]:
    """Each operand's labels and the output's (Note: ``...`` axes are ("...", i) labels), checked."""
    if not xs:
        raise ValueError(f"{op}: at least one operand is needed")
    lhs, arrow, rhs = subscripts.replace(" ", "").partition("->")
    if "-" in lhs + rhs or ">" in lhs + rhs:
        raise ValueError(f"{op}: invalid subscripts {subscripts!r}")
    terms = lhs.split(",")
    if len(terms) != len(xs):
        raise ValueError(f"{op}: {len(terms)} operand terms in {subscripts!r} for {len(xs)} operands")
    ell = builtins.max((x.ndim - len(t.replace("...", "")) for x, t in zip(xs, terms) if "..." in t), default=0)
    labels = [_parse_term(t, x.ndim, ell, op, f"term {i}") for i, (t, x) in enumerate(zip(terms, xs))]
    if not arrow:
        # Implicit output: the broadcast axes, then the letters used once, in ASCII order.
        counts: dict = {}
        for lab in (lab for ls in labels for lab in ls if not isinstance(lab, tuple)):
            counts[lab] = counts.get(lab, 0) + 1
        return labels, [("...", i) for i in range(ell)] + sorted(lab for lab, c in counts.items() if c == 1)
    if ell and "..." not in rhs:
        raise ValueError(f"{op}: output subscripts {rhs!r} must contain '...' when an input has broadcast "
                         "dimensions")
    out = _parse_term(rhs, len(rhs.replace("...", "")) + (ell if "..." in rhs else 0), ell, op, "output")
    twice = [lab for lab in out if out.count(lab) > 1]
    if twice:
        raise ValueError(f"{op}: output subscript {twice[0]!r} appears more than once in {rhs!r}")
    every = set().union(*map(set, labels))
    for lab in out:
        if lab not in every:
            raise ValueError(f"{op}: output subscript {lab!r} does not appear in the input terms")
    return labels, out


def _einsum_sizes(xs: list, labels: list, op: str) -> dict:
    """Each label's size: equal in every operand, or 1 (broadcast; the axis is dropped from that operand)."""
    size: dict = {}
    for i, (x, ls) in enumerate(zip(xs, labels)):
        own: dict = {}
        for lab, n in zip(ls, x.shape):
            if own.setdefault(lab, n) != n:
                raise ValueError(f"{op}: subscript {lab!r} is repeated in operand {i} with sizes {own[lab]} and {n}")
            have = size.setdefault(lab, n)
            if have == 1:
                size[lab] = n
            elif n not in (1, have):
                raise ValueError(f"{op}: subscript {lab!r} has size {n} in operand {i} but {have} before it")
    return size


# --- NumPy's spellings and DeviceArray methods ----------------------------------------------


def _np_tensordot(a, b, axes=2):
    return tensordot(a, b, axes=axes)


def _np_vecdot(x1, x2, /, out=None, *, axis=-1, **kwargs):
    if kwargs or out is not None:
        raise TypeError(f"hrxarray's vecdot does not take {sorted(kwargs) or ['out']}")
    return vecdot(x1, x2, axis=axis)


def _np_einsum(*operands, out=None, dtype=None, order="K", casting="safe", optimize=False, **kwargs):
    if kwargs:
        raise TypeError(f"hrxarray's einsum does not take {sorted(kwargs)}")
    if order not in ("K", "A", "C"):  # results are C-contiguous, which those orders allow
        raise ValueError(f"einsum: order={order!r} is not supported (hrxarray's results are C-ordered)")
    return einsum(*operands, out=out, dtype=dtype, casting=casting, optimize=optimize)


@_array._method("dot")
def _dot_method(self, b: object, out: object = None) -> DeviceArray:
    """hrxarray.dot of this array and b."""
    return dot(self, b, out)


_array._ARRAY_FUNCTIONS.update({np.tensordot: _np_tensordot, np.dot: dot, np.einsum: _np_einsum})
if hasattr(np, "matrix_transpose"):
    _array._ARRAY_FUNCTIONS[np.matrix_transpose] = matrix_transpose
_array._NUMPY_GUFUNCS["vecdot"] = _np_vecdot


def matmul(a, b, *, out=None, compute=None, rounding="floor") -> DeviceArray:
    """Matrix product with NumPy's matmul shapes (1-d promotion, batch broadcasting).

    Runs on the NPU lane when both operands are NPU-bindable (``Shared``,
    ``NpuLocal``) and bfloat16 or bfp16, on the GPU compute lane otherwise.
    bfloat16 inputs give float32, with the NPU's numerics (products exact,
    float32 accumulation with k in pairs ``(1, 0), (3, 2), ...``, no denormals).
    ``compute="bf16"`` rounds any inputs to bfloat16 first; ``compute="bfp16"``
    quantises both operands to bfp16ebs8 along K (K a multiple of 8) with
    ``rounding`` ("floor" or "even"), as the NPU's BFP path does (bfp16
    operands imply it). Other dtypes multiply in their own type (NumPy's result
    type; integers wrap).

    Keeping it on the NPU: both operands must be bfloat16 or bfp16 *and*
    NPU-bindable. Anything else leaves the NPU without an error: a float32
    operand (``f32 @ bf16`` promotes to float32, as NumPy does), or a
    ``GpuLocal``/``HostVisible`` one, runs on the GPU compute lane in float32.
    ``compute="bf16"`` does not move it either; convert first
    (``x.astype(hx.bfloat16)``, ``x.to(hx.Shared(npu))``). A trace shows where
    each one ran: between ``rt.start_trace(n)`` and ``rt.finish_trace()``
    every ``"matmul"`` event has its lane (``"npu"`` or ``"compute"``).

    A value that ``compute="bfp16"`` cannot encode (NaN, Inf) fails this
    operation only: its result raises ``ExecutionError`` chained to a
    ``ValueError`` naming the element, and the operands stay usable.
    """
    return _core._matmul(a, b, out, compute, rounding)
