"""``linear_cross_entropy``: cross entropy of ``linear(input, linear_weight, linear_bias)``,
with an optional chunked path that never holds the whole logits.

PyTorch counterpart: ``linear_cross_entropy`` in torch/nn/functional.py,
torch/nn/modules/linear_cross_entropy.py and linear_cross_entropy_options.py (v2.13).

# NOTE [ Chunked linear cross entropy ]
# A language model's head multiplies (N, in_features) activations by a (C, in_features)
# weight with C, the vocabulary, in the tens of thousands: the (N, C) logits are the
# largest tensor of the step, and autograd keeps them (or their softmax) for backward.
# With ``options`` the batch is cut into chunks of ``batch_chunk_size`` rows; each chunk's
# (rows, C) logits are made, turned into the loss of those rows and into their gradient
# ``dz = w[t] * (softmax(z) - onehot(t))`` (divided by the total weight for "mean"),
# and dropped. For "mean" and "sum" the forward multiplies ``dz`` back at once, so what
# it keeps is the size of the inputs: ``dz @ W`` for the input, the running sum of
# ``dz^T @ x`` for the weight and of ``dz`` for the bias, which backward scales by the
# loss's gradient. For "none" the forward keeps nothing but its inputs and backward
# makes each chunk's logits again, its ``dz`` scaled row by row by the incoming
# gradient. Both are a Function of their own (torch: a custom op), so the graph holds no
# logits either. As torch's, the scalar path's backward consumes its buffers: a second
# backward raises unless ``allow_retain_graph=True``; neither is differentiable twice.
# ember computes float16 and bfloat16 in float32 whatever ``acc_policy`` and
# ``acc_dtype`` say (they are validated and otherwise change nothing).
"""

import dataclasses
import warnings

import ember
from ember.autograd.function import Function, once_differentiable

__all__ = ["LinearCrossEntropyOptions", "linear_cross_entropy"]

_POLICIES = {"auto", "accurate", "balanced", "compact"}
_AUTO = ("accurate", "aspect_ratio")  # torch's pick for (cpu, float16 / bfloat16)
_AUTO_FALLBACK = ("compact", "aspect_ratio:2")  # every other (device, dtype)


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """How :func:`linear_cross_entropy` chunks the batch (NOTE [ Chunked linear cross
    entropy ]): ``batch_chunk_size`` rows at a time, or a size from ``chunking_method``
    (``"aspect_ratio[:N]"``: each chunk's logits as large as the input, divided by N;
    ``"auto"``: torch's pick per device and dtype); ``acc_policy`` and ``acc_dtype``
    are torch's precision knobs, checked and otherwise inert in ember."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None

    def __post_init__(self):
        if self.acc_policy not in _POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            factor = factor if sep else "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        size = self.batch_chunk_size
        if not (size is None or isinstance(size, int) and not isinstance(size, bool) and size > 0):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {size!r}")
        floats = (ember.float16, ember.bfloat16, ember.float32, ember.float64)
        if self.acc_dtype is not None and self.acc_dtype not in floats:
            raise ValueError("acc_dtype must be one of {None, torch.float16, torch.bfloat16, torch.float32, "
                             f"torch.float64}}, got {self.acc_dtype!r}. Pass acc_dtype=None to let the op "
                             "pick automatically.")

    def chunk_size(self, num_batches, in_features, num_classes, dtype):
        """The rows per chunk for these shapes, as torch's ``_adjust`` resolves it."""
        method = self.chunking_method
        if method == "auto" and self.batch_chunk_size is not None:
            method = None
        if method == "auto":
            auto = _AUTO if dtype in (ember.float16, ember.bfloat16) else _AUTO_FALLBACK
            method = auto[1]
        size = num_batches if self.batch_chunk_size is None else min(self.batch_chunk_size, num_batches)
        if method is None:
            return size
        name, _, factor = method.partition(":")
        per_class = -(-num_classes // in_features)
        wanted = -(-num_batches // per_class)
        from_ratio = min((1 << (wanted - 1).bit_length()) // int(factor or 1), num_batches)
        if self.batch_chunk_size is not None and self.batch_chunk_size != from_ratio:
            raise ValueError(f"batch_chunk_size (={self.batch_chunk_size}) and chunking_method ('{method}') give "
                             f"different batch_chunk_size (={from_ratio}). Set chunking_method=None to use "
                             "batch_chunk_size.")
        return max(from_ratio, 1)


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``; with
    ``options``, computed a chunk of the batch at a time (NOTE [ Chunked linear cross
    entropy ]). ``linear_weight`` is (C, in_features) or (C, d_1, ..., d_K, in_features)
    for a K-dimensional loss; ``ignore_index=None`` means -100 for class indices.

    >>> import ember
    >>> x, w = ember.ones(2, 3), ember.zeros(4, 3)
    >>> ember.nn.functional.linear_cross_entropy(x, w, ember.tensor([0, 3]))
    tensor(1.3863)
    """
    logits_shape, out_features = _check(input, linear_weight, target, linear_bias)
    if target.shape == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    if options is not None:
        if (not out_features and reduction in ("mean", "sum", "none") and label_smoothing == 0.0
                and target.dtype == ember.int64):
            return _chunked(input, linear_weight, target, linear_bias, weight, reduction, ignore_index, options)
        warnings.warn("linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
                      "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, out_features == (). "
                      f"Got reduction={reduction!r}, label_smoothing={label_smoothing}, "
                      f"target.dtype={target.dtype}, out_features={tuple(out_features)}, tracing=False, "
                      f"linear_bias.shape={tuple(linear_bias.shape) if linear_bias is not None else None}.",
                      stacklevel=2)
    rows = linear_weight.reshape(-1, linear_weight.shape[-1])
    bias = linear_bias.reshape(-1) if linear_bias is not None else None
    logits = ember.nn.functional.linear(input, rows, bias).reshape(logits_shape)
    return ember.nn.functional.cross_entropy(logits, target, weight=weight, reduction=reduction,
                                             ignore_index=ignore_index, label_smoothing=label_smoothing)


def _check(input, linear_weight, target, linear_bias):
    """torch's checks; ``(logits shape, out_features)``."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    batches, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), "
                           f"got {input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(classes, *out_features)}, got {tuple(linear_bias.shape)}")
    if out_features and not batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires"
                           f" batched input, (N, {in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    return (*batches, classes, *out_features), out_features


def _chunked(input, linear_weight, target, linear_bias, weight, reduction, ignore_index, options):
    batched = input.dim() == 2
    if not batched:
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    size = options.chunk_size(input.shape[0], input.shape[1], linear_weight.shape[0], input.dtype)
    if reduction == "none":
        loss = _ChunkedRows.apply(input, linear_weight, linear_bias, target, weight, ignore_index, size)
    else:
        loss = _ChunkedTotal.apply(input, linear_weight, linear_bias, target, weight, reduction == "mean",
                                   ignore_index, size, options.allow_retain_graph)
    return loss if batched else loss.squeeze(0)


def _chunk_pieces(input, linear_weight, linear_bias, target, weight, ignore_index, start, stop):
    """One chunk's ``(x, per-row loss, dz)``: dz is d(sum of the rows' losses)/d(logits)."""
    work = ember.float32 if input.dtype in (ember.float16, ember.bfloat16) else input.dtype
    x = input[start:stop].to(work)
    logits = x.matmul(linear_weight.to(work).t())
    if linear_bias is not None:
        logits = logits + linear_bias.to(work)
    rows = target[start:stop]
    kept = rows != ignore_index
    safe = ember.where(kept, rows, ember.zeros_like(rows))
    log_probs = logits.log_softmax(1)
    scale = kept.to(logits.dtype) if weight is None else weight.to(logits.dtype)[safe] * kept
    loss = -log_probs.gather(1, safe.unsqueeze(1)).squeeze(1) * scale
    dz = log_probs.exp()
    dz[ember.arange(dz.shape[0]), safe] -= 1
    return x, loss, dz * scale.unsqueeze(1)


def _chunk_starts(count, size):
    return range(0, count, size)


class _ChunkedTotal(Function):
    """Chunked "mean" or "sum": the gradients made in forward, scaled in backward."""

    @staticmethod
    def forward(ctx, input, linear_weight, linear_bias, target, weight, mean, ignore_index, size, retain):
        count = input.shape[0]
        total = ember.zeros((), dtype=ember.float64 if input.dtype == ember.float64 else ember.float32)
        grad_input = ember.zeros(input.shape, dtype=total.dtype)
        grad_weight = ember.zeros(linear_weight.shape, dtype=total.dtype)
        grad_bias = ember.zeros(linear_weight.shape[:1], dtype=total.dtype)
        kept_weight = ember.zeros((), dtype=total.dtype)
        for start in _chunk_starts(count, size):
            stop = min(start + size, count)
            x, loss, dz = _chunk_pieces(input, linear_weight, linear_bias, target, weight, ignore_index, start, stop)
            total = total + loss.sum()
            grad_input[start:stop] = dz.matmul(linear_weight.to(dz.dtype))
            grad_weight += dz.t().matmul(x.to(dz.dtype))
            grad_bias += dz.sum(0)
            rows = target[start:stop]
            kept = (rows != ignore_index).to(dz.dtype)
            safe = ember.where(rows != ignore_index, rows, ember.zeros_like(rows))
            kept_weight = kept_weight + (kept.sum() if weight is None else (weight.to(dz.dtype)[safe] * kept).sum())
        divisor = kept_weight if mean else ember.ones((), dtype=total.dtype)
        ctx.grads = [g / divisor for g in (grad_input, grad_weight, grad_bias)]
        ctx.dtypes = (input.dtype, linear_weight.dtype, None if linear_bias is None else linear_bias.dtype)
        ctx.retain = retain
        return (total / divisor).to(input.dtype)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        if ctx.grads is None:
            raise RuntimeError("linear_cross_entropy: backward called a second time on a chunked loss whose "
                               "gradients were consumed; construct LinearCrossEntropyOptions with "
                               "allow_retain_graph=True to call backward more than once.")
        grads = [None if dtype is None else (g * grad.to(g.dtype)).to(dtype)
                 for g, dtype in zip(ctx.grads, ctx.dtypes)]
        if not ctx.retain:
            ctx.grads = None
        return (*grads, None, None, None, None, None, None)


class _ChunkedRows(Function):
    """Chunked "none": the losses in forward; each chunk's logits made again in backward."""

    @staticmethod
    def forward(ctx, input, linear_weight, linear_bias, target, weight, ignore_index, size):
        ctx.save_for_backward(input, linear_weight, linear_bias, target, weight)
        ctx.ignore_index, ctx.size = ignore_index, size
        losses = [_chunk_pieces(input, linear_weight, linear_bias, target, weight, ignore_index, start,
                                min(start + size, input.shape[0]))[1]
                  for start in _chunk_starts(input.shape[0], size)]
        return ember.cat(losses).to(input.dtype) if losses else input.new_zeros((0,))

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        input, linear_weight, linear_bias, target, weight = ctx.saved_tensors
        grad_input = ember.zeros(input.shape, dtype=ember.float64 if input.dtype == ember.float64 else ember.float32)
        grad_weight = ember.zeros(linear_weight.shape, dtype=grad_input.dtype)
        grad_bias = ember.zeros(linear_weight.shape[:1], dtype=grad_input.dtype)
        for start in _chunk_starts(input.shape[0], ctx.size):
            stop = min(start + ctx.size, input.shape[0])
            x, _, dz = _chunk_pieces(input, linear_weight, linear_bias, target, weight, ctx.ignore_index, start, stop)
            dz = dz * grad[start:stop].to(dz.dtype).unsqueeze(1)
            grad_input[start:stop] = dz.matmul(linear_weight.to(dz.dtype))
            grad_weight += dz.t().matmul(x.to(dz.dtype))
            grad_bias += dz.sum(0)
        bias_grad = None if linear_bias is None else grad_bias.to(linear_bias.dtype)
        return grad_input.to(input.dtype), grad_weight.to(linear_weight.dtype), bias_grad, None, None, None, None
