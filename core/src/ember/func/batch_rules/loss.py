"""Batch rules of the losses of ember-loss (found by name: the core imports no plugin).

PyTorch counterpart: aten/src/ATen/functorch/BatchRulesLoss.cpp (``mse_loss``: the
unreduced loss, then reduced per sample) and BatchRulesDecompositions.cpp
(``cross_entropy``, ``nll_loss``) (v2.13).
"""

from ember import dtypes
from ember.func.batch_rules import register
from ember.func.batch_rules._helpers import logical_rank, materialize, unwrap, wrap
from ember.func.batch_rules.pointwise import pointwise

register("loss::binary_cross_entropy", "loss::binary_cross_entropy_with_logits")(pointwise)  # reduced after


def _reduced(out, reduction):
    """The unreduced batched loss reduced per sample, with ember ops on the batch."""
    if reduction == "mean":
        return out.mean()
    if reduction == "sum":
        return out.sum()
    return out


@register("loss::mse_loss")
def mse_loss(op, inputs, attrs, info):
    return _reduced(pointwise(op, inputs, dict(attrs, reduction="none"), info), attrs["reduction"])


@register("loss::cross_entropy", "loss::nll_loss")
def class_loss(op, inputs, attrs, info):
    """The batch folded into N (each sample's rows are rows of one call), unreduced,
    then reduced per sample: a mean divides by the sample's own total weight of the
    targets that are not ignored, as torch's mean does."""
    x, target, weight = inputs
    if weight is not None and unwrap(weight, info.level)[1]:
        return NotImplemented
    rank = logical_rank(x)
    x_value, target_value = materialize(x, info), materialize(target, info)
    if rank >= 2:  # (N, C, ...) per sample: (B*N, C, ...)
        x_value, target_value = x_value.flatten(0, 1), target_value.flatten(0, 1)
    out = op(x_value, target_value, weight, **dict(attrs, reduction="none"))
    if isinstance(out, tuple):  # the loss, then what the op keeps for its backward (unused by callers)
        return (_class_loss(out[0], target, weight, attrs, info, rank),) + tuple(out[1:])
    return _class_loss(out, target, weight, attrs, info, rank)


def _class_loss(out, target, weight, attrs, info, rank):
    size = info.size
    if rank >= 2:
        out = out.unflatten(0, (size, -1))
    out = wrap(out, info.level)
    reduction = attrs["reduction"]
    if reduction != "mean" or target.is_floating_point():
        return _reduced(out, reduction)
    return out.sum() / _target_weights(target, weight, attrs["ignore_index"]).sum()


def _target_weights(target, weight, ignore_index):
    """Each target's class weight (1 without weights), 0 where it is ignored."""
    from ember.nn.functional import embedding

    valid = target != ignore_index
    if weight is None:
        return valid.to(dtypes.get_default_dtype())
    looked_up = embedding(target.masked_fill(~valid, 0), weight.unsqueeze(1)).squeeze(-1)
    return looked_up * valid
