"""Host views of mapped buffers that refuse use after their guard is released.

A host mapping guard hands out a NumPy ``uint8`` array over the buffer's bytes.
NumPy cannot revoke an array, so the view is an ``ndarray`` subclass that checks
its guard on every Python-level access (indexing, assignment, ufuncs, array
functions, conversions) and raises ``ValueError`` once the guard is gone, the
way a closed file does. The pages themselves stay alive as long as any array
refers to them, so even access that bypasses the checks (the C buffer
protocol) never touches freed memory.
"""

from __future__ import annotations

import numpy as np

__all__ = ["HostView", "make_view"]


class HostView(np.ndarray):
    """A NumPy view of mapped buffer bytes, valid while its guard is active."""

    _hx_mapping = None

    def __array_finalize__(self, obj):
        self._hx_mapping = getattr(obj, "_hx_mapping", None)

    def _hx_check(self):
        mapping = self._hx_mapping
        if mapping is not None and not mapping.active:
            raise ValueError(
                f"host view used after its guard was released ({mapping!r}); "
                "keep using it inside the `with buf.map_read()/map_write()` block"
            )

    def _hx_detach(self, result):
        # Fresh arrays (copies, reductions) own their bytes: they outlive the guard.
        if isinstance(result, HostView) and not np.may_share_memory(result, self):
            return result.view(np.ndarray)
        return result

    def __getitem__(self, key):
        self._hx_check()
        return self._hx_detach(super().__getitem__(key))

    def __setitem__(self, key, value):
        self._hx_check()
        super().__setitem__(key, value)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        def plain(x):
            if isinstance(x, HostView):
                x._hx_check()
                return x.view(np.ndarray)
            return x

        inputs = tuple(plain(x) for x in inputs)
        if "out" in kwargs:
            kwargs["out"] = tuple(plain(x) for x in kwargs["out"])
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        def plain(x):
            if isinstance(x, HostView):
                x._hx_check()
                return x.view(np.ndarray)
            if isinstance(x, (list, tuple)):
                return type(x)(plain(y) for y in x)
            return x

        return func(*plain(args), **{k: plain(v) for k, v in kwargs.items()})

    def __array__(self, dtype=None, copy=None):
        self._hx_check()
        base = self.view(np.ndarray)
        if dtype is not None and base.dtype != dtype:
            return base.astype(dtype)
        return base.copy() if copy else base

    def __iter__(self):
        self._hx_check()
        return iter(self.view(np.ndarray))

    def __len__(self):
        self._hx_check()
        return super().__len__()

    def __repr__(self):
        mapping = self._hx_mapping
        if mapping is not None and not mapping.active:
            return "HostView(<released>)"
        return repr(self.view(np.ndarray)).replace("array(", "HostView(", 1)

    __str__ = __repr__

    def tobytes(self, order="C"):
        """Bytes of the view (raises once the guard is released)."""
        self._hx_check()
        return self.view(np.ndarray).tobytes(order)

    def tolist(self):
        """The view as nested lists (raises once the guard is released)."""
        self._hx_check()
        return self.view(np.ndarray).tolist()

    def item(self, *args):
        """One element as a Python scalar (raises once the guard is released)."""
        self._hx_check()
        return self.view(np.ndarray).item(*args)

    def copy(self, order="C"):
        """A plain NumPy copy that outlives the guard."""
        self._hx_check()
        return self.view(np.ndarray).copy(order)

    def fill(self, value):
        """Fill the view (raises once the guard is released)."""
        self._hx_check()
        self.view(np.ndarray).fill(value)


def make_view(mapping):
    """Wrap a HostMapping's array in a HostView bound to the mapping's guard."""
    view = mapping._raw_array().view(HostView)
    view._hx_mapping = mapping
    return view
