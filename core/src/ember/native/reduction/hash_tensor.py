"""``hash_tensor``: a uint64 hash of a tensor's elements, over all or some dims.

PyTorch counterpart: aten/src/ATen/native/ReduceOps.cpp (``hash_tensor``) and
torch/_torch_docs.py (``hash_tensor``) (v2.13).

Mode 0, the only one: each element is widened to its 64-bit kind (floats to float64,
integers and bool to int64, as unsigned), its 64 bits read as a uint64, and the words
xor-ed together along the reduced dims; reducing over an empty dim is refused, as in
PyTorch. Not differentiable.
"""

import numpy as np

from ember.dispatcher import NONE, Op
from ember.native.reduction.reduction import reduction_dims


def _words(xp, a):
    """Each element's 64 bits as a uint64."""
    if a.dtype.kind == "f" or a.dtype.name == "bfloat16":
        return a.astype(np.float64).view(np.uint64)
    return a.astype(np.int64).view(np.uint64)  # sign-extended, then read unsigned


def _hash_tensor_kernel(xp, a, dims, keepdim, mode):
    words = _words(xp, a)
    if a.ndim == 0:
        return words.copy()
    return xp.asarray(xp.bitwise_xor.reduce(words, axis=dims, keepdims=keepdim))


HASH_TENSOR = Op("aten::hash_tensor", _hash_tensor_kernel, promote=NONE)


def hash_tensor(input, dim=None, *, keepdim=False, mode=0):
    """The xor of the elements' 64-bit patterns (floats as float64, integers as int64)
    over ``dim`` (all dims by default or for ``[]``), as uint64.

    >>> import ember
    >>> ember.hash_tensor(ember.tensor([1, 2, 3]))
    tensor(0, dtype=ember.uint64)
    """
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    every = dim is None or (not isinstance(dim, int) and len(dim) == 0)
    if every and input.numel() == 0:
        raise RuntimeError("hash_tensor: Expected reduction dim to be specified for input.numel() == 0. Specify "
                           "the reduction dim with the 'dim' argument.")
    dims = reduction_dims(None if every else dim, input.ndim)
    for d in dims:
        if input.shape[d] == 0:
            raise IndexError(f"hash_tensor: Expected reduction dim {d} to have non-zero size.")
    return HASH_TENSOR(input, dims=dims, keepdim=keepdim, mode=mode)
