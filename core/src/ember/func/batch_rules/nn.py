"""Batch rules of the network ops: convolution, layer norm, dropout.

PyTorch counterpart: aten/src/ATen/functorch/BatchRulesConvolution.cpp (the batch
folded into N, or into the groups for a batched weight), BatchRulesNorm.cpp
(``native_layer_norm``) and BatchRulesRandomness.cpp (``native_dropout``) (v2.13).
"""

from ember.func.batch_rules import register
from ember.func.batch_rules._helpers import logical_rank, pad_to_rank, unwrap, wrap
from ember.func.batch_rules.random import refuse_random


@register("aten::convolution")
def convolution(op, inputs, attrs, info):
    """A batch of inputs through one weight: the batch folded into N. A batched weight
    (an ensemble): the batch folded into the channels and the groups, so sample b's
    channels meet only weight b. Transposed convolutions take the loop."""
    x, weight, bias = inputs
    x_value, x_batched = unwrap(x, info.level)
    w_value, w_batched = unwrap(weight, info.level)
    b_value, b_batched = unwrap(bias, info.level) if bias is not None else (None, False)
    if attrs["transposed"]:
        return NotImplemented
    size = info.size
    if not w_batched:
        out = op(x_value.flatten(0, 1) if x_batched else x, weight, None if b_batched else bias, **attrs)
        if x_batched:
            out = out.unflatten(0, (size, -1))
        else:
            out = out.unsqueeze(0).expand((size,) + tuple(out.shape))
        if b_batched:
            out = out + pad_to_rank(b_value, 1).reshape((size, 1, -1) + (1,) * (out.dim() - 3))
        return wrap(out, info.level)
    # x: (N, B*C, ...); weight: (B*O, C/g, ...); groups: B*g
    if x_batched:
        x_value = x_value.movedim(0, 1)  # (N, B, C, ...)
    else:
        x_value = x.unsqueeze(1).expand((x.shape[0], size) + tuple(x.shape[1:]))
    x_value = x_value.flatten(1, 2)
    w_flat = w_value.flatten(0, 1)
    b_flat = None
    if bias is not None:
        b_flat = (b_value if b_batched else bias.unsqueeze(0).expand(size, bias.shape[0])).flatten(0, 1)
    out = op(x_value, w_flat, b_flat, **dict(attrs, groups=attrs["groups"] * size))
    out = out.unflatten(1, (size, -1)).movedim(1, 0)
    return wrap(out, info.level)


@register("norm::layer_norm_stats", "norm::layer_norm", "norm::rms_norm")
def layer_norm(op, inputs, attrs, info):
    """Normalized over the last dims of each sample: the physical value's last dims are
    the same, so an unbatched weight and bias apply as they are. A batched weight or
    bias takes the loop."""
    x = inputs[0]
    weights = inputs[1:3] if op.name != "layer_norm_stats" else ()
    if any(w is not None and unwrap(w, info.level)[1] for w in weights):
        return NotImplemented
    rank = logical_rank(x)
    physical = [pad_to_rank(unwrap(t, info.level)[0], rank) if unwrap(t, info.level)[1] else t for t in inputs]
    result = op(*physical, **attrs)
    if isinstance(result, tuple):
        return tuple(wrap(r, info.level) for r in result)
    return wrap(result, info.level)


@register("aten::native_dropout")
def native_dropout(op, inputs, attrs, info):
    """randomness="error" refuses; "same" keeps the one mask drawn for a sample (it
    broadcasts over the batch); "different" draws a mask for the whole batch."""
    from ember.native.dropout import _mask

    refuse_random(info)
    value, batched = unwrap(inputs[0], info.level)
    mask = attrs["mask"]
    if not batched:
        return NotImplemented
    if info.randomness == "different":  # a mask per sample, of the shape drawn for one (a channel
        keep = 1.0 / float(attrs["scale"])  # mask (N, C, 1, ...) stays one: it broadcasts)
        shape = (info.size,) + tuple(mask.shape)
        mask = _mask(value if tuple(value.shape) == shape else mask, shape, keep)
    return wrap(op(value, mask=mask, scale=attrs["scale"]), info.level)


# pooling ops and the rank of the input their kernel takes (N, C, *spatial)
POOLING = {"aten::max_pool2d": 4, "aten::max_pool2d_with_indices": 4, "aten::avg_pool2d": 4,
           "aten::adaptive_avg_pool2d": 4, "aten::adaptive_max_pool2d": 4, "aten::avg_pool3d": 5,
           "aten::max_pool3d_with_indices": 5, "aten::adaptive_max_pool3d": 5}


@register(*POOLING)
def pooling(op, inputs, attrs, info):
    """Pooling works per (sample, channel): the batch folded into N, or, for a sample
    without N, the batch standing for N."""
    value, batched = unwrap(inputs[0], info.level)
    if not batched or any(unwrap(x, info.level)[1] for x in inputs[1:]):
        return NotImplemented
    folded = value.dim() > POOLING[op.qualname]
    result = op(value.flatten(0, 1) if folded else value, *inputs[1:], **attrs)
    outputs = result if isinstance(result, tuple) else (result,)
    outputs = tuple(wrap(out.unflatten(0, (info.size, -1)) if folded else out, info.level) for out in outputs)
    return outputs if isinstance(result, tuple) else outputs[0]


@register("norm::batch_norm_stats")
def batch_norm_stats(op, inputs, attrs, info):
    """Statistics per channel of each sample: the batch folded into the channels,
    (B, N, C, ...) -> (N, B*C, ...), so every (sample, channel) pair is a channel."""
    value, batched = unwrap(inputs[0], info.level)
    if not batched:
        return NotImplemented
    result = op(_channels_folded(value), **attrs)
    outputs = result if isinstance(result, tuple) else (result,)
    outputs = tuple(wrap(out.unflatten(0, (info.size, -1)), info.level) for out in outputs)
    return outputs if isinstance(result, tuple) else outputs[0]


@register("norm::batch_norm")
def batch_norm(op, inputs, attrs, info):
    """The normalization with the batch folded into the channels: the input as in
    ``batch_norm_stats``, every channel vector (weight, bias, mean, invstd) given the
    batch and flattened to B*C."""
    from ember.func.batch_rules._helpers import materialize

    x, *vectors = inputs
    folded = [None if v is None else materialize(v, info).flatten() for v in vectors]
    out = op(_channels_folded(materialize(x, info)), *folded, **attrs)
    return wrap(out.unflatten(1, (info.size, -1)).movedim(1, 0), info.level)


def _channels_folded(value):
    return value.movedim(0, 1).flatten(1, 2)
