"""The canonical mask of ``ember.masked``: how a ``mask=`` argument becomes a boolean
tensor of the input's shape, the identity each reduction fills masked-out elements
with, and the sorted tuple of dimensions a reduction runs over.

PyTorch counterpart: torch/masked/_ops.py (v2.13): ``_input_mask``,
``_reduction_identity``, ``_canonical_dim`` and ``_combine_input_and_mask``. ember has
strided tensors only, so the sparse COO and CSR branches and ``MaskedTensor`` are left out.
"""

import math

import ember
from ember import dtypes

# NOTE [ Masking by the identity ]
# A masked reduction never skips elements: it replaces each masked-out element with the
# reduction's identity (0 for a sum, 1 for a product, -inf for a maximum...) and runs the
# ordinary reduction. An element equal to the identity changes nothing, so the result is
# the reduction of the masked-in elements alone, and a fully masked-out row gives the
# identity itself (a sum of nothing is 0). ``where`` does the replacing, so autograd gives
# masked-out elements a zero gradient with no formula of its own. Reductions with no
# identity (mean, var, std) are computed from a masked sum and a count of the masked-in
# elements, and a fully masked-out row comes out NaN (0 / 0).

# The reductions whose identity is the lowest value of the dtype, and the highest.
_LOWEST = {"amax", "argmax", "logaddexp", "logsumexp"}
_HIGHEST = {"amin", "argmin"}


def canonical_dim(dim, ndim):
    """``dim`` (None, one dimension or several) as a sorted tuple of non-negative
    dimensions; None and ``()`` mean every dimension. A 0-d tensor has one dimension, 0."""
    if dim is None or dim == ():
        return tuple(range(ndim))
    ndim = max(ndim, 1)
    dims = []
    for d in (dim,) if isinstance(dim, int) else dim:
        if d in dims:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if not -ndim <= d < ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {d})")
        dims.append(d % ndim)
    return tuple(sorted(dims))


def input_mask(input, mask):
    """``mask`` broadcast to ``input``'s shape and made boolean."""
    if mask is None:
        raise ValueError("_input_mask requires explicit mask")
    if tuple(mask.shape) != tuple(input.shape):
        if mask.ndim > input.ndim:
            raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality higher than of "
                             "the input)")
        mask = mask.broadcast_to(tuple(input.shape))
    return mask.to(dtype=dtypes.bool_)


def reduction_identity(name, input, ord=2.0):
    """The value that leaves the reduction ``name`` unchanged, as a 0-d tensor of
    ``input``'s dtype, or None where there is none (mean, var, std). ``ord`` is
    the norm's order."""
    dtype = input.dtype
    if name in {"sum", "cumsum"}:
        value = 0
    elif name in {"prod", "cumprod"}:
        value = 1
    elif name in _LOWEST | _HIGHEST:
        value = _extreme(dtype, lowest=name in _LOWEST, name=name)
    elif name == "norm":
        value = math.inf if ord == -math.inf else 0
    elif name == "median":  # nanmedian ignores NaN: NaN is its identity, in a floating dtype
        return ember.tensor(math.nan, dtype=dtype if dtype.is_floating_point else dtypes.float32, device=input.device)
    elif name in {"mean", "var", "std"}:
        return None
    else:
        raise NotImplementedError(f"identity of {name} on torch.{dtype.name} input")
    return ember.tensor(value, dtype=dtype, device=input.device)


def _extreme(dtype, lowest, name):
    """-inf or inf in a floating dtype, the dtype's lowest or highest value in an integer one."""
    if dtype.is_floating_point or (dtype.is_complex and name == "logsumexp"):
        return -math.inf if lowest else math.inf
    if dtype is dtypes.bool_:
        raise NotImplementedError(f"identity of {name} on torch.bool input")
    info = ember.iinfo(dtype)  # a complex dtype has no extremes: iinfo's TypeError, as in PyTorch
    return info.min if lowest else info.max


def combine(name, input, mask, ord=2.0):
    """``input`` with its masked-out elements replaced by the identity of the
    reduction ``name``; ``input`` itself where ``mask`` is None.
    NOTE [ Masking by the identity ]."""
    if mask is None:
        return input
    identity = reduction_identity(name, input, ord)
    return ember.where(input_mask(input, mask), input, identity)
