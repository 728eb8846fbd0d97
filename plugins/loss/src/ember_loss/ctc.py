"""The connectionist temporal classification loss: ``ctc_loss`` (``nn.CTCLoss``).

PyTorch counterpart: aten/src/ATen/native/LossCTC.cpp (``ctc_loss``, the CPU
``ctc_loss_cpu_template`` and ``ctc_loss_backward_cpu_template``) and
torch/nn/functional.py (``ctc_loss``) (v2.13).

CTC scores every alignment of a target sequence l (length L, no blanks) with T frames
of log-probabilities: an alignment is a path through the extended target
l' = (blank, l_1, blank, l_2, ..., l_L, blank) (length 2L + 1) that, frame by frame,
stays on a symbol, moves to the next one, or skips a blank between two different
labels. The loss is -log of the summed probability of all paths, computed in log space
by the forward (alpha) recursion:

    alpha[0, 0] = lp[0, blank],  alpha[0, 1] = lp[0, l'_1]
    alpha[t, s] = lp[t, l'_s] + logsumexp(alpha[t-1, s], alpha[t-1, s-1],
                                          alpha[t-1, s-2] if l'_s != blank and l'_s != l'_{s-2})
    nll = -logsumexp(alpha[T-1, 2L], alpha[T-1, 2L-1])

and beta is the same recursion run backward from the last frame. Each sequence of the
batch has its own input length T_b and target length L_b.

NOTE [ The gradient of ctc_loss ]
PyTorch's backward does not return the derivative of the loss with respect to
``log_probs``. It returns

    grad[t, c] = exp(lp[t, c]) - exp(ab[t, c] + nll - lp[t, c]),
    ab[t, c] = logsumexp over the s with l'_s = c of alpha[t, s] + beta[t, s]

(zero past the sequence's input length), which is the derivative with respect to the
*logits* that ``log_softmax`` turned into ``lp``: the softmax's Jacobian is folded in,
so the pair log_softmax + ctc_loss gets its gradient in one step (the true derivative
is the second term alone, negated). ember returns PyTorch's gradient, so that training
code and gradients agree with PyTorch's; torch's op_db checks it through a wrapper that
applies log_softmax first (``gradcheck_wrapper_ctc_loss``). With ``zero_infinity`` an
impossible alignment (nll = inf) gets loss 0 and gradient 0, as PyTorch's.
"""

import numpy as np

import ember
from ember import library
from ember.amp.state import composite_inputs
from ember_loss import reduction as reductions


def _logsumexp(values, axis):
    """log(sum(exp)) along ``axis``, -inf where every value is -inf."""
    peak = values.max(axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0)
    with np.errstate(divide="ignore"):
        return np.log(np.exp(values - peak).sum(axis=axis)) + peak.squeeze(axis)


def _extended(target, blank):
    """l' = (blank, l_1, blank, ..., l_L, blank) and, per position, whether the path
    may skip from s - 2 (a label different from the label two back)."""
    labels = np.full(2 * len(target) + 1, blank, dtype=np.int64)
    labels[1::2] = target
    skip = np.zeros(len(labels), dtype=bool)
    skip[2:] = (labels[2:] != blank) & (labels[2:] != labels[:-2])
    return labels, skip


def _alpha(lp, labels, skip):
    """The forward variables, (T, 2L + 1), in log space."""
    steps, width = lp.shape[0], len(labels)
    alpha = np.full((steps, width), -np.inf, dtype=lp.dtype)
    alpha[0, :min(2, width)] = lp[0, labels[:2]]
    for t in range(1, steps):
        previous = alpha[t - 1]
        options = np.full((3, width), -np.inf, dtype=lp.dtype)
        options[0] = previous
        options[1, 1:] = previous[:-1]
        options[2, 2:] = np.where(skip[2:], previous[:-2], -np.inf)
        alpha[t] = lp[t, labels] + _logsumexp(options, 0)
    return alpha


def _beta(lp, labels, skip):
    """The backward variables, (T, 2L + 1), in log space (each includes lp[t, l'_s])."""
    steps, width = lp.shape[0], len(labels)
    beta = np.full((steps, width), -np.inf, dtype=lp.dtype)
    beta[steps - 1, max(width - 2, 0):] = lp[steps - 1, labels[max(width - 2, 0):]]
    for t in range(steps - 2, -1, -1):
        following = beta[t + 1]
        options = np.full((3, width), -np.inf, dtype=lp.dtype)
        options[0] = following
        options[1, :-1] = following[1:]
        options[2, :-2] = np.where(skip[2:], following[2:], -np.inf)
        beta[t] = lp[t, labels] + _logsumexp(options, 0)
    return beta


def _sequences(log_probs, targets, input_lengths, target_lengths):
    """Per batch element: its frames (T_b, C) and its target (L_b,), from padded (N, S)
    or concatenated 1-d targets."""
    offsets = np.concatenate([[0], np.cumsum(target_lengths)])
    for b in range(log_probs.shape[1]):
        length = int(target_lengths[b])
        target = targets[b, :length] if targets.ndim == 2 else targets[offsets[b]:offsets[b] + length]
        yield b, log_probs[:int(input_lengths[b]), b], target


def _nll(lp, target, blank):
    if lp.shape[0] == 0:  # no frames: only the empty target has an alignment
        return lp.dtype.type(0.0 if len(target) == 0 else np.inf)
    labels, skip = _extended(target, blank)
    alpha = _alpha(lp, labels, skip)
    return -_logsumexp(alpha[-1, max(len(labels) - 2, 0):], 0)


def _ctc_backward(ctx, grad):
    log_probs, targets, input_lengths, target_lengths = ctx.saved_inputs
    return (ctc_backward_op(grad, log_probs.detach(), targets, input_lengths, target_lengths, **ctx.attrs),
            None, None, None)


@library.custom_op("loss::ctc_loss", save="inputs", backward=_ctc_backward)
def ctc_loss_op(xp, log_probs, targets, input_lengths, target_lengths, *, blank=0, zero_infinity=False):
    """The negative log-likelihood of each batch element's target, ``(N,)``."""
    losses = np.zeros(log_probs.shape[1], dtype=log_probs.dtype)
    for b, lp, target in _sequences(log_probs, targets, input_lengths, target_lengths):
        losses[b] = _nll(lp, target, blank)
    if zero_infinity:
        losses[np.isinf(losses)] = 0
    return losses


@library.custom_op("loss::ctc_loss_backward")
def ctc_backward_op(xp, grad, log_probs, targets, input_lengths, target_lengths, *, blank=0, zero_infinity=False):
    """PyTorch's gradient with respect to ``log_probs`` (NOTE [ The gradient of ctc_loss ])."""
    out = np.zeros(log_probs.shape, dtype=log_probs.dtype)
    for b, lp, target in _sequences(log_probs, targets, input_lengths, target_lengths):
        nll = _nll(lp, target, blank)
        if lp.shape[0] == 0 or (zero_infinity and np.isinf(nll)):
            continue
        labels, skip = _extended(target, blank)
        both = _alpha(lp, labels, skip) + _beta(lp, labels, skip)
        per_class = np.full(lp.shape, -np.inf, dtype=lp.dtype)  # logsumexp over the s with l'_s = c
        for c in np.unique(labels):
            per_class[:, c] = _logsumexp(both[:, labels == c], 1)
        with np.errstate(invalid="ignore", over="ignore"):
            out[:lp.shape[0], b] = (np.exp(lp) - np.exp(per_class + nll - lp)) * grad[b]
    return out



def _lengths(lengths, name):
    if isinstance(lengths, ember.Tensor):
        return lengths.to(ember.int64)
    if isinstance(lengths, (list, tuple)):
        return ember.tensor([int(n) for n in lengths], dtype=ember.int64)
    raise TypeError(f"ctc_loss(): argument '{name}' must be a tuple of ints or a Tensor, not "
                    f"{type(lengths).__name__}")


def _check(log_probs, targets, input_lengths, target_lengths, blank):
    """PyTorch's argument checks, with its messages."""
    steps, batch, classes = log_probs.shape
    if log_probs.numel() == 0:
        raise RuntimeError("log_probs tensor must not be empty")
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    if input_lengths.numel() != batch:
        raise RuntimeError("input_lengths must be of size batch_size")
    if target_lengths.numel() != batch:
        raise RuntimeError("target_lengths must be of size batch_size")
    where = " (while checking arguments for ctc_loss_allocate_outputs)"
    for name, lengths in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
        values = lengths.reshape(-1).tolist()
        if values and min(values) < 0:
            raise RuntimeError(f"Expected {name} to have value at least 0, but got value {min(values)}{where}")
    values = input_lengths.reshape(-1).tolist()
    if values and max(values) > steps:
        raise RuntimeError(f"Expected input_lengths to have value at most {steps}, but got value {max(values)}{where}")
    needed = target_lengths.reshape(-1).tolist()
    if targets.ndim == 1 and targets.shape[0] != sum(needed):
        raise RuntimeError(f"Expected tensor to have size {sum(needed)} at dimension 0, but got size "
                           f"{targets.shape[0]} for argument #2 'targets'{where}")
    if targets.ndim == 2 and needed and targets.shape[1] < max(needed):
        raise RuntimeError(f"Expected tensor to have size at least {max(needed)} at dimension 1, but got size "
                           f"{targets.shape[1]} for argument #2 'targets'{where}")


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """The CTC loss of each sequence's target under its frames' log-probabilities.

    Args:
        log_probs: ``(T, N, C)`` (or ``(T, C)`` unbatched) log-probabilities, e.g. from
            ``log_softmax(dim=2)``.
        targets: ``(N, S)`` padded targets, or the targets concatenated in one 1-d
            tensor (``(L,)`` unbatched); no blank among them.
        input_lengths, target_lengths: ``(N,)`` tensors or tuples of ints.
        blank: the blank class.
        reduction: ``'none'`` (per sequence), ``'sum'``, or ``'mean'`` (each loss
            divided by its target length, then averaged over the batch).
        zero_infinity: impossible alignments (a target longer than its frames allow)
            give 0 and a zero gradient instead of inf.

    >>> import ember
    >>> from ember_loss.ctc import ctc_loss
    >>> log_probs = ember.tensor([[0.5, 0.5], [0.5, 0.5]]).log().unsqueeze(1)
    >>> ctc_loss(log_probs, ember.tensor([[1]]), [2], [1], reduction="sum")
    tensor(0.2877)
    """
    (log_probs,) = composite_inputs("ctc_loss", log_probs)  # on autocast's fp32 list
    reduction = reductions.check(reduction)
    if isinstance(input_lengths, ember.Tensor) != isinstance(target_lengths, ember.Tensor):
        raise TypeError("ctc_loss(): input_lengths and target_lengths must both be tensors or both tuples of ints")
    input_lengths = _lengths(input_lengths, "input_lengths")
    target_lengths = _lengths(target_lengths, "target_lengths")
    unbatched = log_probs.ndim == 2
    if unbatched:
        log_probs, targets = log_probs.unsqueeze(1), targets.unsqueeze(0)
        input_lengths, target_lengths = input_lengths.reshape(1), target_lengths.reshape(1)
    targets = targets.to(ember.int64)
    _check(log_probs, targets, input_lengths, target_lengths, blank)
    losses = ctc_loss_op(log_probs, targets, input_lengths, target_lengths, blank=blank,
                         zero_infinity=bool(zero_infinity))
    if reduction == "mean":
        return (losses / target_lengths.clamp_min(1).to(losses.dtype)).mean()
    if reduction == "sum":
        return losses.sum()
    return losses.squeeze(0) if unbatched else losses
