"""``linear`` and ``bilinear``: the affine maps of ``nn.Linear`` and ``nn.Bilinear``.

PyTorch counterpart: aten/src/ATen/native/Linear.cpp (``linear``, ``bilinear``) and
derivatives.yaml (v2.13).

``linear`` is one fused operator, ``aten::linear``: the kernel computes
``x @ W^T`` and adds the bias in place into the fresh product, and the backward is
three products written with ember ops (so double backward works). PyTorch's
``linear`` decomposes into ``addmm``/``matmul`` + ``add``; one node per layer keeps
ember's Python overhead per layer to a single dispatch (see NOTE [ Fused linear ]).
``bilinear`` is a composite of ``einsum`` and ``add``.
"""

import math

from ember import dtypes
from ember.amp.state import autocast_state
from ember.autograd.forward_grad import bilinear_plus_bias
from ember.dispatcher import NONE, Op
from ember.dtypes import C_TYPE_NAMES
from ember.native.linalg.products import MM, matrix_product
from ember.native.shape.shape import broadcast_shapes
from ember.native.support._inplace import _type_name

# NOTE [ Fused linear ]
# The composite ``x @ W.t() + b`` records three nodes (t, mm, add) and its backward
# runs a broadcast-reducing sum for the bias through the engine. The fused op records
# one node; its backward is
#     dx = g @ W            dW = g2^T @ x2            db = sum of g over rows
# where g2, x2 are g and x flattened to matrices (rows = every leading dim), so a
# (batch, time, features) input costs one BLAS call per product instead of a batch of
# small ones. The products are ember ops, so the backward is itself differentiable.


def _rows(a):
    """``a`` as a matrix (leading dims flattened); a 1-d vector becomes one row.
    (The row count is explicit: ``reshape(-1, 0)`` is ambiguous.)"""
    return a.reshape(math.prod(a.shape[:-1]), a.shape[-1])


def _linear_kernel(xp, x, weight, bias):
    out = matrix_product(xp, _rows(x), weight.T)
    if bias is not None:
        out += bias  # in place into the fresh product: no temporary
    return out.reshape(x.shape[:-1] + (weight.shape[0],))


def _linear_backward(ctx, grad):
    x, weight, bias = ctx.saved_inputs
    need_x, need_weight, need_bias = ctx.needs_input_grad
    # The products go straight to aten::mm: the shapes are known to fit.
    grad_rows = grad if grad.ndim == 2 else _rows(grad)
    grad_x = grad_weight = grad_bias = None
    if need_x:
        grad_x = MM(grad_rows, weight)
        if x.ndim != 2:
            grad_x = grad_x.reshape(x.shape)
    if need_weight:
        x_rows = x if x.ndim == 2 else _rows(x)
        grad_weight = MM(grad_rows.mT, x_rows)
    if need_bias:
        # A bias of shape (out,) gets the column sums; any other broadcastable shape
        # gets the full gradient and the engine reduces it to the bias's shape.
        grad_bias = grad_rows.sum(0) if bias.ndim == 1 else grad
    return grad_x, grad_weight, grad_bias


LINEAR = Op("aten::linear", _linear_kernel, _linear_backward, promote=NONE, save="inputs", opmath=True,
            jvp=bilinear_plus_bias(2))


def _check_linear(input, weight, bias):
    x_shape, w_shape = input.shape, weight.shape
    if not x_shape or not w_shape:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {len(x_shape)}D and "
                           f"{len(w_shape)}D")
    if len(w_shape) > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {len(w_shape)}D")
    if x_shape[-1] != w_shape[-1]:
        rows = 1
        for s in x_shape[:-1]:
            rows *= s
        out = w_shape[0] if len(w_shape) == 2 else 1
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{x_shape[-1]} and "
                           f"{w_shape[-1]}x{out})")
    # PyTorch's three messages: addmm's (bias first, then input) or mm's without a bias.
    dtype = weight.dtype
    # (under ember.autocast the dispatcher casts the operands to one dtype first)
    if bias is not None and bias.dtype is not dtype and not autocast_state.enabled:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_type_name(bias.dtype)} and "
                           f"{_type_name(dtype)}")
    if input.dtype is not dtype and not autocast_state.enabled:
        if bias is not None:
            raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_type_name(input.dtype)} and "
                               f"{_type_name(dtype)}")
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {C_TYPE_NAMES[input.dtype.name]} != "
                           f"{C_TYPE_NAMES[dtype.name]}")
    if dtype is dtypes.bool_:
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    if bias is None:
        return
    b_shape = bias.shape
    if len(b_shape) == 1 and len(w_shape) == 2 and b_shape[0] == w_shape[0]:
        return  # the usual (out_features,) bias
    out_shape = tuple(x_shape[:-1]) + tuple(w_shape[:-1])
    if len(b_shape) > len(out_shape) or tuple(broadcast_shapes(b_shape, out_shape)) != out_shape:
        bias.expand(out_shape)  # raises PyTorch's "The expanded size of the tensor ..." error


def linear(input, weight, bias=None):
    """``y = x W^T + b``: the affine map of ``nn.Linear``, one fused op.

    Args:
        input: ``(*, in_features)``.
        weight: ``(out_features, in_features)`` (or ``(in_features,)``, giving ``(*)``).
        bias: ``(out_features,)`` or anything that broadcasts to the output; optional.

    Returns:
        ``(*, out_features)``.

    >>> import ember
    >>> ember.nn.functional.linear(ember.ones(2, 3), ember.ones(4, 3), ember.arange(4.))
    tensor([[3., 4., 5., 6.],
            [3., 4., 5., 6.]])
    """
    _check_linear(input, weight, bias)
    if weight.ndim == 1:  # a vector of weights: a dot product per row (rare; composite)
        # PyTorch sends this case to addmm, which refuses it
        if bias is not None and input.ndim == 2:
            raise RuntimeError("mat2 must be a matrix, got 1-D tensor")
        out = input.matmul(weight)
        return out if bias is None else out + bias
    return LINEAR(input, weight, bias)


def bilinear(input1, input2, weight, bias=None):
    """``y_k = x1^T A_k x2 + b_k`` for every output feature ``k``.

    Args:
        input1: ``(*, in1_features)``.
        input2: ``(*, in2_features)`` with the same leading dims as ``input1``.
        weight: ``(out_features, in1_features, in2_features)``.
        bias: ``(out_features,)``, optional.

    Returns:
        ``(*, out_features)``.

    >>> import ember
    >>> ember.nn.functional.bilinear(ember.ones(2, 3), ember.ones(2, 4), ember.ones(5, 3, 4)).shape
    ember.Size([2, 5])
    """
    _check_bilinear(input1, input2, weight, bias)
    out = _einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias


def _einsum(equation, *operands):
    from ember.native.linalg.products import _einsum

    return _einsum(equation, operands)


def _check_bilinear(input1, input2, weight, bias):
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and {input2.ndim}")
    for i in range(input1.ndim - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got "
                               f"{input1.shape[i]} and {input2.shape[i]}")
    if weight.ndim < 3:  # PyTorch reads weight.size(2) without checking the rank first
        raise IndexError(f"Dimension out of range (expected to be in range of [-{weight.ndim}, "
                         f"{weight.ndim - 1}], but got 2)")
    if len({input1.dtype, input2.dtype, weight.dtype}) > 1:
        raise RuntimeError(f"All tensors must have the same dtype, got input1: {C_TYPE_NAMES[input1.dtype.name]}, "
                           f"input2: {C_TYPE_NAMES[input2.dtype.name]}, weight: {C_TYPE_NAMES[weight.dtype.name]}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but "
                           f"expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but "
                           f"expected {weight.shape[2]}")
    if bias is not None and (bias.ndim == 0 or bias.shape[0] != weight.shape[0]):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[0]} but "
                           f"expected {weight.shape[0]}")
