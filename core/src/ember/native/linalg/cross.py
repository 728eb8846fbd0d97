"""The cross product of 3-vectors along a dim: ``cross`` and ``linalg.cross``.

PyTorch counterpart: aten/src/ATen/native/Cross.cpp (``linalg_cross``, ``cross``) and
their derivatives.yaml entries (v2.13).

``c_i = a_{i+1} b_{i+2} - a_{i+2} b_{i+1}`` (indices mod 3): with ``roll``, the whole
product is two shifted elementwise products, so the gradient comes from ``roll``
and ``mul``. The inputs broadcast. ``linalg.cross`` takes ``dim=-1``; ``cross``
without ``dim`` takes the first dim of size 3 (deprecated in PyTorch, with a warning).
"""

import warnings

from ember.native.shape.shape import broadcast_tensors
from ember.tensor import _wrap_dim


def _scalar_name(dtype):
    from ember import dtypes

    return dtypes.SCALAR_TYPE_NAMES[dtype.name]


def linalg_cross(input, other, *, dim=-1):
    """The cross product of the 3-vectors along ``dim`` (batch dims broadcast).

    >>> import ember
    >>> ember.linalg.cross(ember.tensor([1., 0., 0.]), ember.tensor([0., 1., 0.]))
    tensor([0., 0., 1.])
    """
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of "
                           "dimensions.")
    if input.dtype is not other.dtype:
        names = _scalar_name(input.dtype), _scalar_name(other.dtype)
        raise RuntimeError("expected scalar type {} but found {}".format(*names))
    d = _wrap_dim(dim, input.ndim)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. "
                           f"Got {input.shape[d]} and {other.shape[d]}")
    a, b = broadcast_tensors(input, other)
    return a.roll(-1, d) * b.roll(-2, d) - a.roll(-2, d) * b.roll(-1, d)

def cross(input, other, dim=None):
    """:func:`linalg_cross` along ``dim``; without one, the first dim of size 3.

    >>> import ember
    >>> ember.cross(ember.tensor([[0., 0., 1.]]), ember.tensor([[1., 0., 0.]]), dim=1)
    tensor([[0., 1., 0.]])
    """
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                      "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree "
                      "with that of linalg.cross in a future release.", UserWarning, stacklevel=2)
        sizes = list(input.shape)
        if 3 not in sizes:
            raise RuntimeError("no dimension of size 3 in input")
        dim = sizes.index(3)
    return linalg_cross(input, other, dim=dim)
