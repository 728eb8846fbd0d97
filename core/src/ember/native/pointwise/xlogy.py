"""``xlogy``: ``x * log(y)``, defined as 0 where ``x`` is 0 (unless ``y`` is NaN), and
its kin ``special.xlog1py`` (``x * log1p(y)``) and ``special.entr`` (``-x * log(x)``).

PyTorch counterpart: aten/src/ATen/native/BinaryOps.cpp (``xlogy``,
``special_xlog1py``), UnaryOps.cpp (``special_entr``) and their derivatives.yaml
entries (v2.13).

Either argument may be a Python number. Integers and bools become the default float
type. Gradients: ``xlogy(grad, y)`` for ``x`` (0 where ``x`` is 0 and ``y <= 0``) and
``grad * x / y`` for ``y`` (``xlog1py``: ``xlog1py(grad, y)``, 0 where ``x`` is 0 and
``y <= -1``, and ``grad * x / (1 + y)``); ``entr``'s is ``-grad * (1 + log(x))``.
"""

from ember.autograd.forward_grad import AUTO_ELEMENT_WISE
from ember.dispatcher import INT_TO_FLOAT, Op
from ember.native.pointwise.unary import quiet


def _x_times(log_function):
    """The kernel ``x * log_function(y)``, 0 where ``x`` is 0 and ``y`` is not NaN."""
    def kernel(xp, x, y):
        y = xp.asarray(y, dtype=x.dtype)  # a Python number takes the tensor's dtype
        with xp.errstate(divide="ignore", invalid="ignore"):
            product = x * getattr(xp, log_function)(y)
        return xp.where((x == 0) & ~xp.isnan(y), xp.zeros_like(product), product)
    return kernel


_xlogy_kernel = _x_times("log")


def _xlogy_backward(ctx, grad):
    x, y = ctx.saved_inputs
    need_x, need_y = ctx.needs_input_grad
    grad_x = _grad_of_x(xlogy, grad, x, y, 0) if need_x else None
    grad_y = grad * x / y if need_y else None
    return grad_x, grad_y


def _grad_of_x(function, grad, x, y, pole):
    # d/dx x log(y) = log(y), as PyTorch: function(grad, y), 0 where x is 0 and y is at or
    # past the log's pole (where the forward's 0 is a limit, not a product).
    return function(grad, y).masked_fill((x == 0) & (y <= pole), 0.0)


XLOGY = Op("aten::xlogy", _xlogy_kernel, _xlogy_backward, elementwise=True, promote=INT_TO_FLOAT, save="inputs",
           jvp=AUTO_ELEMENT_WISE)


def xlogy(input, other):
    """``input * log(other)``, 0 where ``input`` is 0 and ``other`` is not NaN.

    >>> import ember
    >>> ember.xlogy(ember.tensor([0., 2., 0.]), ember.tensor([0., 3., float("nan")]))
    tensor([0.0000, 2.1972,    nan])
    """
    return XLOGY(*_tensor_first("xlogy", input, other))


def _tensor_first(name, input, other):
    """``(input, other)`` with a number ``input`` made a 0-d tensor (the kernel reads
    ``x``'s dtype); PyTorch's TypeError when neither is a tensor."""
    if not hasattr(input, "_data") and not hasattr(other, "_data"):
        raise TypeError(f"{name}() received an invalid combination of arguments: no Tensor given")
    if not hasattr(input, "_data"):
        from ember.native.factory import scalar_tensor

        input = scalar_tensor(input, dtype=other.dtype if other.dtype.is_floating_point else None,
                              device=other.device)
    return input, other


def _xlog1py_backward(ctx, grad):
    x, y = ctx.saved_inputs
    need_x, need_y = ctx.needs_input_grad
    grad_x = _grad_of_x(xlog1py, grad, x, y, -1) if need_x else None
    grad_y = grad * x / (y + 1) if need_y else None
    return grad_x, grad_y


XLOG1PY = Op("aten::special_xlog1py", _x_times("log1p"), _xlog1py_backward, promote=INT_TO_FLOAT, save="inputs",
             jvp=AUTO_ELEMENT_WISE)


def xlog1py(input, other):
    """``input * log1p(other)``, 0 where ``input`` is 0 and ``other`` is not NaN.

    >>> import ember
    >>> ember.special.xlog1py(ember.tensor([0., 2.]), ember.tensor([-1., 1.]))
    tensor([0.0000, 1.3863])
    """
    return XLOG1PY(*_tensor_first("special_xlog1py", input, other))


def _entr_kernel(xp, x):
    # -x log x for x > 0, 0 at 0, -inf below (NaN stays NaN).
    with xp.errstate(divide="ignore", invalid="ignore"):
        positive = -x * xp.log(x)
    return xp.where(x > 0, positive, xp.where(x == 0, x.dtype.type(0), xp.where(x < 0, -xp.inf, x)))


ENTR = Op("aten::special_entr", quiet(_entr_kernel), lambda ctx, g: (-g * (1 + ctx.saved_inputs[0].log()),),
          promote=INT_TO_FLOAT, save="inputs", opmath=True, jvp=AUTO_ELEMENT_WISE)


def entr(input):
    """The elementwise entropy term ``-input * log(input)``: 0 at 0, -inf below 0.

    >>> import ember
    >>> ember.special.entr(ember.tensor([0.0, 0.5, -1.0]))
    tensor([0.0000, 0.3466,   -inf])
    """
    return ENTR(input)
