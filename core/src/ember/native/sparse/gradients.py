"""Where sparse tensors meet autograd: a sparse output's cotangent, the sum of two
gradients one of which is sparse, and a sparse gradient added into ``.grad``.

PyTorch counterpart: torch/csrc/autograd/functions/accumulate_grad.h (the sparse
branches of ``accumulateGrad``) and torch/csrc/autograd/input_buffer.cpp (v2.13).

A sparse tensor's gradient flows through its values (NOTE [ Sparse values carry the
gradient ] in __init__.py), so a sparse output enters backward as its values, with the
cotangent read at its entries. Sparse gradients that autograd itself makes (an
``embedding(sparse=True)`` weight's) are summed and stored as torch sums and stores
them: sparse + sparse concatenates the entries, anything dense makes the sum dense.
"""

import numpy as np

from ember.native.sparse.coalesce import flatten_indices
from ember.native.sparse.sparse_tensor import SparseTensor, _host_indices, _int64_tensor


def _coo(tensor):
    return tensor._coo if tensor.is_sparse_csr else tensor


def is_sparse_layout(tensor):
    return tensor is not None and (tensor.is_sparse or tensor.is_sparse_csr)


def values_cotangent(output, cotangent):
    """The cotangent of a sparse ``output``'s values: ``cotangent`` (dense or sparse, of
    the output's shape) read at the output's entries."""
    coo = _coo(output)
    if is_sparse_layout(cotangent):
        cotangent = cotangent.to_dense()
    sparse_dim = coo.sparse_dim()
    sizes = tuple(coo.shape)
    rows = int(np.prod(sizes[:sparse_dim], dtype=np.int64))
    position = _int64_tensor(flatten_indices(_host_indices(coo), sizes[:sparse_dim]), cotangent.device)
    return cotangent.reshape(rows, *sizes[sparse_dim:]).index_select(0, position)


def values_roots(outputs, grad_outputs):
    """``outputs`` and their gradients with every sparse output replaced by its values."""
    roots, grads = [], []
    for out, g in zip(outputs, grad_outputs):
        if is_sparse_layout(out):
            g = None if g is None else values_cotangent(out, g)
            out = _coo(out)._sparse_values
        roots.append(out)
        grads.append(g)
    return tuple(roots), tuple(grads)


def as_values(inputs):
    """Each sparse input replaced by its values (the tensor autograd differentiates)."""
    return tuple(_coo(t)._sparse_values if is_sparse_layout(t) else t for t in inputs)


def as_sparse_gradients(inputs, grads):
    """The gradients of the values of each sparse input, as sparse gradients with the
    input's pattern."""
    return tuple(_like(t, SparseTensor(_coo(t)._sparse_indices, g, t.shape, _coo(t)._is_coalesced))
                 if is_sparse_layout(t) and g is not None else g for t, g in zip(inputs, grads))


def _like(input, coo):
    """``coo`` in ``input``'s layout."""
    if input.is_sparse_csr:
        from ember.native.sparse.csr import SparseCsrTensor

        return SparseCsrTensor(coo)
    return coo


def add(old, new):
    """``old + new`` where either is sparse (the engine's sum of two gradients)."""
    if old.is_sparse and new.is_sparse:
        from ember.native.shape.shape import cat

        indices = cat([old._sparse_indices, new._sparse_indices], 1)
        values = cat([old._sparse_values, new._sparse_values], 0)
        return SparseTensor(indices, values, old.shape, False)
    sparse, dense = (old, new) if old.is_sparse else (new, old)
    return dense + sparse.to_dense()


def accumulate(variable, new_grad):
    """Add a gradient into ``variable.grad`` where one of them is sparse: the first sparse
    gradient is stored as it is, a second is appended to it (entries concatenated, not
    coalesced), and a dense one makes ``.grad`` dense."""
    from ember.autograd.grad_mode import no_grad

    grad = variable.grad
    if grad is None:
        variable.grad = new_grad.detach() if new_grad.is_sparse else new_grad.detach().clone()
    elif grad.is_sparse:
        variable.grad = add(grad, new_grad).detach()
    else:
        with no_grad():
            grad.add_(new_grad.to_dense())
