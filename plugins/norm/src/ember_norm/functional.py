"""The functional forms of ember-norm: ``batch_norm``, ``instance_norm``, ``layer_norm``,
``group_norm``, ``rms_norm`` and ``local_response_norm``.

PyTorch counterpart: torch/nn/functional.py (v2.13), the normalization section. They
are reachable as ``ember.nn.functional.<name>`` through ``ember_register_functionals``.

batch_norm and layer_norm run the fused ops of ember_norm/ops; instance_norm is
batch_norm over an (1, N*C, *) view, as in PyTorch (about 2x faster than the
layer-norm op over (N*C, spatial) rows plus a per-channel affine, measured);
group_norm and rms_norm have their own fused ops; local_response_norm is composed of
core ops.
"""



import ember
from ember.autograd.grad_mode import grad_state
from ember.dtypes import OPMATH, REDUCED_FLOATS, SCALAR_TYPE_NAMES, finfo_of
from ember.opmath import round_to
from ember_norm.ops.batch_norm import batch_norm as _batch_norm_op
from ember_norm.ops.batch_norm import batch_norm_stats
from ember_norm.ops.group_norm import group_norm as _group_norm_op
from ember_norm.ops.layer_norm import layer_norm as _layer_norm_op
from ember_norm.ops.layer_norm import layer_norm_stats
from ember_norm.ops.rms_norm import rms_norm as _rms_norm_op


def _check_dtypes(kernel_name, input, *params):
    """Floating input, and parameters of the input's dtype (torch's CPU kernels' rule)."""
    scalar_type = SCALAR_TYPE_NAMES.get(input.dtype.name, input.dtype.name)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel_name}" not implemented for \'{scalar_type}\'')
    for p in params:
        if p is not None and p.dtype != input.dtype:
            if input.dtype.name == "float32":
                raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


def _verify_batch_size(size):
    values = size[0]
    for s in size[2:]:
        values *= s
    if values == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def _verify_spatial_size(size):
    values = 1
    for s in size[2:]:
        values *= s
    if values == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {size}")


def _check_channel_vectors(input, training=True, **vectors):
    """torch's checks, in its order: each vector in turn has one entry per channel (an
    input of fewer than 2 dims has no channel dim, so 0 channels: torch's "running_mean
    should contain 0 elements not 3"), a running statistic missing in evaluation is
    named, and then an input without a channel dim is an IndexError."""
    channels = input.shape[1] if input.dim() > 1 else 0
    for name, t in vectors.items():
        if t is None:
            if name.startswith("running") and not training:
                raise RuntimeError(f"{name} must be defined in evaluation mode")
        elif t.numel() != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {t.numel()}")
    if input.dim() < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(input.dim(), 1)}, "
                         f"{max(input.dim(), 1) - 1}], but got 1)")


def _check_running_stats_grad(running_mean, running_var):
    """torch's autograd refuses running statistics that require grad: the batch norm has
    no gradient for them (it updates them in place, outside the graph)."""
    if not grad_state.enabled:  # not recording (no_grad, or inference_mode even under enable_grad)
        return
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        if t is not None and t.requires_grad:
            raise RuntimeError(f"The function 'native_batch_norm' is not differentiable with respect to argument "
                               f"'{name}'. This input cannot have requires_grad True.")


def _empty_batch_norm(input, weight, bias):
    out = input.clone()
    if weight is not None:
        out = out * weight[0]
    if bias is not None:
        out = out + bias[0]
    return out


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
               eps=1e-5):
    """Normalize each channel of an (N, C, *) input: ``(x - mean) / sqrt(var + eps) * weight + bias``.

    In training the statistics are the batch's (biased variance), and ``running_mean`` /
    ``running_var`` (if given) move toward the batch mean and the *unbiased* batch
    variance: ``running = (1 - momentum) * running + momentum * batch``. In evaluation
    the running statistics are used.

    Args:
        input: (N, C) or (N, C, *).
        running_mean, running_var: (C,) tensors updated in place, or None.
        weight, bias: (C,) tensors or None.
        training: use (and track) batch statistics.
        momentum: the running-average factor.
        eps: added to the variance.

    Returns:
        A tensor shaped like ``input``.

    >>> import ember
    >>> x = ember.tensor([[1.0, 2.0], [3.0, 6.0]])
    >>> ember.nn.functional.batch_norm(x, None, None, training=True, eps=0.0)
    tensor([[-1., -1.],
            [ 1.,  1.]])
    """
    if training:
        _verify_batch_size(input.size())
    if input.numel() == 0:  # torch checks nothing more, and keeps it in the graph
        return _empty_batch_norm(input, weight, bias)
    if not _channel_vectors_fit(input, (running_mean, running_var, weight, bias)):
        _check_channel_vectors(input, training, running_mean=running_mean,
                               running_var=running_var, weight=weight, bias=bias)
        _check_dtypes("batch_norm", input, weight, bias, running_mean, running_var)
        _check_running_stats_grad(running_mean, running_var)
    vectors = (running_mean, running_var, weight, bias)
    if training and _statistics_in_reduced_type(input, vectors):
        mean, invstd, unbiased_var = _reduced_batch_statistics(input, eps)
        _update_reduced_running_stats(running_mean, running_var, mean, unbiased_var,
                                      momentum)
    elif training:
        mean, invstd, unbiased_var = batch_norm_stats(input, eps=eps)
        # An empty batch says nothing about the statistics: leave them as they are
        # (torch).
        if (running_mean is not None or running_var is not None) and input.numel() > 0:
            _update_running_stats(running_mean, running_var, mean, unbiased_var,
                                  momentum)
    else:
        if running_mean is None:
            raise RuntimeError("running_mean must be defined in evaluation mode")
        if running_var is None:
            raise RuntimeError("running_var must be defined in evaluation mode")
        mean, invstd = _running_statistics(running_mean, running_var, eps)
    return _batch_norm_op(input, weight, bias, mean, invstd, training=bool(training),
                          eps=eps)


# NOTE [ The eval batch norm's fixed cost ]
# On a detector's small maps an eval BatchNorm2d is mostly per-call cost (yolo_nano
# runs 33 of them, down to 4x4 maps). On a (32, 64, 1, 1) input under no_grad the
# module took about 45 us against torch's 19: the checks of the four channel vectors
# about 6 us of it, the no_grad block around ``rsqrt(running_var + eps)`` (with grad
# mode already off) 1 to 3 us. So the checks accept in one pass (a floating input,
# vectors of its dtype and length) and run the full ones, which name the problem, only
# when that pass fails; and inference reads the statistics without a second no_grad.


def _channel_vectors_fit(input, vectors):
    """True when every given (C,) vector has the input's dtype and C elements, the
    input is floating and no running statistic requires grad: then
    ``_check_channel_vectors``, ``_check_dtypes`` and ``_check_running_stats_grad``
    would pass. ``vectors`` starts with the two running statistics."""
    dtype = input.dtype
    if input.dim() < 2 or not dtype.is_floating_point:
        return False
    channels = input.shape[1]
    for i, t in enumerate(vectors):
        if t is not None and (t.dtype != dtype or t.numel() != channels or i < 2 and t.requires_grad):
            return False
    return True


def _running_statistics(running_mean, running_var, eps):
    """The eval statistics, outside autograd: the running mean and
    ``1 / sqrt(running_var + eps)`` (NOTE [ The eval batch norm's fixed cost ])."""
    if not grad_state.enabled:
        return running_mean, _invstd(running_var, eps)
    with ember.no_grad():
        return running_mean.detach(), _invstd(running_var.detach(), eps)


def _invstd(running_var, eps):
    """``1 / sqrt(running_var + eps)``; of a float16 or bfloat16 variance in float32,
    which the batch_norm op reads in opmath, so the result rounds once (torch)."""
    dtype = running_var.dtype
    if dtype is ember.float16 or dtype is ember.bfloat16:
        running_var = running_var.float()
    return (running_var + eps).rsqrt()


def _update_running_stats(running_mean, running_var, mean, unbiased_var, momentum):
    """``running = (1 - momentum) * running + momentum * batch``, outside autograd."""
    # (_check_dtypes made sure the running statistics have the input's dtype.)
    with ember.no_grad():
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean, alpha=momentum)
        if running_var is not None:
            running_var.mul_(1 - momentum).add_(unbiased_var, alpha=momentum)


# NOTE [ Batch statistics of a reduced-precision batch ]
# When the input and every channel vector are bfloat16, torch's CPU batch norm keeps its
# statistics in that type (its ``param_t``): the mean, computed in float32, is
# rounded; the sum of squared deviations (from the unrounded mean) is rounded, then
# divided by the count, itself converted to the reduced type (c10's ``BFloat16 /
# int64_t``: 257 values divide by 256), and rounded again; ``1 / sqrt(var + eps)`` is
# computed in float32 from that and rounded; the unbiased variance is the rounded sum
# over the rounded ``count - 1``. The running statistics move in that type's arithmetic:
# each product and sum rounded, momentum and ``1 - momentum`` too, but for the variance,
# whose ``momentum * unbiased`` torch adds in float32 before it rounds. The output is then
# ``x * alpha + beta`` in float32 from the rounded statistics (the op), rounded once.
# With float32 channel vectors (mixed types) everything stays in float32. For float16
# torch rounds only the mean and ``1 / sqrt(var + eps)`` (the variance stays float32), which
# is what the batch_norm_stats op gives (opmath rounds its outputs). Measured on 2-d
# (N, C) bfloat16 inputs, where torch takes another reduction, an output value in a
# few hundred can still be a step apart.


def _statistics_in_reduced_type(input, vectors):
    dtype = input.dtype
    return dtype is ember.bfloat16 and input.numel() > 0 and all(t is None or t.dtype is dtype for t in vectors)


def _reduced_batch_statistics(input, eps):
    """``(mean, invstd, unbiased_var)`` of a float16/bfloat16 batch in its own type (NOTE
    [ Batch statistics of a reduced-precision batch ]), outside autograd."""
    dtype = input.dtype
    with ember.no_grad():
        x = input.detach().float()
        dims = [0] + list(range(2, x.dim()))
        count = x.numel() // x.shape[1]
        mean = x.mean(dims)
        centered = x - mean.reshape([1, -1] + [1] * (x.dim() - 2))
        square_sum = (centered * centered).sum(dims).to(dtype)
        var = square_sum / round_to(count, dtype.np)
        invstd = (var.float() + eps).rsqrt().to(dtype)
        unbiased = square_sum / round_to(count - 1, dtype.np) if count > 1 else square_sum * float("nan")
    return mean.to(dtype), invstd, unbiased


def _update_reduced_running_stats(running_mean, running_var, mean, unbiased_var, momentum):
    """The running statistics moved in their reduced type's arithmetic (NOTE [ Batch
    statistics of a reduced-precision batch ])."""
    with ember.no_grad():
        step = round_to(momentum, mean.dtype.np)
        keep = round_to(1 - step, mean.dtype.np)
        if running_mean is not None:
            running_mean.copy_(mean * step + running_mean * keep)
        if running_var is not None:
            running_var.copy_(unbiased_var.float() * step + (running_var * keep).float())


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalize each channel of each sample of an (N, C, *) input over its spatial dims.

    Computed as batch_norm over the input viewed as (1, N*C, *); running statistics
    (if given) are updated with the average over the batch of the per-sample ones.

    Args:
        input: (N, C, *) with at least one spatial dim.
        running_mean, running_var: (C,) tensors or None.
        weight, bias: (C,) tensors or None.
        use_input_stats: normalize with the sample's statistics (else the running ones).
        momentum, eps: as in ``batch_norm``.

    >>> import ember
    >>> ember.nn.functional.instance_norm(ember.tensor([[[1.0, 3.0]]]), eps=0.0)
    tensor([[[-1.,  1.]]])
    """
    if use_input_stats:
        _verify_spatial_size(input.size())
    elif running_mean is None or running_var is None:
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    n, c = input.shape[0], input.shape[1]
    # Sizes are checked by batch_norm on the (1, N*C) view, so messages count N*C,
    # like torch's.
    folded = input.reshape((1, n * c) + tuple(input.shape[2:]))
    mean_n = running_mean.repeat(n) if running_mean is not None else None
    var_n = running_var.repeat(n) if running_var is not None else None
    weight_n = weight.repeat(n) if weight is not None else None
    bias_n = bias.repeat(n) if bias is not None else None
    out = batch_norm(folded, mean_n, var_n, weight_n, bias_n, use_input_stats, momentum,
                     eps)
    if use_input_stats:
        with ember.no_grad():
            if running_mean is not None:
                running_mean.copy_(mean_n.reshape(n, c).mean(0))
            if running_var is not None:
                running_var.copy_(var_n.reshape(n, c).mean(0))
    return out.reshape(input.shape)


def _as_shape(normalized_shape, fn_name):
    if isinstance(normalized_shape, int):
        return (normalized_shape,)
    try:
        return tuple(int(s) for s in normalized_shape)
    except TypeError:
        raise TypeError(f"{fn_name}(): argument 'normalized_shape' (position 2) must be tuple of ints, "
                        f"not {type(normalized_shape).__name__}") from None


def _check_normalized_shape(input, shape, weight, bias, star):
    k = len(shape)
    if k == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           f"element, but got normalized_shape = {list(shape)}")
    if input.dim() < k or tuple(input.shape[input.dim() - k:]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[{star}{', '.join(str(s) for s in shape)}], but got input of size{list(input.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of "
                               f"shape {list(t.shape)} and normalized_shape = {list(shape)}")


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalize over the trailing ``normalized_shape`` dims: ``(x - mean) / sqrt(var + eps) * weight + bias``.

    Args:
        input: (*, *normalized_shape).
        normalized_shape: an int or a tuple of the trailing sizes.
        weight, bias: tensors of shape ``normalized_shape``, or None.
        eps: added to the (biased) variance.

    >>> import ember
    >>> ember.nn.functional.layer_norm(ember.tensor([[1.0, 3.0]]), (2,), eps=0.0)
    tensor([[-1.,  1.]])
    """
    shape = _as_shape(normalized_shape, "layer_norm")
    _check_normalized_shape(input, shape, weight, bias, "*, ")
    _check_dtypes("LayerNormKernelImpl", input, weight, bias)
    mean, rstd = _row_statistics(input, len(shape), eps)
    return _layer_norm_op(input, weight, bias, mean, rstd, normalized_ndim=len(shape),
                          eps=eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalize each group of ``C / num_groups`` channels of each sample, then scale and
    shift per channel.

    Args:
        input: (N, C, *), C divisible by ``num_groups``.
        num_groups: how many groups the channels are split into.
        weight, bias: (C,) tensors or None.
        eps: added to the variance.

    >>> import ember
    >>> ember.nn.functional.group_norm(ember.tensor([[[1.0], [3.0]]]), 1, eps=0.0)
    tensor([[[-1.],
             [ 1.]]])
    """
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    n, c = input.shape[0], input.shape[1]
    _verify_batch_size([n * c // num_groups, num_groups] + list(input.shape[2:]))
    if c % num_groups != 0:
        raise RuntimeError("Expected number of channels in input to be divisible by num_groups, but got input "
                           f"of shape {list(input.shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in "
                               f"input, but got {name} of shape {list(t.shape)} and input of shape "
                               f"{list(input.shape)}")
    _check_dtypes("GroupNormKernelImpl", input, weight, bias)
    rows = input.reshape(n, num_groups, input.numel() // max(n * num_groups, 1))
    mean, rstd = _row_statistics(rows, 1, eps)
    return _group_norm_op(input, weight, bias, mean, rstd, num_groups=num_groups,
                          eps=eps)


# NOTE [ Row statistics of a reduced-precision input ]
# torch's layer and group norm kernels take the mean and variance of each row with a
# float32 Welford pass, which for the short rows of float16 and bfloat16 inputs is in
# effect their exact value rounded to float32; ember's float32 statistics (one pass,
# E[x^2] - mean^2, NOTE [ Layer norm statistics in one pass, checked ]) can be an ulp or
# two away, which a reduced-precision output shows about once in a thousand values. So
# for those inputs the statistics are computed in float64 and rounded to float32, and
# ``1 / sqrt(var + eps)`` in float32 from the rounded variance, as torch's.


def _row_statistics(input, normalized_ndim, eps):
    """``(mean, rstd)`` of the rows of ``input`` for the layer and group norm ops, outside
    autograd (NOTE [ Row statistics of a reduced-precision input ])."""
    if input.dtype is not ember.bfloat16 and input.dtype is not ember.float16 or input.numel() == 0:
        return layer_norm_stats(input, normalized_ndim=normalized_ndim, eps=eps)
    with ember.no_grad():
        x = input.detach().double()
        dims = list(range(x.dim() - normalized_ndim, x.dim()))
        mean = x.mean(dims, keepdim=True)
        centered = x - mean
        var = (centered * centered).mean(dims, keepdim=True)
        return mean.float(), (var.float() + eps).rsqrt()


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``x / sqrt(mean(x ** 2) + eps) * weight`` over the trailing ``normalized_shape`` dims.

    ``eps=None`` uses the machine epsilon of the dtype it computes in (float32 for float16
    and bfloat16), as PyTorch does. Runs the
    fused ``norm::rms_norm`` op (ops/rms_norm.py).

    >>> import ember
    >>> ember.nn.functional.rms_norm(ember.tensor([[3.0, 4.0]]), (2,), eps=0.0)
    tensor([[0.8485, 1.1314]])
    """
    shape = _as_shape(normalized_shape, "rms_norm")
    _check_normalized_shape(input, shape, weight, None, "*")
    if eps is None:  # the epsilon of the type it computes in: float32 for float16 and bfloat16
        eps = float(finfo_of(input.dtype.np if input.dtype.np not in REDUCED_FLOATS else OPMATH).eps)
    if weight is not None and weight.dtype != input.dtype:  # torch computes in the input's dtype
        weight = weight.to(input.dtype)
    return _rms_norm_op(input, weight, normalized_ndim=len(shape), eps=eps)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Divide each value by ``(k + alpha / size * sum of squares over size neighbouring
    channels) ** beta``; the window is zero-padded, ``size // 2`` channels before.

    Args:
        input: (N, C, *) with at least one spatial dim.
        size: how many channels the window spans.

    >>> import ember
    >>> ember.nn.functional.local_response_norm(ember.tensor([[[1.0], [1.0]]]), 2, alpha=1.0, beta=1.0, k=0.0)
    tensor([[[2.],
             [1.]]])
    """
    if input.dim() < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.dim()} dimensions)")
    if input.numel() == 0:
        return input
    channels = input.shape[1]
    squares = input * input
    before, after = size // 2, (size - 1) // 2
    spatial = tuple(input.shape[2:])
    pieces = [squares]
    if before:
        pieces.insert(0, ember.zeros((input.shape[0], before) + spatial, dtype=input.dtype))
    if after:
        pieces.append(ember.zeros((input.shape[0], after) + spatial, dtype=input.dtype))
    padded = ember.cat(pieces, dim=1) if len(pieces) > 1 else squares
    # A window of `size` channels: a sum of `size` shifted slices (size is small, 2 to 5).
    window = padded.narrow(1, 0, channels)
    for shift in range(1, size):
        window = window + padded.narrow(1, shift, channels)
    # PyTorch averages the window with avg_pool, which divides integers in their dtype
    # (truncating); the scaling that follows is floating point.
    average = window / size if input.dtype.is_floating_point else window // size
    return input / (average * alpha + k) ** beta


__all__ = ["batch_norm", "instance_norm", "layer_norm", "group_norm", "rms_norm", "local_response_norm"]
