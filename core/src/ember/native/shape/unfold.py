"""``Tensor.unfold``: the windows of length ``size`` taken every ``step`` along a dim,
as a view (no copy), and ``unfold_copy``, the same windows in memory of their own.

PyTorch counterpart: aten/src/ATen/native/TensorShape.cpp (``unfold``),
aten/src/ATen/native/UnfoldBackward.cpp (``unfold_backward``) and their
derivatives.yaml entries (v2.13).

``x.unfold(d, size, step)`` replaces dim ``d`` (length ``n``) by the number of
windows, ``(n - size) // step + 1``, and appends a dim of length ``size``. It is a
view: dim ``d`` gets stride ``step * stride[d]`` and the new last dim ``stride[d]``,
so overlapping windows (``step < size``) read the same memory. The gradient adds
each window back where it was read from: an element that several windows share
gets the sum of their gradients. (Not the other ``unfold``, ``nn.functional.unfold``,
which is im2col and lives in native/fold.py.)
"""

from ember.autograd.forward_grad import AUTO_LINEAR
from ember.dispatcher import Op
from ember.native.shape.views import element_strides, restride
from ember.tensor import _wrap_dim


def _window_count(length, size, step):
    return (length - size) // step + 1


def _unfold_kernel(xp, a, dim, size, step):
    if a.ndim == 0:  # a 0-d tensor unfolds as one element into a 1-element window
        return a.reshape(1)
    strides = element_strides(a)
    shape = a.shape[:dim] + (_window_count(a.shape[dim], size, step),) + a.shape[dim + 1:] + (size,)
    window_strides = strides[:dim] + (strides[dim] * step,) + strides[dim + 1:] + (strides[dim],)
    return restride(xp, a, shape, window_strides, writeable=step >= size)


def _unfold_backward_kernel(xp, grad, input_shape, dim, size, step):
    # Add every window position back: the k-th element of every window lies at
    # k, k + step, k + 2 step, ... along `dim`: one strided slice per k (a loop
    # over the window length, never over the elements).
    out = xp.zeros(input_shape, dtype=grad.dtype)
    if len(input_shape) == 0:
        return grad.reshape(())
    count = grad.shape[dim]
    for k in range(size):
        key = (slice(None),) * dim + (slice(k, k + step * (count - 1) + 1, step),)
        out[key] += grad[..., k]
    return out


def _unfold_backward_backward(ctx, grad):
    attrs = ctx.attrs
    return (UNFOLD(grad, dim=attrs["dim"], size=attrs["size"], step=attrs["step"]),)


UNFOLD_BACKWARD = Op("aten::unfold_backward", _unfold_backward_kernel, _unfold_backward_backward)


def _unfold_gradient(ctx, grad):
    (meta,) = ctx.input_meta
    attrs = ctx.attrs
    return (UNFOLD_BACKWARD(grad.contiguous(), input_shape=meta[0], dim=attrs["dim"], size=attrs["size"],
                            step=attrs["step"]),)


UNFOLD = Op("aten::unfold", _unfold_kernel, _unfold_gradient, view=True)
UNFOLD_COPY = Op("aten::unfold_copy", lambda xp, a, dim, size, step: _unfold_kernel(xp, a, dim, size, step).copy(),
                 _unfold_gradient, backward_name="UnfoldBackward0", jvp=AUTO_LINEAR)


def _checked(input, dimension, size, step):
    dim = _wrap_dim(dimension, max(input.ndim, 1))
    length = input.shape[dim] if input.ndim else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {length} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    return dim


def unfold(input, dimension, size, step):
    """The windows of ``size`` elements every ``step`` along ``dimension``, as a view
    whose new last dim runs along each window.

    >>> import ember
    >>> ember.arange(6.).unfold(0, 3, 2)
    tensor([[0., 1., 2.],
            [2., 3., 4.]])
    """
    dim = _checked(input, dimension, size, step)
    return UNFOLD(input, dim=dim, size=int(size), step=int(step))


def unfold_copy(input, dimension, size, step):
    """:func:`unfold`, copied into memory of its own."""
    dim = _checked(input, dimension, size, step)
    return UNFOLD_COPY(input, dim=dim, size=int(size), step=int(step))
