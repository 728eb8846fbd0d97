"""In-place view ops: ``t_``, ``transpose_``, ``unsqueeze_``, ``squeeze_``, ``as_strided_`` change a
tensor's shape and strides without touching its memory.

PyTorch counterpart: aten/src/ATen/native/TensorShape.cpp (``t_``, ``unsqueeze_``...)
and the in-place-view handling of torch/csrc/autograd/VariableTypeUtils.h (v2.13).

The tensor takes the geometry of the out-of-place view of itself: it keeps its memory,
its base and its version counter, which goes up by one (PyTorch counts these as
in-place ops); while recording, its history becomes the view's node, so gradients
flow back through it as through ``t()``. A leaf that requires grad is refused, as in
PyTorch.
"""

import numpy as np

from ember.dispatcher import Op
from ember.native.shape import views
from ember.native.support._inplace import check_inplace
from ember.tensor import _wrap_dim


def _inplace_of(view_op, name, backward_name):
    """The in-place form of a view op: the same kernel and backward, PyTorch's node name
    for the in-place variant (``t_`` records TBackward1 where ``t`` records TBackward0)."""
    return Op(f"aten::{name}", view_op.generic, view_op.backward, view=True, backward_name=backward_name)


T_ = _inplace_of(views.T_OP, "t_", "TBackward1")
TRANSPOSE_ = _inplace_of(views.TRANSPOSE, "transpose_", "TransposeBackward1")
UNSQUEEZE_ = _inplace_of(views.UNSQUEEZE, "unsqueeze_", "UnsqueezeBackward1")
SQUEEZE_ = _inplace_of(views.SQUEEZE, "squeeze_", "SqueezeBackward3")
SQUEEZE_DIM_ = _inplace_of(views.SQUEEZE_DIM, "squeeze_.dim", "SqueezeBackward4")
SQUEEZE_DIMS_ = _inplace_of(views.SQUEEZE_DIMS, "squeeze_.dims", "SqueezeBackward5")
AS_STRIDED_ = _inplace_of(views.AS_STRIDED, "as_strided_", "AsStridedBackward1")


def _become(tensor, view):
    """Give ``tensor`` the geometry (and, when recorded, the history) of ``view``."""
    node = view.grad_fn  # read before the version moves (a stale view would regenerate it)
    tensor._data = view._data
    tensor._version_counter[0] += 1
    if node is not None:
        tensor.grad_fn = node
        tensor._output_nr = view._output_nr
        tensor._view_version = tensor._version_counter[0]  # this history is current
    return tensor


def t_(self):
    """Transpose a matrix (or keep a vector) in place.

    >>> import ember
    >>> ember.zeros(2, 3).t_().shape
    ember.Size([3, 2])
    """
    if self.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    check_inplace(self)
    return _become(self, T_(self, dim0=0, dim1=1 if self.ndim == 2 else 0))


def transpose_(self, dim0, dim1):
    check_inplace(self)
    n = self.ndim
    return _become(self, TRANSPOSE_(self, dim0=_wrap_dim(dim0, n), dim1=_wrap_dim(dim1, n)))


def unsqueeze_(self, dim):
    """Insert a size-1 dim at ``dim`` in place.

    >>> import ember
    >>> ember.zeros(2, 3).unsqueeze_(1).shape
    ember.Size([2, 1, 3])
    """
    check_inplace(self)
    return _become(self, UNSQUEEZE_(self, dim=_wrap_dim(dim, self.ndim + 1)))


def squeeze_(self, dim=None):
    check_inplace(self)
    if dim is None:
        return _become(self, SQUEEZE_(self, dims=tuple(range(self.ndim))))
    if isinstance(dim, (int, np.integer)):
        return _become(self, SQUEEZE_DIM_(self, dims=(_wrap_dim(dim, self.ndim),) if self.ndim else ()))
    return _become(self, SQUEEZE_DIMS_(self, dims=tuple(_wrap_dim(d, self.ndim) for d in dim) if self.ndim else ()))


def as_strided_(self, size, stride, storage_offset=None):
    """Give the tensor explicit sizes, strides and offset into its storage, in place.

    >>> import ember
    >>> ember.arange(6.).as_strided_((2, 2), (1, 2)).tolist()
    [[0.0, 2.0], [1.0, 3.0]]
    """
    check_inplace(self)
    if storage_offset is None:
        storage_offset = self.storage_offset()
    geometry = (tuple(self.shape), self.stride(), self.storage_offset())
    return _become(self, AS_STRIDED_(self, size=tuple(size), stride=tuple(stride), storage_offset=storage_offset,
                                     input_geometry=geometry))
