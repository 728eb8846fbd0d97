"""``F.pad``: constant, reflect, replicate and circular padding, negative pads crop.

PyTorch counterpart: aten/src/ATen/native/PadNd.cpp (``pad``, ``_pad_enum``,
``constant_pad_nd``), ReflectionPad.cpp, ReplicationPad.cpp, ``_pad_circular`` and
torch/nn/functional.py (``pad``) (v2.13).

``pad`` lists ``(left, right)`` pairs from the last dim backwards, as PyTorch does.
Constant padding is one op (``aten::constant_pad_nd``) whose backward is the same op
with the pads negated (padding and cropping are adjoint). The other modes read the
input at computed positions, one ``resample`` per padded dim (ember/native/resampling.py),
whose backward adds the gradient back without a scatter.
"""

import numpy as np

from ember.amp.state import composite_inputs
from ember.dispatcher import NONE, Op
from ember.native.resampling import resample

_NON_CONSTANT_HELP = ("Supported combinations for non-constant padding:\n"
                      "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                      "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                      "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def _per_dim(pad, ndim):
    """``[(dim, left, right), ...]`` from PyTorch's last-dim-first flat list."""
    return [(ndim - 1 - i, pad[2 * i], pad[2 * i + 1]) for i in range(len(pad) // 2)]


def _constant_pad_kernel(xp, a, pad, value):
    shape = list(a.shape)
    source, target = [slice(None)] * a.ndim, [slice(None)] * a.ndim
    for dim, left, right in _per_dim(pad, a.ndim):
        size = a.shape[dim]
        shape[dim] = size + left + right
        # Negative pads crop the source; positive ones offset it in the target.
        source[dim] = slice(max(-left, 0), size - max(-right, 0))
        target[dim] = slice(max(left, 0), max(left, 0) + max(size - max(-left, 0) - max(-right, 0), 0))
    out = xp.full(shape, value, dtype=a.dtype)
    out[tuple(target)] = a[tuple(source)]
    return out


def _constant_pad_backward(ctx, grad):
    return (CONSTANT_PAD_ND(grad, pad=tuple(-p for p in ctx.attrs["pad"]), value=0),)


def _constant_pad_jvp(ctx, tangent):
    # linear but for the padding value, whose derivative is 0
    return CONSTANT_PAD_ND(tangent, pad=ctx.attrs["pad"], value=0)


CONSTANT_PAD_ND = Op("aten::constant_pad_nd", _constant_pad_kernel, _constant_pad_backward, promote=NONE,
                     jvp=_constant_pad_jvp)


def constant_pad_nd(input, pad, value=0):
    """Pad (or, with negative entries, crop) with a constant ``value``."""
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension but "
                           f"got padding length {len(pad)} and input of dimension {input.ndim}")
    for dim, left, right in _per_dim(pad, input.ndim):
        if input.shape[dim] + left + right < 0 or input.shape[dim] + min(left, 0) + min(right, 0) < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
    if not input.dtype.is_floating_point and isinstance(value, float) and value != int(value):
        value = int(value)
    return CONSTANT_PAD_ND(input, pad=pad, value=value)


def _positions(size, left, right, mode):
    """The input position read by each output position along one dim."""
    if mode == "circular":
        start = max(-left, 0)
        kept = size + min(left, 0) + min(right, 0)
        return start + (np.arange(-max(left, 0), kept + max(right, 0)) % kept)
    index = np.arange(-left, size + right)
    if mode == "replicate":
        return np.clip(index, 0, size - 1)
    index = np.abs(index)  # reflect about the first element ...
    return np.where(index > size - 1, 2 * (size - 1) - index, index)  # ... and about the last


def _check_non_constant(input, pad, mode):
    dims = len(pad) // 2
    if len(pad) % 2 or dims > 3 or input.ndim not in (dims + 1, dims + 2):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
                                  + _NON_CONSTANT_HELP)
    if 0 in input.shape[input.ndim - dims - 1:]:
        expected = {1: "2D or 3D", 2: "3D or 4D", 3: "4D or 5D"}[dims]
        raise RuntimeError(f"Expected {expected} (batch mode) tensor with possibly 0 batch size and other "
                           f"non-zero dimensions for input, but got: [{', '.join(map(str, input.shape))}]")
    for dim, left, right in _per_dim(pad, input.ndim):
        size = input.shape[dim]
        if mode == "reflect" and (left >= size or right >= size):
            raise RuntimeError("Argument #4: Padding size should be less than the corresponding input dimension, "
                               f"but got: padding ({left}, {right}) at dimension {dim} of input "
                               f"[{', '.join(map(str, input.shape))}]")
        if mode == "circular" and (left > size + min(right, 0) or right > size + min(left, 0)):
            raise RuntimeError("Padding value causes wrapping around more than once.")


def pad(input, pad, mode="constant", value=None):
    """Pad ``input``: ``pad = (left_last, right_last, left_second_last, ...)``.

    Modes: ``'constant'`` (fill with ``value``, default 0), ``'reflect'`` (mirror
    without repeating the edge), ``'replicate'`` (repeat the edge), ``'circular'``
    (wrap around). Negative pads remove elements.

    >>> import ember
    >>> ember.nn.functional.pad(ember.tensor([[1., 2., 3.]]), (2, 1), mode="reflect").tolist()
    [[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]]
    """
    pad = tuple(int(p) for p in pad)
    if mode == "constant":
        return constant_pad_nd(input, pad, 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    _check_non_constant(input, pad, mode)
    if mode != "circular":  # reflection_pad1d/2d and replication_pad1d/2d/3d: on autocast's fp32 list
        kind = "reflection" if mode == "reflect" else "replication"
        (input,) = composite_inputs(f"{kind}_pad{len(pad) // 2}d", input)
    out = input
    for dim, left, right in _per_dim(pad, input.ndim):
        out = resample(out, dim, [(_positions(input.shape[dim], left, right, mode), None)])
    return out
