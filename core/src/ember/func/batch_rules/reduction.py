"""Batch rules of the ops that work along dims: reductions (with ``dim``/``keepdim``),
softmax and log_softmax, scans, sorts.

PyTorch counterpart: aten/src/ATen/functorch/BatchRulesReduceOps.cpp
(``boxed_reduction_batch_rule``: the logical dims shifted past the batch dim) and
BatchRulesDecompositions.cpp (v2.13).
"""

from ember.func.batch_rules import register
from ember.func.batch_rules._helpers import logical_rank, physical_dim, unwrap, wrap


def _shifted(dims, rank):
    if isinstance(dims, int):
        return physical_dim(dims, rank)
    return tuple(physical_dim(d, rank) for d in dims)


@register("aten::sum", "aten::sum.dim_IntList", "aten::mean", "aten::mean.dim", "aten::amax", "aten::amin",
          "aten::max_all", "aten::min_all", "aten::logsumexp", "aten::var", "aten::std", "aten::norm",
          "aten::nansum", "aten::prod", "aten::all", "aten::any", "aten::aminmax")
def reduce_dims(op, inputs, attrs, info):
    """``dims``, the logical dims reduced, become the physical ones after the batch dim
    (a full reduction reduces every dim but the batch)."""
    x = inputs[0]
    value, batched = unwrap(x, info.level)
    if not batched or "dims" not in attrs:
        return NotImplemented
    rank = logical_rank(x)
    if rank == 0:  # a 0-d sample: reduce a size-1 dim, so the batch is never reduced
        result = op(value.unsqueeze(1), *inputs[1:], **dict(attrs, dims=(1,)))
        return _wrapped(_squeeze_kept(result, attrs), info.level)
    dims = attrs["dims"]
    attrs = dict(attrs, dims=tuple(range(1, rank + 1)) if dims is None else _shifted(dims, rank))
    return _wrapped(op(value, *inputs[1:], **attrs), info.level)


def _squeeze_kept(result, attrs):
    if not attrs.get("keepdim"):
        return result
    if isinstance(result, tuple):
        return tuple(r.squeeze(1) for r in result)
    return result.squeeze(1)


@register("aten::max", "aten::min", "aten::softmax", "aten::log_softmax", "aten::_safe_softmax", "aten::cumsum",
          "aten::cumprod", "aten::logcumsumexp", "aten::cummax", "aten::cummin", "aten::median.dim",
          "aten::nanmedian.dim", "aten::mode", "aten::sort", "aten::argmax", "aten::argmin")
def reduce_dim(op, inputs, attrs, info):
    """The one logical ``dim`` shifted past the batch dim; ``dim=None`` (argmax of the
    whole tensor) flattens each sample first."""
    x = inputs[0]
    value, batched = unwrap(x, info.level)
    if not batched or "dim" not in attrs or any(unwrap(y, info.level)[1] for y in inputs[1:]):
        return NotImplemented
    rank = logical_rank(x)
    if attrs["dim"] is None:
        if attrs.get("keepdim"):
            return NotImplemented
        return _wrapped(op(value.reshape(value.shape[0], -1), *inputs[1:], **dict(attrs, dim=1)), info.level)
    attrs = dict(attrs, dim=physical_dim(attrs["dim"], rank))
    return _wrapped(op(value, *inputs[1:], **attrs), info.level)


def _wrapped(result, level):
    if isinstance(result, tuple):
        return tuple(wrap(r, level) for r in result)
    return wrap(result, level)
