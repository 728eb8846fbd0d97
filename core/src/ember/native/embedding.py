"""``embedding`` (row lookup in a table, the op behind ``nn.Embedding``), its max-norm
renormalisation, and ``one_hot``.

PyTorch counterpart: aten/src/ATen/native/Embedding.cpp (``embedding``,
``embedding_dense_backward``, ``embedding_renorm_``), Onehot.cpp and derivatives.yaml
(v2.13).

The forward is a gather of rows. The backward scatters the output gradient back into
a zero table of the weight's shape, adding up the rows of repeated indices, leaving
the ``padding_idx`` row at zero and, with ``scale_grad_by_freq``, dividing each row
by how often its index occurs in the batch. With ``sparse=True`` the weight's gradient
is a sparse COO tensor instead: one entry per lookup, the row of the output gradient
(``embedding_sparse_backward``), uncoalesced, as torch's.
"""

from ember import dtypes
from ember.autograd.forward_grad import AUTO_LINEAR
from ember.dispatch_modes import modes
from ember.dispatcher import NONE, Op


def _embedding_kernel(xp, weight, indices, padding_idx, scale_grad_by_freq, sparse=False):
    return xp.take(weight, indices, axis=0)


def _embedding_backward(ctx, grad):
    weight, indices = ctx.saved_inputs
    if ctx.attrs.get("sparse"):
        return embedding_sparse_backward(grad, indices, weight.shape[0], ctx.attrs["padding_idx"],
                                         ctx.attrs["scale_grad_by_freq"]), None
    grad_weight = EMBEDDING_DENSE_BACKWARD(grad, indices, num_weights=weight.shape[0], **ctx.attrs)
    return grad_weight, None


EMBEDDING = Op("aten::embedding", _embedding_kernel, _embedding_backward, promote=NONE, save="inputs", jvp=AUTO_LINEAR)


def embedding_sparse_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq):
    """The weight's gradient as a sparse COO tensor: entry ``k`` is lookup ``k``'s index
    and its row of ``grad``; lookups of ``padding_idx`` are left out. Repeated indices
    stay separate entries (uncoalesced). torch refuses ``scale_grad_by_freq`` here, and
    so does ember."""
    from ember.native.sparse.sparse_tensor import SparseTensor

    if scale_grad_by_freq:
        raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse gradients")
    dim = grad.shape[-1]
    flat = indices.reshape(-1).to(dtypes.int64)
    rows = grad.reshape(-1, dim)
    if padding_idx is not None:
        keep = flat != padding_idx
        flat, rows = flat[keep], rows[keep]
    return SparseTensor(flat.unsqueeze(0), rows, (num_weights, dim), False)


def _row_weights(xp, indices, padding_idx, scale_grad_by_freq, dtype):
    """Per-lookup factors of the backward: 0 for padding lookups, 1/count with
    ``scale_grad_by_freq``; None when every factor is 1."""
    if padding_idx is None and not scale_grad_by_freq:
        return None
    factors = xp.ones(indices.shape, dtype=dtype)
    if scale_grad_by_freq:
        _, inverse, counts = xp.unique(indices, return_inverse=True, return_counts=True)
        factors /= counts.reshape(-1)[inverse.reshape(indices.shape)]
    if padding_idx is not None:
        factors[indices == padding_idx] = 0
    return factors


def _embedding_dense_backward_kernel(xp, grad, indices, num_weights, padding_idx, scale_grad_by_freq):
    dim = grad.shape[-1]
    rows = grad.reshape(-1, dim)
    factors = _row_weights(xp, indices, padding_idx, scale_grad_by_freq, grad.dtype)
    if factors is not None:
        rows = rows * factors.reshape(-1, 1)
    out = xp.zeros((num_weights, dim), dtype=grad.dtype)
    _scatter_rows(xp, out, indices.reshape(-1), rows)
    return out


def _scatter_rows(xp, out, index, rows):
    """``out[index[i]] += rows[i]`` with repeated indices adding up."""
    from ember.native.indexing.indexing import _add_at

    _add_at(xp, out, index, rows)


def _embedding_dense_backward_backward(ctx, grad):
    # The backward is linear in the incoming gradient: its own gradient looks the
    # rows up again, with the same per-lookup factors.
    _, indices = ctx.saved_inputs
    attrs = ctx.attrs
    rows = EMBEDDING(grad, indices, padding_idx=None, scale_grad_by_freq=False)
    factors = ROW_WEIGHTS(indices, padding_idx=attrs["padding_idx"],
                          scale_grad_by_freq=attrs["scale_grad_by_freq"], dtype=grad.dtype)
    if attrs["padding_idx"] is not None or attrs["scale_grad_by_freq"]:
        rows = rows * factors.unsqueeze(-1)
    return rows, None


EMBEDDING_DENSE_BACKWARD = Op("aten::embedding_dense_backward", _embedding_dense_backward_kernel,
                              _embedding_dense_backward_backward, promote=NONE, save="inputs")


def _row_weights_kernel(xp, indices, padding_idx, scale_grad_by_freq, dtype):
    factors = _row_weights(xp, indices, padding_idx, scale_grad_by_freq, dtype.np)
    return xp.ones(indices.shape, dtype=dtype.np) if factors is None else factors


ROW_WEIGHTS = Op("aten::_embedding_row_weights", _row_weights_kernel, None)


def _check_indices(indices, fn_name):
    if indices.dtype not in (dtypes.int64, dtypes.int32):
        from ember.native.factory import _legacy_name

        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got ember.{_legacy_name(indices.dtype)}Tensor instead (while checking "
                           f"arguments for {fn_name})")


def _check_in_range(indices, num_weights):
    if indices.numel() == 0:
        return
    if modes.vmap is not None:  # the check reads every sample's indices (ember/func/batching.py)
        indices = modes.vmap.physical(indices)
    if bool(indices.min() < 0) or bool(indices.max() >= num_weights):
        raise IndexError("index out of range in self")


def _wrap_padding_idx(padding_idx, num_weights):
    if padding_idx is None:
        return None
    if padding_idx > 0:
        assert padding_idx < num_weights, "Padding_idx must be within num_embeddings"
    elif padding_idx < 0:
        assert padding_idx >= -num_weights, "Padding_idx must be within num_embeddings"
        padding_idx = num_weights + padding_idx
    return int(padding_idx)


def embedding_renorm_(weight, indices, max_norm, norm_type=2.0):
    """Rescale, in place, the rows of ``weight`` that ``indices`` looks up and whose
    ``norm_type``-norm exceeds ``max_norm``, to norm ``max_norm`` (PyTorch's
    ``embedding_renorm_``, with its 1e-7 guard). Not recorded by autograd."""
    from ember.autograd.forward_grad import hidden
    from ember.autograd.grad_mode import no_grad
    from ember.native.indexing.indexing import where

    with no_grad(), hidden():  # torch's renorm leaves a dual weight's tangent as it is
        # Repeated indices select the same row twice and write the same value twice.
        rows = indices.reshape(-1)
        if rows.numel() == 0:
            return weight
        selected = weight.index_select(0, rows)
        norms = selected.norm(p=norm_type, dim=1)
        scale = where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        weight[rows] = selected * scale.unsqueeze(1).to(weight.dtype)
    return weight


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """Look up rows of ``weight``: ``out[..., :] = weight[input[...], :]``.

    Args:
        input: int64 or int32 indices of any shape, each in ``[0, num_embeddings)``.
        weight: the ``(num_embeddings, embedding_dim)`` table.
        padding_idx: a row that receives no gradient (negative counts from the end).
        max_norm: if given, rows looked up whose norm exceeds it are rescaled to it,
            in place, before the lookup.
        norm_type: the p of the p-norm for ``max_norm``.
        scale_grad_by_freq: divide each row's gradient by its index's count in ``input``.
        sparse: give ``weight`` a sparse COO gradient (:func:`embedding_sparse_backward`).

    Returns:
        ``input.shape + (embedding_dim,)``.

    >>> import ember
    >>> w = ember.arange(6.).reshape(3, 2)
    >>> ember.nn.functional.embedding(ember.tensor([2, 0]), w)
    tensor([[4., 5.],
            [0., 1.]])
    """
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    _check_indices(input, "embedding")
    num_weights = weight.shape[0]
    padding_idx = _wrap_padding_idx(padding_idx, num_weights)
    _check_in_range(input, num_weights)
    if max_norm is not None:
        embedding_renorm_(weight, input, max_norm, norm_type)
    if sparse:  # only then: the attribute names the sparse backward
        return EMBEDDING(weight, input, padding_idx=padding_idx, scale_grad_by_freq=bool(scale_grad_by_freq),
                         sparse=True)
    return EMBEDDING(weight, input, padding_idx=padding_idx, scale_grad_by_freq=bool(scale_grad_by_freq))


# --- one_hot ---------------------------------------------------------------------


def _one_hot_kernel(xp, indices, num_classes):
    return (indices[..., None] == xp.arange(num_classes)).astype(xp.int64)


ONE_HOT = Op("aten::one_hot", _one_hot_kernel, None)


def one_hot(tensor, num_classes=-1):
    """``out[..., k] = 1`` where ``k = tensor[...]``, else 0 (int64).

    Args:
        tensor: int64 class indices of any shape.
        num_classes: the size of the new last dim; -1 takes ``tensor.max() + 1``.

    >>> import ember
    >>> ember.nn.functional.one_hot(ember.tensor([0, 2]), 3)
    tensor([[1, 0, 0],
            [0, 0, 1]])
    """
    if tensor.dtype is not dtypes.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return ONE_HOT(tensor, num_classes=int(num_classes))
    if int(tensor.min()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    largest = int(tensor.max())
    if num_classes == -1:
        num_classes = largest + 1
    elif largest >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return ONE_HOT(tensor, num_classes=int(num_classes))
