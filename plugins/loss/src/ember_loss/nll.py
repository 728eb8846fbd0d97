"""``nll_loss``: the negative log-likelihood of class indices, given log-probabilities.

PyTorch counterpart: aten/src/ATen/native/LossNLL.cpp and LossNLL2d.cpp (``nll_loss_nd``,
the checks and the weighted mean), torch/nn/functional.py ``nll_loss`` (v2.13).

For input ``x`` of shape ``(N, C, d1, ..., dK)`` (or ``(C,)``) and class indices ``t`` of
shape ``(N, d1, ..., dK)``, the loss at each position is ``-w[t] * x[t]`` (0 where ``t`` is
``ignore_index``); ``'mean'`` divides the sum by the sum of ``w[t]`` over the positions not
ignored, so all-ignored gives ``nan`` as in PyTorch.

The op ``loss::nll_loss`` is one graph node. NLL is linear in ``x``: its gradient is the
constant ``-w[t] / denominator`` at the target class and 0 elsewhere, so the backward is
``grad * coefficients``, written with ember ops (and so differentiable again).
"""

import ember
from ember import library
from ember.autograd.grad_mode import grad_state
from ember_loss import reduction as reductions

# NOTE [ Class-index targets ]
# The checks below run in Python before any op, in PyTorch's order, so a bad target
# raises the same exception type (ValueError for the batch size, RuntimeError for the
# target shape or dtype, IndexError for an index out of range) with the same message.
# The kernels then see a flat view: the class dim is `class_dim` (0 for a (C,) input,
# else 1) and `target` has the input's shape without the class dim.


def _shape(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def check_class_target(input, target, weight):
    """Validate ``(input, target, weight)`` for class-index losses like PyTorch's ``nll_loss_nd``.

    Returns the target reshaped to the input's shape without the class dim, and the weight
    as a flat ``(C,)`` tensor.
    """
    # each shape read once: this runs on every loss call
    shape, target_shape = tuple(input.shape), tuple(target.shape)
    ndim, target_ndim = len(shape), len(target_shape)
    if ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {ndim})")
    if ndim != 1 and (target_ndim == 0 or shape[0] != target_shape[0]):
        got = target_shape[0] if target_ndim else 0
        raise ValueError(f"Expected input batch_size ({shape[0]}) to match target batch_size ({got}).")
    if ndim <= 2:
        if target_ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if ndim == 1 and target_ndim == 1 and target_shape[0] != 1:
            raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {target_shape[0]}")
    elif ndim == 4:
        if target_ndim != 3:
            raise RuntimeError("only batches of spatial targets supported (3D tensors) but got targets of "
                               f"dimension: {target_ndim}")
        if target_shape[1:] != shape[2:]:
            raise RuntimeError(f"size mismatch (got input: {_shape(shape)} , target: {_shape(target_shape)}")
    elif target_shape[1:] != shape[2:]:
        expected = (shape[0],) + shape[2:]
        raise RuntimeError(f"Expected target size {_shape(expected)}, got {_shape(target_shape)}")
    if target.dtype not in _CLASS_INDEX_DTYPES:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_type_name(target.dtype)}")
    if weight is not None:
        check_weight(input, weight, spatial=ndim == 4)
    if ndim == 1:
        target = target.reshape(())
    return target, (weight.reshape(-1) if weight is not None else None)


_CLASS_INDEX_DTYPES = (ember.int64, ember.uint8)


def check_weight(input, weight, spatial=False, prefix=""):
    """PyTorch's checks on a per-class ``weight``: one entry per class, the input's dtype,
    and (for class indices, ``prefix=""``) no ``requires_grad``: NLL has no weight gradient."""
    if weight is None:
        return
    classes = input.shape[0] if input.ndim == 1 else input.shape[1]
    if spatial:  # PyTorch's nll_loss2d checks only the number of elements
        if weight.numel() != classes:
            raise RuntimeError("weight tensor should be defined either for all or no classes")
    elif weight.ndim != 1 or weight.shape[0] != classes:
        raise RuntimeError(f"{prefix}weight tensor should be defined either for all {classes} classes or no "
                           f"classes but got weight tensor of shape: {_shape(weight.shape)}")
    if prefix:  # class probabilities: PyTorch's composite promotes dtypes and differentiates weight
        return
    if weight.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {_type_name(input.dtype)} but found {_type_name(weight.dtype)}")
    if weight.requires_grad and grad_state.enabled:  # only a recorded call is refused
        name = "nll_loss2d_forward" if spatial else "nll_loss_forward"
        raise RuntimeError(f"The function '{name}' is not differentiable with respect to argument 'weight'. "
                           "This input cannot have requires_grad True.")


def _type_name(dtype):
    from ember.native.support._inplace import _type_name as name

    return name(dtype)


# --- kernels: plain array code, shared with cross_entropy.py ------------------------

def class_dim_of(x):
    return 0 if x.ndim == 1 else 1


def target_weights(xp, target, weight, ignore_index, classes, dtype, check=True):
    """Per position: the safe index (ignored -> 0), ``w[t]`` (0 where ignored) and the
    mask of positions not ignored.

    Raises PyTorch's IndexError for an index outside ``[0, classes)`` that is not ignored
    (``check=False`` skips this where the forward already checked).
    """
    target = target.astype(xp.int64, copy=False)
    valid = target != ignore_index
    safe = xp.where(valid, target, 0)
    if check and safe.size and (int(safe.min()) < 0 or int(safe.max()) >= classes):
        bad = (safe < 0) | (safe >= classes)
        raise IndexError(f"Target {int(safe[bad].ravel()[0])} is out of bounds.")
    if weight is None:
        picked_weight = valid.astype(dtype)
    else:
        picked_weight = xp.where(valid, weight[safe], 0).astype(dtype, copy=False)
    return safe, picked_weight, valid


def with_class_dim(a, class_dim):
    """``a`` with a size-1 class dim inserted, to broadcast against the input."""
    return a.reshape(a.shape[:class_dim] + (1,) + a.shape[class_dim:])


def pick(xp, x, safe, class_dim):
    """``x`` at the target class of every position (``x[n, t[n, ...], ...]``)."""
    return xp.take_along_axis(x, with_class_dim(safe, class_dim), axis=class_dim).squeeze(class_dim)


def target_positions(xp, safe, class_dim):
    """The advanced index of each position's target entry: ``x[target_positions(...)]``."""
    index = []
    for axis, size in enumerate(safe.shape):
        shape = [1] * safe.ndim
        shape[axis] = size
        index.append(xp.arange(size).reshape(shape))
    index.insert(class_dim, safe)
    return tuple(index)


def onehot(xp, safe, classes, class_dim, dtype):
    """A ``(N, C, ...)`` array with 1 at each position's target class."""
    shape = [1] * (safe.ndim + 1)
    shape[class_dim] = classes
    return (with_class_dim(safe, class_dim) == xp.arange(classes).reshape(shape)).astype(dtype)


def reduce_weighted(xp, losses, picked_weight, reduction):
    """``'none'``: as they are; ``'sum'``; ``'mean'``: the sum over the sum of weights."""
    if reduction == "none":
        return losses
    total = losses.sum()
    if reduction == "sum":
        return total
    denominator = picked_weight.sum()
    if denominator == 0:  # 0 / 0 = nan when every target is ignored, as in PyTorch
        return xp.asarray(float("nan"), dtype=losses.dtype)
    return total / denominator


def mean_scale(xp, picked_weight, valid, reduction):
    """``w[t]`` divided by the mean's denominator where not ignored, 0 where ignored.

    Like PyTorch, a position that is not ignored but whose weights all sum to 0 gets
    ``0 / 0 = nan``; when every position is ignored the gradient is 0.
    """
    if reduction != "mean":
        return picked_weight
    denominator = picked_weight.sum()
    if denominator == 0:
        return xp.where(valid, float("nan"), 0).astype(picked_weight.dtype)
    return picked_weight / denominator


def all_targets_plain(xp, target, ignore_index, classes):
    """Whether every class index is in ``[0, classes)`` and none can be ignored: then
    every weight is 1 and 'mean' divides by N (NOTE [ The plain-rows fast path ] in
    cross_entropy_rows.py)."""
    if target.size == 0 or 0 <= ignore_index < classes:
        return False
    if target.dtype == xp.uint8:
        return int(target.max()) < classes
    # one reduction: a negative index, read as unsigned, is beyond any class count
    return int(target.view(xp.uint64).max()) < classes


def flat_positions(xp, target, rows, classes):
    """The index of each row's target in the flattened ``(rows, classes)`` input."""
    return xp.arange(0, rows * classes, classes) + target


def _plain(xp, x, target, weight, ignore_index):
    return x.ndim == 2 and weight is None and all_targets_plain(xp, target, ignore_index, x.shape[1])


@library.custom_op("loss::nll_loss", save="inputs", jvp=reductions.loss_jvp)
def nll_loss_op(xp, x, target, weight, *, reduction="mean", ignore_index=-100):
    """``-w[t] * x[t]`` per position, then reduced (see the module docstring)."""
    if _plain(xp, x, target, weight, ignore_index):  # no weights or masks: a gather
        picked = x.take(flat_positions(xp, target, *x.shape))
        if reduction == "none":
            return -picked
        total = -picked.sum()
        return total / x.shape[0] if reduction == "mean" else total
    class_dim = class_dim_of(x)
    safe, picked_weight, _ = target_weights(xp, target, weight, ignore_index, x.shape[class_dim], x.dtype)
    losses = -picked_weight * pick(xp, x, safe, class_dim)
    return reduce_weighted(xp, losses, picked_weight, reduction)


@library.custom_op("loss::nll_loss_coefficients")
def nll_coefficients_op(xp, x, target, weight, *, reduction="mean", ignore_index=-100):
    """The constant gradient of ``nll_loss`` w.r.t. ``x`` for a unit output gradient."""
    class_dim = class_dim_of(x)
    classes = x.shape[class_dim]
    safe, picked_weight, valid = target_weights(xp, target, weight, ignore_index, classes, x.dtype)
    scale = -mean_scale(xp, picked_weight, valid, reduction)
    return onehot(xp, safe, classes, class_dim, x.dtype) * with_class_dim(scale, class_dim)


@library.custom_op("loss::nll_loss_backward")
def nll_backward_op(xp, grad, x, target, weight, *, reduction="mean", ignore_index=-100):
    """``grad * coefficients`` in one kernel: zeros, with ``-grad * w[t] / denominator``
    written at each position's target class (no one-hot array formed)."""
    if _plain(xp, x, target, weight, ignore_index):
        out = xp.zeros(x.shape, x.dtype)
        flat = out.reshape(-1)  # a view: out is new and C-ordered
        flat[flat_positions(xp, target, *x.shape)] = -(grad / x.shape[0]) if reduction == "mean" else -grad
        return out
    class_dim = class_dim_of(x)
    safe, picked_weight, valid = target_weights(xp, target, weight, ignore_index, x.shape[class_dim], x.dtype,
                                                check=False)
    out = xp.zeros_like(x)
    out[target_positions(xp, safe, class_dim)] = -mean_scale(xp, picked_weight, valid, reduction) * grad
    return out


def _nll_backward(ctx, grad):
    x, target, weight = ctx.saved_inputs
    if not grad_state.enabled:  # the common case: one op, NOTE [ Fused softmax backwards ]
        return nll_backward_op(grad, x.detach(), target, weight, **ctx.attrs), None, None
    coefficients = nll_coefficients_op(x.detach(), target, weight, **ctx.attrs)
    if ctx.attrs.get("reduction", "mean") == "none" and x.ndim > 1:
        grad = grad.unsqueeze(1)
    return grad * coefficients, None, None


library.register_autograd(nll_loss_op, _nll_backward)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """The negative log-likelihood loss of class indices: ``-weight[t] * input[t]`` per position.

    Args:
        input: log-probabilities, ``(N, C)``, ``(C,)`` or ``(N, C, d1, ..., dK)``.
        target: class indices (int64 or uint8), ``(N,)``, ``()`` or ``(N, d1, ..., dK)``.
        weight: a ``(C,)`` tensor of per-class weights.
        ignore_index: a target value that contributes neither loss nor weight.
        reduction: ``'none'``, ``'mean'`` (over the sum of the weights) or ``'sum'``.

    Returns:
        A scalar, or the per-position losses for ``reduction='none'``.

    >>> import ember
    >>> from ember_loss.nll import nll_loss
    >>> nll_loss(ember.tensor([[-1.0, -2.0], [-3.0, -0.5]]), ember.tensor([0, 1]))
    tensor(0.7500)
    """
    reduction = reductions.resolve(size_average, reduce, reduction)
    target, weight = check_class_target(input, target, weight)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"nll_loss_out_frame\" not implemented for '{_type_name(input.dtype)}'")
    return nll_loss_op(input, target, weight, reduction=reduction, ignore_index=ignore_index)
