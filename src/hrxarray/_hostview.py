"""Host views of mapped buffers that refuse use after their guard is released.

A host mapping guard hands out a NumPy ``uint8`` array over the buffer's bytes.
NumPy cannot revoke an array, so the view is an ``ndarray`` subclass that checks
its guard on every Python-level access (indexing, assignment, ufuncs, array
functions, every ndarray method and ``.flat``) and raises ``ValueError`` once
the guard is gone, the way a closed file does. Results that share the view's
memory stay bound to the guard; fresh arrays (copies) are plain ndarrays that
outlive it.

What cannot be intercepted: ``np.asarray(view)`` / ``np.array(view)`` and the
C buffer protocol (``memoryview(view)``) take the bytes without calling into
Python. The pages stay alive as long as any array refers to them, so even
those never touch freed memory, but they are not checked: convert inside the
``with`` block.
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

    def _hx_plain(self):
        return np.ndarray.view(self, np.ndarray)

    def _hx_rebind(self, result):
        # Results sharing the mapped bytes stay bound to the guard; fresh
        # arrays (copies, reductions) own their bytes and outlive it.
        if isinstance(result, np.ndarray):
            # Compare plain views: on HostViews this call would dispatch back here.
            shares = np.may_share_memory(np.ndarray.view(result, np.ndarray), self._hx_plain())
            if shares and type(result) is np.ndarray:
                result = np.ndarray.view(result, HostView)
                result._hx_mapping = self._hx_mapping
            elif not shares and isinstance(result, HostView):
                result = np.ndarray.view(result, np.ndarray)
        return result

    _hx_detach = _hx_rebind

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
                return x._hx_plain()
            return x

        inputs = tuple(plain(x) for x in inputs)
        if "out" in kwargs:
            kwargs["out"] = tuple(plain(x) for x in kwargs["out"])
        return self._hx_rebind(getattr(ufunc, method)(*inputs, **kwargs))

    def __array_function__(self, func, types, args, kwargs):
        def plain(x):
            if isinstance(x, HostView):
                x._hx_check()
                return x._hx_plain()
            if isinstance(x, (list, tuple)):
                return type(x)(plain(y) for y in x)
            return x

        return self._hx_rebind(func(*plain(args), **{k: plain(v) for k, v in kwargs.items()}))

    def __array__(self, dtype=None, copy=None):
        self._hx_check()
        base = self._hx_plain()
        if dtype is not None and base.dtype != dtype:
            return base.astype(dtype)
        return base.copy() if copy else base

    def __iter__(self):
        self._hx_check()
        return iter(self._hx_plain())

    def __len__(self):
        self._hx_check()
        return super().__len__()

    def __repr__(self):
        mapping = self._hx_mapping
        if mapping is not None and not mapping.active:
            return "HostView(<released>)"
        return repr(self._hx_plain()).replace("array(", "HostView(", 1)

    __str__ = __repr__

    def tobytes(self, order="C"):
        """Bytes of the view (raises once the guard is released)."""
        self._hx_check()
        return self._hx_plain().tobytes(order)

    def tolist(self):
        """The view as nested lists (raises once the guard is released)."""
        self._hx_check()
        return self._hx_plain().tolist()

    def item(self, *args):
        """One element as a Python scalar (raises once the guard is released)."""
        self._hx_check()
        return self._hx_plain().item(*args)

    def copy(self, order="C"):
        """A plain NumPy copy that outlives the guard."""
        self._hx_check()
        return self._hx_plain().copy(order)

    def fill(self, value):
        """Fill the view (raises once the guard is released)."""
        self._hx_check()
        self._hx_plain().fill(value)


    def view(self, *args, **kwargs):
        """ndarray.view (refused once the guard is released); the view type asked for is kept."""
        self._hx_check()
        return np.ndarray.view(self, *args, **kwargs)

    @property
    def flat(self):
        """A flat iterator over the view (checked when obtained)."""
        self._hx_check()
        return self._hx_plain().flat

    @flat.setter
    def flat(self, value):
        self._hx_check()
        self._hx_plain().flat = value


def _checked_method(name):
    base = getattr(np.ndarray, name)

    def method(self, *args, **kwargs):
        self._hx_check()
        return self._hx_rebind(base(self._hx_plain(), *args, **kwargs))

    method.__name__ = name
    method.__qualname__ = f"HostView.{name}"
    method.__doc__ = f"ndarray.{name}, refused once the guard is released."
    return method


# Every other ndarray method goes through the guard check too (argmax, astype,
# put, sort, view, ...); the ones defined above keep their own handling.
for _name in [*dir(np.ndarray), "__copy__", "__deepcopy__"]:
    if (_name.startswith("_") and _name not in ("__copy__", "__deepcopy__")) or _name in HostView.__dict__:
        continue
    if callable(getattr(np.ndarray, _name, None)):
        setattr(HostView, _name, _checked_method(_name))
del _name


def make_view(mapping):
    """Wrap a HostMapping's array in a HostView bound to the mapping's guard."""
    view = mapping._raw_array().view(HostView)
    view._hx_mapping = mapping
    return view
