"""``meshgrid``: coordinate grids from 1-d tensors, each a broadcast view of its input.

PyTorch counterpart: aten/src/ATen/native/TensorShape.cpp (``meshgrid``) and
torch/functional.py (the Python front, its ``indexing`` warning) (v2.13).

With ``indexing="ij"`` output ``k`` varies along dim ``k``; ``"xy"`` (NumPy's
default, Cartesian) swaps the roles of the first two dims. Every output is an
``expand`` of a reshaped input, so it shares the input's memory and its gradient
is the sum of the incoming one over the broadcast dims (expand's own backward).
"""

import warnings


def _tensors(tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(tensors[0])
    return tensors


def _check(tensors, indexing):
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    if any(t.dtype is not tensors[0].dtype for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    if any(t.device != tensors[0].device for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same device")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')


def meshgrid(*tensors, indexing=None):
    """Grids over the given 1-d (or 0-d) tensors: for inputs of sizes ``n0, n1, ...``
    every output has shape ``(n0, n1, ...)`` (``(n1, n0, ...)`` with ``indexing="xy"``)
    and output ``k`` repeats input ``k`` along the other dims.

    >>> import ember
    >>> x, y = ember.meshgrid(ember.tensor([1, 2, 3]), ember.tensor([4, 5]), indexing="ij")
    >>> x
    tensor([[1, 1],
            [2, 2],
            [3, 3]])
    >>> y
    tensor([[4, 5],
            [4, 5],
            [4, 5]])
    """
    tensors = _tensors(tensors)
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing "
                      "argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    _check(tensors, indexing)
    flat = [t.reshape(-1) for t in tensors]
    axes = list(range(len(flat)))
    if indexing == "xy" and len(flat) >= 2:
        axes[0], axes[1] = 1, 0  # the first input runs along columns, the second along rows
    shape = [0] * len(flat)
    for t, axis in zip(flat, axes):
        shape[axis] = t.shape[0]
    grids = []
    for t, axis in zip(flat, axes):
        view_shape = [1] * len(flat)
        view_shape[axis] = t.shape[0]
        grids.append(t.reshape(view_shape).expand(shape))
    return tuple(grids)


