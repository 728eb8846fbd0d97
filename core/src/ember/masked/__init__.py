"""``ember.masked``: reductions and normalizations over the elements a boolean mask
keeps, PyTorch's ``torch.masked`` operations.

PyTorch counterpart: torch/masked/_ops.py (v2.13) and torch/masked/__init__.py.

Every function takes ``mask=`` (``input_mask=``/``other_mask=`` for ``logaddexp``), a
boolean tensor broadcastable to the input, True where an element takes part. The
canonical mask and the identities live in mask.py, the reductions in reductions.py,
the shape-keeping ops in normalizations.py. ember leaves out ``MaskedTensor`` and the
sparse layouts: the functions take and return ordinary strided tensors.
"""

from ember.masked.normalizations import cumprod, cumsum, log_softmax, logaddexp, normalize, softmax, softmin
from ember.masked.reductions import amax, amin, argmax, argmin, logsumexp, mean, median, norm, prod, std, sum, var

__all__ = ["amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax", "logaddexp", "logsumexp", "mean",
           "median", "norm", "normalize", "prod", "softmax", "softmin", "std", "sum", "var"]
