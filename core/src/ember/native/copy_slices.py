"""Autograd for an in-place op on a view: the base's history is rewritten too.

PyTorch counterpart: torch/csrc/autograd/functions/tensor.cpp (``CopySlices``) and
torch/csrc/autograd/variable.cpp (``rebase_history`` for views) (v2.13).

After ``v = base[0]; v.mul_(w)`` the base's new value depends on its old value (outside
the slice) and on the op (inside it). ``CopySlices`` becomes the base's ``grad_fn``:
it takes the base's gradient, runs the op's node on the slice of it that ``v`` covers,
writes the result back into that slice, and hands the rest to the base's old history.
Slices are located by storage geometry (sizes, strides, offset), the general form
PyTorch falls back to (``as_strided``), so any view chain works.

Left out: the gradients CopySlices makes are not themselves differentiable
(``create_graph`` through an in-place op on a view), and other views of the same base
taken before the write keep their old ``grad_fn``.
"""

from ember.autograd.engine import root_edge
from ember.autograd.graph import Node


def _geometry(t):
    return tuple(t.shape), t.stride(), t.storage_offset()


def _strided(xp, buffer, geometry, itemsize):
    shape, strides, offset = geometry
    return xp.lib.stride_tricks.as_strided(buffer[offset:], shape, tuple(s * itemsize for s in strides))


class CopySlices(Node):
    """The base's new ``grad_fn`` after an in-place op on one of its views."""

    __slots__ = ("fn", "base_geometry", "view_geometry", "extent", "device", "np_dtype")

    def __init__(self, base, view, fn):
        edge = root_edge(base) if base._requires_grad else (None, 0)
        super().__init__((edge,) + tuple(fn.next_functions[1:]))
        self.fn = fn
        self.base_geometry = _geometry(base)
        self.view_geometry = _geometry(view)
        self.extent = base.untyped_storage().nbytes() // base.element_size()
        self.device = base._device
        self.np_dtype = base._data.dtype

    def name(self):
        return "CopySlices"

    def release(self):
        self.fn.release()

    def apply(self, grads):
        from ember.dispatcher import _wrap

        grad = grads[0]
        xp = self.device.backend.xp
        buffer = xp.zeros(self.extent, dtype=self.np_dtype)
        itemsize = buffer.itemsize
        grad_base = _strided(xp, buffer, self.base_geometry, itemsize)
        grad_base[...] = grad._data
        grad_slice = _strided(xp, buffer, self.view_geometry, itemsize)
        result = self.fn.apply([_wrap(grad_slice.copy(), self.device)])
        first = result[0]
        grad_slice[...] = 0 if first is None else first._data
        return (_wrap(grad_base.copy(), self.device),) + tuple(result[1:])


class ViewOfBase(Node):
    """The rewritten view's ``grad_fn``: its gradient lands in its slice of the base."""

    __slots__ = ("base_geometry", "view_geometry", "extent", "device", "np_dtype")

    def __init__(self, base, view):
        super().__init__((root_edge(base),))
        self.base_geometry = _geometry(base)
        self.view_geometry = _geometry(view)
        self.extent = base.untyped_storage().nbytes() // base.element_size()
        self.device = base._device
        self.np_dtype = base._data.dtype

    def name(self):
        return "AsStridedBackward0"

    def apply(self, grads):
        from ember.dispatcher import _wrap

        xp = self.device.backend.xp
        buffer = xp.zeros(self.extent, dtype=self.np_dtype)
        itemsize = buffer.itemsize
        _strided(xp, buffer, self.view_geometry, itemsize)[...] = grads[0]._data
        return (_wrap(_strided(xp, buffer, self.base_geometry, itemsize).copy(), self.device),)


def rebase_view(view, result):
    """Give ``view._base`` and ``view`` the history of ``result`` written into ``view``."""
    base = view._base
    base.grad_fn = CopySlices(base, view, result.grad_fn)
    base._output_nr = 0
    base._requires_grad = True
    view.grad_fn = ViewOfBase(base, view)
    view._output_nr = 0
    view._requires_grad = True
