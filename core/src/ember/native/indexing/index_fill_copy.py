"""Writes of whole slices along a dim, picked by a 1-d index: ``index_fill`` (one value
into every picked slice) and ``index_copy`` (slice ``source[i]`` into slice
``index[i]``), with their in-place forms.

PyTorch counterpart: aten/src/ATen/native/TensorAdvancedIndexing.cpp (``index_fill``,
``index_copy``) and their derivatives.yaml entries (v2.13).

The gradient of the input is the incoming one with the overwritten slices zeroed; a
copied slice's gradient is read back from where it went (``index_select``), and a
0-d tensor ``value``'s is the sum over the filled slices. ``index_fill`` takes a
negative index (counting from the end); ``index_copy`` does not (PyTorch's checks).
"""

from ember import dtypes
from ember.dispatcher import NONE, Op
from ember.tensor import Tensor, _wrap_dim


def _slices(dim, index):
    return (slice(None),) * dim + (index,)


def _index_fill_kernel(xp, a, index, value, dim):
    out = a.copy()
    view = out.reshape(1) if a.ndim == 0 else out
    view[_slices(dim, index)] = value
    return out


def _index_fill_backward(ctx, grad):
    _, index, value = ctx.saved_inputs
    dim = ctx.attrs["dim"]
    need_a, _, need_value = ctx.needs_input_grad
    unfilled = INDEX_FILL(grad, index, 0.0, dim=dim)
    # the value's gradient: the sum over the filled slices, each once (an index may repeat)
    grad_value = (grad - unfilled).sum() if need_value else None
    return (unfilled if need_a else None), None, grad_value


INDEX_FILL = Op("aten::index_fill", _index_fill_kernel, _index_fill_backward, promote=NONE, save="inputs")


def index_fill(input, dim, index, value):
    """A copy of ``input`` with the slices ``index`` along ``dim`` set to ``value`` (a
    number or a 0-d tensor).

    >>> import ember
    >>> ember.zeros(3, 2).index_fill(0, ember.tensor([0, 2]), 1.)
    tensor([[1., 1.],
            [0., 0.],
            [1., 1.]])
    """
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    if index.dtype is not dtypes.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value.ndim} dimension(s).")
        value = value.to(input.dtype)
    else:
        from ember.native.indexing.indexing import _scalar_as

        value = _scalar_as(value, input._data.dtype)
    dim = _wrap_dim(dim, input.ndim)
    size = input.shape[dim] if input.ndim else 1
    index = index.reshape(-1)
    if index.numel():
        low, high = int(index.min().item()), int(index.max().item())
        bad = low if low < -size else high if high >= size else None
        if bad is not None:
            raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {size}")
    return INDEX_FILL(input, index, value, dim=dim)


def _index_copy_kernel(xp, a, index, source, dim):
    out = a.copy()
    view = out.reshape(1) if a.ndim == 0 else out
    view[_slices(dim, index)] = source.reshape(-1) if a.ndim == 0 else source
    return out


def _index_copy_backward(ctx, grad):
    _, index, source = ctx.saved_inputs
    dim = ctx.attrs["dim"]
    need_a, _, need_source = ctx.needs_input_grad
    grad_a = INDEX_FILL(grad, index, 0.0, dim=dim) if need_a else None
    grad_source = None
    if need_source:
        flat = grad.reshape(1) if grad.ndim == 0 else grad
        grad_source = flat.index_select(dim, index).reshape(source.shape)
    return grad_a, None, grad_source


INDEX_COPY = Op("aten::index_copy", _index_copy_kernel, _index_copy_backward, promote=NONE, save="inputs")


def index_copy(input, dim, index, source):
    """A copy of ``input`` with slice ``source[i]`` along ``dim`` written to slice
    ``index[i]``.

    >>> import ember
    >>> ember.zeros(3, 2).index_copy(0, ember.tensor([2, 0]), ember.tensor([[1., 2.], [3., 4.]]))
    tensor([[3., 4.],
            [0., 0.],
            [1., 2.]])
    """
    dim = _wrap_dim(dim, input.ndim)
    if source.dtype is not input.dtype:
        raise RuntimeError("index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{dtypes.SCALAR_TYPE_NAMES[input.dtype.name]} and (source) "
                           f"{dtypes.SCALAR_TYPE_NAMES[source.dtype.name]}")
    if index.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})")
    if index.dtype is not dtypes.int64:
        raise RuntimeError("index_copy_(): Expected a long tensor for index, but got "
                           f"{dtypes.SCALAR_TYPE_NAMES[index.dtype.name]}")
    size = source.shape[dim] if source.ndim else 1
    if index.numel() != size:
        raise IndexError(f"index_copy_(): Number of indices ({index.numel()}) should be equal to source.size(dim) "
                         f"({size})")
    # the slices (each tensor without `dim`) must agree; PyTorch numbers the slice's dims
    input_slice = [n for d, n in enumerate(input.shape) if d != dim]
    source_slice = [n for d, n in enumerate(source.shape) if d != dim]
    for d, (want, got) in enumerate(zip(input_slice, source_slice)):
        if want != got:
            raise RuntimeError("index_copy_(): Source/destination tensor must have same slice shapes. Destination "
                               f"slice shape: {want} at dimension {d} and source slice shape: {got} at dimension {d}.")
    size = input.shape[dim] if input.ndim else 1
    index = index.reshape(-1)
    if index.numel():
        low, high = int(index.min().item()), int(index.max().item())
        bad = low if low < 0 else high if high >= size else None
        if bad is not None:
            raise IndexError(f"index_copy_(): index {bad} is out of bounds for dimension {dim} with size {size}")
    return INDEX_COPY(input, index, source, dim=dim)
