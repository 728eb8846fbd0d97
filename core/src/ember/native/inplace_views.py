"""In-place view ops: ``t_``, ``transpose_``, ``unsqueeze_``, ``squeeze_`` change a
tensor's shape and strides without touching its memory.

PyTorch counterpart: aten/src/ATen/native/TensorShape.cpp (``t_``, ``unsqueeze_``...)
and the in-place-view handling of torch/csrc/autograd/VariableTypeUtils.h (v2.13).

The tensor takes the geometry of the out-of-place view of itself: it keeps its memory,
its base and its version counter, which goes up by one (PyTorch counts these as
in-place ops); while recording, its history becomes the view's node, so gradients
flow back through it as through ``t()``. A leaf that requires grad is refused, as in
PyTorch.
"""

from ember.native import views
from ember.native._inplace import check_inplace


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
    return _become(self, views.t(self))


def transpose_(self, dim0, dim1):
    check_inplace(self)
    return _become(self, views.transpose(self, dim0, dim1))


def unsqueeze_(self, dim):
    """Insert a size-1 dim at ``dim`` in place.

    >>> import ember
    >>> ember.zeros(2, 3).unsqueeze_(1).shape
    ember.Size([2, 1, 3])
    """
    check_inplace(self)
    return _become(self, views.unsqueeze(self, dim))


def squeeze_(self, dim=None):
    check_inplace(self)
    return _become(self, views.squeeze(self, dim))
