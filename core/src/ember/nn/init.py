"""``ember.nn.init``: in-place initialisation of parameters.

PyTorch counterpart: torch/nn/init.py (v2.13). ember leaves out ``sparse_`` and the
deprecated non-underscore aliases.

Every function works in place under ``no_grad`` and takes an optional
``generator=``. The fan and gain computations are PyTorch's and the fills are
``Tensor.uniform_``/``normal_``, which draw PyTorch's numbers (ember/generator.py), so
after the same seed the weights are PyTorch's bit for bit. Two are PyTorch's only to
rounding: ``orthogonal_`` (the QR is NumPy's LAPACK call, not the one torch links), and
``trunc_normal_`` when [a, b] holds less than 30% of the mass, whose acceptance test
compares a float32 ``log`` (NumPy's, not ATen's) with the candidate's log-density.

# NOTE [ Fan in and fan out ]
# A weight of shape (out, in, *kernel) feeds each output from ``in * prod(kernel)``
# inputs (fan_in) and each input reaches ``out * prod(kernel)`` outputs (fan_out).
# Xavier keeps the variance of activations and gradients about equal with
# std = gain * sqrt(2 / (fan_in + fan_out)); Kaiming keeps one of them (``mode``)
# with std = gain / sqrt(fan). A uniform distribution on [-b, b] has std b / sqrt(3).
#
# NOTE [ Building a model for its structure only ]
# Drawing a large model's random weights costs seconds (wide_resnet101_2: about 7 s),
# spent in the four random fills below. Code that builds a model only to read its
# parameter names, as the zoo does to say which model a checkpoint belongs to, runs the
# builder inside ``structure_only()``: the random fills leave their tensors as
# allocated (uninitialized memory) and draw nothing, so the global generator's stream
# is untouched too. torch builds such a model on the meta device
# (``torch.nn.utils.skip_init``); ember has no meta device. ember-only, not in torch.
"""

import contextlib
import math
import threading
import warnings

import numpy as np

from ember.autograd.grad_mode import no_grad

_SKIP = threading.local()


@contextlib.contextmanager
def structure_only():
    """Within this block the random initializers draw nothing and leave tensors as they
    are (NOTE [ Building a model for its structure only ]); this thread only."""
    before = getattr(_SKIP, "on", False)
    _SKIP.on = True
    try:
        yield
    finally:
        _SKIP.on = before


def _skipping():
    return getattr(_SKIP, "on", False)


_LINEAR_GAIN_ONE = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                    "conv_transpose3d", "sigmoid")


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for ``nonlinearity`` (``"relu"`` -> sqrt(2), ...).

    >>> import ember
    >>> round(ember.nn.init.calculate_gain("tanh"), 4)
    1.6667
    """
    if nonlinearity in _LINEAR_GAIN_ONE:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    """(fan_in, fan_out) of a weight shaped (out, in, *kernel) (NOTE [ Fan in and fan out ])."""
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive_field_size = 1
    for s in tensor.shape[2:]:
        receptive_field_size *= s
    fan_in = tensor.size(1) * receptive_field_size
    fan_out = tensor.size(0) * receptive_field_size
    return fan_in, fan_out


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill with samples of U(a, b)."""
    if _skipping():
        return tensor
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill with samples of N(mean, std**2)."""
    if _skipping():
        return tensor
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill with N(mean, std**2) samples restricted to [a, b], by rejection as PyTorch
    does (so the draws, and hence the values, are PyTorch's): when [a, b] holds more than
    30% of the mass, normals outside it are redrawn; otherwise uniform candidates on
    [a, b] are accepted with probability pdf / peak pdf."""
    if _skipping():
        return tensor
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of "
                      "values may be incorrect.", stacklevel=2)

    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    with no_grad():
        mass = norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std)
        if mass > 0.3:
            _redraw_outside(tensor, mean, std, a, b, generator)
        else:
            _accept_uniform_candidates(tensor, mean, std, a, b, generator)
        return tensor


def _redraw_outside(tensor, mean, std, a, b, generator):
    import ember

    low, high = tensor.new_tensor(a).item(), tensor.new_tensor(b).item()  # bounds as the dtype sees them
    result = tensor.normal_(mean, std, generator=generator)
    while True:
        outside = (result < low) | (result > high)
        if not outside.any():
            break
        result = ember.where(outside, ember.empty_like(result).normal_(mean, std, generator=generator), result)
    if result is not tensor:
        tensor.copy_(result)


def _accept_uniform_candidates(tensor, mean, std, a, b, generator):
    import ember

    mode = max(a, min(mean, b))
    log_peak = -0.5 * ((mode - mean) / std) ** 2

    def rejected(candidates):
        log_pdf = ((candidates - mean) / std).pow(2) * -0.5 - log_peak
        return ember.empty_like(tensor).uniform_(generator=generator).log().gt(log_pdf)

    tensor.uniform_(a, b, generator=generator)
    pending = rejected(tensor)
    result = tensor
    while pending.any():
        candidates = ember.empty_like(tensor).uniform_(a, b, generator=generator)
        result = ember.where(pending, candidates, result)
        pending = ember.where(pending, rejected(candidates), pending)
    if result is not tensor:
        tensor.copy_(result)


def constant_(tensor, val):
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    return constant_(tensor, 1.0)


def zeros_(tensor):
    with no_grad():
        return tensor.zero_()


def eye_(tensor):
    """Fill a 2-D tensor with the identity (ones on the diagonal)."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    from ember.native.factory import eye

    with no_grad():
        return tensor.copy_(eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device))


def dirac_(tensor, groups=1):
    """Fill a 3-, 4- or 5-D conv weight so the convolution passes its input through
    (per group, as many channels as both sides have)."""
    dimensions = tensor.ndimension()
    if dimensions not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.size()
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])
    center = tuple(s // 2 for s in sizes[2:])
    with no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min_dim):
                tensor[(g * out_per_group + d, d) + center] = 1
    return tensor


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """U(-b, b) with b = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """N(0, std**2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """U(-b, b) with b = gain * sqrt(3 / fan) (He et al., 2015)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """N(0, std**2) with std = gain / sqrt(fan)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def orthogonal_(tensor, gain=1, generator=None):
    """Fill with a (semi-)orthogonal matrix from the QR decomposition of a Gaussian one
    (Saxe et al., 2013); dimensions after the first are flattened.

    The QR runs in NumPy on the host: initialisation is no hot path, and it keeps the
    core free of a linalg.qr op.
    """
    if _skipping():
        return tensor
    if tensor.ndimension() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    from ember.native.factory import empty
    from ember.native.factory import tensor as make_tensor
    from ember.native.pointwise.unary import not_implemented_for

    if tensor.dtype.is_floating_point and tensor.element_size() == 2:  # torch's QR has no half kernels
        raise not_implemented_for("geqrf_cpu", tensor._data.dtype)

    rows = tensor.size(0)
    cols = tensor.numel() // rows
    flattened = empty((rows, cols), dtype=tensor.dtype).normal_(0, 1, generator=generator).numpy()
    if rows < cols:
        flattened = flattened.T
    q, r = np.linalg.qr(flattened)
    q = q * np.sign(np.diag(r))  # makes the decomposition unique, so q is uniformly distributed
    if rows < cols:
        q = q.T
    with no_grad():
        tensor.copy_(make_tensor(np.ascontiguousarray(q).reshape(tuple(tensor.shape)), device=tensor.device))
        tensor.mul_(gain)
    return tensor


__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_", "eye_",
           "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "orthogonal_"]
