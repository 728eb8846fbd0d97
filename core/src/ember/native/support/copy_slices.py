"""Autograd for an in-place op on a view: the base's history is rewritten too.

PyTorch counterpart: torch/csrc/autograd/functions/tensor.cpp (``CopySlices``) and
torch/csrc/autograd/variable.cpp (``rebase_history`` for views) (v2.13).

After ``v = base[0]; v.mul_(w)`` the base's new value depends on its old value (outside
the slice) and on the op (inside it). ``CopySlices`` becomes the base's ``grad_fn``:
it takes the base's gradient, runs the op's node on the part of it that ``v`` covers,
writes the result back into that part, and hands the rest to the base's old history.

# NOTE [ Locating a view inside its base ]
# A view is found by storage geometry (sizes, strides, offset), the general form
# PyTorch falls back to (``as_strided``), so any chain of views works: slices,
# select, transpose-then-slice. The geometry is turned once into an integer index
# array: for each element of the view, its position in the base flattened in C order.
# Backward then uses only ember ops on that index (gather, index_put, reshape), so the
# gradients CopySlices makes are themselves differentiable (``create_graph``).

Other views of the same base taken *before* the write get a fresh ``grad_fn``
(``AsStridedBackward0``) when theirs is next read: NOTE [ Views and in-place writes ] in
ember/autograd/views.py.
"""

import numpy as np

from ember.autograd.engine import _validate, root_edge
from ember.autograd.graph import Node
from ember.autograd.views import move_retains_grad


def _storage_offsets(t):
    """The storage offset of every element of ``t``, shaped like ``t``."""
    offsets = np.full((), t.storage_offset(), dtype=np.int64)
    for dim, (size, stride) in enumerate(zip(t.shape, t.stride())):
        shape = [1] * t.ndim
        shape[dim] = size
        offsets = offsets + np.arange(size, dtype=np.int64).reshape(shape) * stride
    return np.broadcast_to(offsets, tuple(t.shape))


def _position_in_base(base, view):
    """For each element of ``view``, its index in ``base`` flattened in C order."""
    base_offsets = _storage_offsets(base).reshape(-1)
    order = np.argsort(base_offsets, kind="stable")
    found = np.searchsorted(base_offsets[order], _storage_offsets(view))
    return order[found]


class _ViewInBase:
    """The base's shape and where the view's elements sit in the flattened base."""

    __slots__ = ("base_shape", "numel", "key", "dtype", "device")

    def __init__(self, base, view):
        positions = _position_in_base(base, view)
        self.base_shape = tuple(base.shape)
        self.numel = base.numel()
        self.key = (base._device.backend.from_host(positions, base._device.index),)
        self.dtype = base.dtype
        self.device = base._device

    def gather(self, grad_base):
        """The view's part of a gradient shaped like the base."""
        from ember.native.indexing.indexing import INDEX

        return INDEX(grad_base.reshape(-1), key=self.key)

    def scatter(self, grad_base, values):
        """``grad_base`` with the view's part replaced by ``values`` (a tensor or 0.0)."""
        from ember.native.indexing.indexing import INDEX_PUT

        return INDEX_PUT(grad_base.reshape(-1), values, key=self.key).reshape(self.base_shape)

    def zeros(self):
        from ember.native.factory import zeros

        return zeros(self.numel, dtype=self.dtype, device=self.device)


class CopySlices(Node):
    """The base's new ``grad_fn`` after an in-place op on one of its views."""

    __slots__ = ("fn", "where")

    def __init__(self, base, view, fn):
        edge = root_edge(base) if base._requires_grad else (None, 0)
        super().__init__((edge,) + tuple(fn.next_functions[1:]))
        self.fn = fn
        self.where = _ViewInBase(base, view)

    def name(self):
        return "CopySlices"

    def release(self):
        self.fn.release()

    def apply(self, grads):
        grad = grads[0]
        if grad is None:
            return (None,) * len(self.next_functions)
        # The op's own node sees only the view's part; its gradients are reduced to
        # its inputs' shapes (a broadcast operand) as the engine would do.
        result = _validate(self.fn, self.fn.apply([self.where.gather(grad)]))
        grad_view = result[0]
        grad_base = self.where.scatter(grad, 0.0 if grad_view is None else grad_view)
        return (grad_base,) + tuple(result[1:])


class AsStridedBackward0(Node):
    """The ``grad_fn`` of a view whose memory was rewritten (by a write through it or
    through another alias of its base): its gradient lands in its part of the base,
    located by storage geometry. PyTorch's node of the same name does this with
    ``as_strided``."""

    __slots__ = ("where",)

    def __init__(self, base, view):
        super().__init__((root_edge(base),))
        self.where = _ViewInBase(base, view)

    def apply(self, grads):
        if grads[0] is None:
            return (None,)
        return (self.where.scatter(self.where.zeros(), grads[0]),)


def rebase_view(view, result):
    """Give ``view._base`` and ``view`` the history of ``result`` written into ``view``
    (retained gradients follow both to their new nodes)."""
    base = view._base
    old_base_fn, old_base_nr = base._grad_fn, base._output_nr
    base._grad_fn = CopySlices(base, view, result._grad_fn)
    base._output_nr = 0
    base._requires_grad = True
    move_retains_grad(base, old_base_fn, old_base_nr)
    old_view_fn, old_view_nr = view._grad_fn, view._output_nr
    view._grad_fn = AsStridedBackward0(base, view)
    view._output_nr = 0
    view._requires_grad = True
    move_retains_grad(view, old_view_fn, old_view_nr)
