"""Dropout: zero elements (``dropout``) or whole channels (``dropout1d``,
``dropout2d``, ``dropout3d``) with probability ``p`` during training and scale the
survivors by ``1 / (1 - p)``, so the expected value is unchanged; and alpha dropout
(``alpha_dropout``, ``feature_alpha_dropout``), which keeps SELU's mean and variance.

PyTorch counterpart: aten/src/ATen/native/Dropout.cpp (``native_dropout``,
``native_dropout_backward``, ``feature_dropout``, ``alpha_dropout``,
``feature_alpha_dropout``), torch/nn/functional.py (``dropout``, ``dropout1d``,
``dropout2d``, ``dropout3d``, ``alpha_dropout``, ``feature_alpha_dropout``) (v2.13).

The masks come from ember's default generator, drawn as PyTorch's CPU dropout draws
them: ``bernoulli_(1 - p)`` on a tensor laid out like the input (one 53-bit uniform per
element, in memory order), then divided by ``1 - p`` in the input's dtype. So after the
same seed the masks are PyTorch's, except on Intel CPUs, where PyTorch's MKL build
draws scalar Bernoulli numbers from MKL's own stream (see NOTE [ What is not matched ]
in ember/native/random/transformations.py). Every form is one op,
``aten::native_dropout``: the input times a boolean mask times ``1 / (1 - p)``, the
mask of the input's shape or, for the channel-wise forms, of shape ``(N, C, 1, ...)``
(broadcast); the backward applies the same mask and scale to the gradient.
"""

import math

import numpy as np

from ember import dtypes
from ember.autograd.forward_grad import AUTO_LINEAR
from ember.dispatcher import NONE, Op

# NOTE [ The dropout mask travels as an attribute ]
# The backward needs only the mask (PyTorch's native_dropout saves only it). Were the
# mask an input or an output of the op, the node would save the op's other tensors
# too, and their version check would reject an in-place change of the dropout's
# input or output that the gradient never reads (``y = dropout(x); y.add_(1)``). So
# the mask is drawn by the front end and handed to the op as an attribute, which the
# node keeps as it is. Nothing else holds the mask, so nothing can change it.


def _mask(input, shape, keep):
    """A bool tensor of ``shape`` on ``input``'s device, True with probability ``keep``:
    PyTorch's ``bernoulli_(keep)`` on a tensor with the input's memory layout (a channel
    mask of shape (N, C, 1, ...) is a new contiguous tensor)."""
    from ember.native.factory import _finish
    from ember.native.random import transformations
    from ember.native.random.distributions import lay_out, memory_order
    from ember.random import generator_or_default

    flat = transformations.bernoulli_scalar(generator_or_default(None), math.prod(shape), keep)
    order = memory_order(input) if tuple(input.shape) == shape else list(range(len(shape)))
    host = np.array(lay_out(flat, shape, order), order="C")
    return _finish(host, dtypes.bool_, input.device, False)


def _scale(input, p):
    """``1 / (1 - p)`` as PyTorch's ``noise.div_(1 - p)`` rounds it: one division in
    the input's dtype (float32 for half precision, then rounded)."""
    opmath = np.float64 if input.dtype.np == np.float64 else np.float32
    return input.dtype.np.type(opmath(1.0) / opmath(1.0 - p))


def _masked_scale_kernel(xp, a, mask, scale):
    # The mask is an attribute (the NOTE above) or, called by torch's schema
    # ``native_dropout_backward(grad_output, mask, scale)``, an input array.
    mask = getattr(mask, "_data", mask)
    if not dtypes.is_floating_array(a.dtype):  # an integer or bool gradient: scaled in the default float
        a = a.astype(dtypes.get_default_dtype().np)
    out = xp.multiply(a, mask)  # the mask broadcasts (one draw per channel)
    out *= scale  # in place on the fresh product; keeps the dtype
    return out


def _native_dropout_backward(ctx, grad):
    # Linear in its input: the gradient is the same mask and scale applied to grad.
    mask = ctx.attrs.get("mask")
    if mask is None:  # the mask was an input (torch's schema): it gets no gradient
        return NATIVE_DROPOUT_BACKWARD(grad, ctx.saved_inputs[1], scale=ctx.attrs["scale"]), None
    return (NATIVE_DROPOUT_BACKWARD(grad, mask=mask, scale=ctx.attrs["scale"]),)


NATIVE_DROPOUT = Op("aten::native_dropout", _masked_scale_kernel, _native_dropout_backward, promote=NONE,
                    jvp=AUTO_LINEAR)
NATIVE_DROPOUT_BACKWARD = Op("aten::native_dropout_backward", _masked_scale_kernel, _native_dropout_backward,
                             promote=NONE, save="inputs")


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _check_floating(input):
    if not input.dtype.is_floating_point:
        from ember.native.support._inplace import _type_name

        raise RuntimeError(f"result type Float can't be cast to the desired output type {_type_name(input.dtype)}")


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``.

    Args:
        p: the probability of zeroing an element, in [0, 1].
        training: apply dropout; when False the input is returned unchanged.
        inplace: write the result into ``input``.

    Returns ``input`` itself when ``training`` is False or ``p`` is 0 (PyTorch's rule).

    >>> import ember
    >>> _ = ember.manual_seed(0)
    >>> y = ember.nn.functional.dropout(ember.ones(1000), 0.25)
    >>> sorted(set(y.tolist()))
    [0.0, 1.3333333730697632]
    """
    _check_p(p)
    if not training or p == 0:
        return input
    _check_floating(input)
    if p == 1:  # everything dropped: multiply by zero keeps NaNs and signs, as PyTorch
        return input.mul_(0.0) if inplace else input * 0.0
    shape = tuple(input.shape)
    if inplace:
        return input.mul_(_noise(input, shape, p))
    return NATIVE_DROPOUT(input, mask=_mask(input, shape, 1.0 - p), scale=_scale(input, p))


def _noise(input, shape, p):
    """A float tensor of ``shape``: 0 with probability ``p``, else ``1 / (1 - p)``."""
    return _mask(input, shape, 1.0 - p).to(input.dtype) * _scale(input, p)


def _feature_dropout(input, p, training, inplace):
    """Dropout of whole channels: one draw per (sample, channel), broadcast over the rest."""
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if not training or p == 0:
        return input
    _check_floating(input)
    if p == 1:
        return input.mul_(0.0) if inplace else input * 0.0
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    if inplace:
        return input.mul_(_noise(input, shape, p))
    return NATIVE_DROPOUT(input, mask=_mask(input, shape, 1.0 - p), scale=_scale(input, p))


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of a ``(N, C, L)`` or ``(C, L)`` input with probability ``p``
    and scale the rest by ``1 / (1 - p)``.

    >>> import ember
    >>> ember.nn.functional.dropout1d(ember.ones(2, 3, 4), 0.5, training=False).shape
    ember.Size([2, 3, 4])
    """
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
                           "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    if input.ndim == 3:
        return _feature_dropout(input, p, training, inplace)
    if inplace:
        _feature_dropout(input.unsqueeze(0), p, training, True)
        return input
    return _feature_dropout(input.unsqueeze(0), p, training, False).squeeze(0)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of a ``(N, C, H, W)`` input with probability ``p`` and scale
    the rest by ``1 / (1 - p)``. A 3-d input is read as ``(N, C, L)`` (PyTorch's
    current behaviour, with its warning).

    >>> import ember
    >>> ember.nn.functional.dropout2d(ember.ones(2, 3, 4, 4), 0.5, training=False).shape
    ember.Size([2, 3, 4, 4])
    """
    import warnings

    _check_p(p)
    if input.ndim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated and will "
                      "result in an error in a future release. Use dropout for inputs without 2 spatial "
                      "dimensions.", stacklevel=2)
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel "
                      "dim. Use dropout1d for that behaviour.", stacklevel=2)
    return _feature_dropout(input, p, training, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of a ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input with
    probability ``p`` and scale the rest by ``1 / (1 - p)``.

    >>> import ember
    >>> ember.nn.functional.dropout3d(ember.ones(2, 3, 2, 2, 2), 0.5, training=False).shape
    ember.Size([2, 3, 2, 2, 2])
    """
    import warnings

    _check_p(p)
    if input.ndim not in (4, 5):
        warnings.warn(f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is deprecated and will result "
                      "in an error in a future release. To retain the behavior and silence this warning, please use "
                      "dropout instead. Note that dropout3d exists to provide channel-wise dropout on inputs with 3 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 4D or 5D "
                      "inputs).", stacklevel=2)
    if input.ndim == 5:
        return _feature_dropout(input, p, training, inplace)
    if inplace:
        _feature_dropout(input.unsqueeze(0), p, training, True)
        return input
    return _feature_dropout(input.unsqueeze(0), p, training, False).squeeze(0)


# NOTE [ Alpha dropout ]
# SELU networks keep activations at mean 0 and variance 1. Zeroing would break that,
# so alpha dropout sets a dropped element to SELU's negative saturation value
# -alpha' (alpha' = scale * alpha = 1.7581) and then applies the affine map
# a * x + b that restores mean 0 and variance 1:
#   a = ((1 - p) (1 + p alpha'^2))^(-1/2),   b = -a alpha' p   (for kept elements: a x + b,
#   for dropped ones: a (-alpha') + b). As torch writes it: out = x * (mask * a) + b_mask,
#   b_mask = (mask - 1) * alpha' a + alpha' a p. The gradient is mask * a.
SELU_ALPHA_PRIME = 1.7580993408473766


def _alpha_dropout(input, p, training, inplace, feature):
    _check_p(p)
    if p == 0 or not training or input.numel() == 0:
        return input
    if feature and input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if p == 1:
        return input.mul_(0.0) if inplace else input * 0.0
    _check_floating(input)
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2) if feature else tuple(input.shape)
    keep = _mask(input, shape, 1.0 - p).to(input.dtype)
    a = 1.0 / math.sqrt((SELU_ALPHA_PRIME * SELU_ALPHA_PRIME * p + 1) * (1 - p))
    shift = (keep - 1) * (SELU_ALPHA_PRIME * a) + SELU_ALPHA_PRIME * a * p
    if inplace:
        return input.mul_(keep * a).add_(shift)
    return input * (keep * a) + shift


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout for SELU networks: dropped elements go to SELU's saturation value, then an
    affine map keeps mean 0 and variance 1 (NOTE [ Alpha dropout ]).

    >>> import ember
    >>> ember.nn.functional.alpha_dropout(ember.ones(3), 0.5).tolist()
    [1.0, 1.0, 1.0]
    """
    return _alpha_dropout(input, p, training, inplace, feature=False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """:func:`alpha_dropout` of whole channels (one draw per sample and channel)."""
    return _alpha_dropout(input, p, training, inplace, feature=True)
