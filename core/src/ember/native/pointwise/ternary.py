"""Fused pointwise ops of three tensors: ``addcmul`` and ``addcdiv``, and their in-place forms.

PyTorch counterpart: aten/src/ATen/native/PointwiseOps.cpp and
cpu/PointwiseOpsKernel.cpp, with their entries in tools/autograd/derivatives.yaml
(v2.13).

``addcmul(input, t1, t2, value=v)`` is ``input + v * t1 * t2`` and ``addcdiv`` is
``input + v * t1 / t2``, computed as ``(v * t1) * t2`` and ``(v * t1) / t2`` like
PyTorch's CPU kernel. Optimizers call the in-place forms on every step
(``exp_avg_sq.addcmul_(grad, grad, value=1 - beta2)``), so those have a fast path that
writes into the target with one temporary when no graph is recorded
(NOTE [ The in-place fast path ] in ember/native/support/_inplace.py). ``lerp_`` (the op itself
is in binary_functions.py) gets the same fast path here, for the same reason.
"""

from ember import dtypes
from ember.autograd.forward_grad import AUTO_ELEMENT_WISE
from ember.autograd.grad_mode import grad_state
from ember.dispatcher import DEFAULT, Op
from ember.dtypes import BFLOAT16_NP, is_floating_array
from ember.native.pointwise.binary import _reraise
from ember.native.pointwise.unary import quiet
from ember.native.support._inplace import check_inplace, write_result


def _scalar_for(xp, value, *arrays):
    # PyTorch converts `value` to the result's dtype first: an integer result
    # truncates a float value (addcmul of int64 tensors with value=0.5 adds 0).
    dtype = next(a.dtype for a in arrays if hasattr(a, "dtype"))
    return int(value) if dtype.kind in "iub" and not isinstance(value, bool) else value


@quiet
def _addcmul_kernel(xp, input, tensor1, tensor2, value=1):
    try:
        if value == 1:
            return input + tensor1 * tensor2
        return input + _scalar_for(xp, value, input, tensor1) * tensor1 * tensor2
    except ValueError as error:
        _reraise(error, input, tensor1, tensor2)


def _addcmul_backward(ctx, grad):
    _, tensor1, tensor2 = ctx.saved_inputs
    value = ctx.attrs.get("value", 1)
    _, need_t1, need_t2 = ctx.needs_input_grad
    return (grad,
            (grad * tensor2 * value if need_t1 else None),
            (grad * tensor1 * value if need_t2 else None))


@quiet
def _addcdiv_kernel(xp, input, tensor1, tensor2, value=1):
    try:
        if value == 1:
            return input + tensor1 / tensor2
        return input + (value * tensor1) / tensor2
    except ValueError as error:
        _reraise(error, input, tensor1, tensor2)


def _addcdiv_backward(ctx, grad):
    _, tensor1, tensor2 = ctx.saved_inputs
    value = ctx.attrs.get("value", 1)
    _, need_t1, need_t2 = ctx.needs_input_grad
    return (grad,
            (grad * value / tensor2 if need_t1 else None),
            (-grad * value * tensor1 / (tensor2 * tensor2) if need_t2 else None))


ADDCMUL = Op("aten::addcmul", _addcmul_kernel, _addcmul_backward, promote=DEFAULT, save="inputs", opmath=True,
              elementwise=True, jvp=AUTO_ELEMENT_WISE)
ADDCDIV = Op("aten::addcdiv", _addcdiv_kernel, _addcdiv_backward, promote=DEFAULT, save="inputs", opmath=True,
              elementwise=True, jvp=AUTO_ELEMENT_WISE)

_INTEGER_ADDCDIV = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a "
    "true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as "
    "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
    "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter "
    "implementation: (input + value * tensor1 / tensor2), for all dtypes.")


def addcmul(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 * tensor2``, broadcast and type-promoted.

    >>> import ember
    >>> ember.addcmul(ember.tensor([1.0, 1.0]), ember.tensor([2.0, 3.0]), ember.tensor([4.0, 5.0]), value=0.5)
    tensor([5.0000, 8.5000])
    """
    _require_tensors("addcmul", input, tensor1, tensor2)
    return ADDCMUL(input, tensor1, tensor2) if value == 1 else ADDCMUL(input, tensor1, tensor2, value=value)


def addcdiv(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 / tensor2``, broadcast and type-promoted; ``tensor1`` and
    ``tensor2`` must not both be integer tensors.

    >>> import ember
    >>> ember.addcdiv(ember.tensor([1.0, 1.0]), ember.tensor([2.0, 3.0]), ember.tensor([4.0, 5.0]), value=2)
    tensor([2.0000, 2.2000])
    """
    _require_tensors("addcdiv", input, tensor1, tensor2)
    if tensor1.dtype.category < dtypes.FLOATING and tensor2.dtype.category < dtypes.FLOATING:
        raise RuntimeError(_INTEGER_ADDCDIV)
    return ADDCDIV(input, tensor1, tensor2) if value == 1 else ADDCDIV(input, tensor1, tensor2, value=value)


def addcmul_(self, tensor1, tensor2, *, value=1):
    """In-place :func:`addcmul`: ``self += value * tensor1 * tensor2``."""
    check_inplace(self)
    if _fast_inplace(self, "multiply", tensor1, tensor2, value):
        return self
    return write_result(self, addcmul(self, tensor1, tensor2, value=value))


def addcdiv_(self, tensor1, tensor2, *, value=1):
    """In-place :func:`addcdiv`: ``self += value * tensor1 / tensor2``."""
    check_inplace(self)
    if _fast_inplace(self, "true_divide", tensor1, tensor2, value):
        return self
    return write_result(self, addcdiv(self, tensor1, tensor2, value=value))


def _require_tensors(name, *arguments):
    """PyTorch's TypeError for a Python number where a tensor is expected."""
    for position, (argument, x) in enumerate(zip(("input", "tensor1", "tensor2"), arguments), start=1):
        if not hasattr(x, "_data"):
            raise TypeError(f"{name}(): argument '{argument}' (position {position}) must be Tensor, "
                            f"not {type(x).__name__}")


def _fast_inplace(target, combine, tensor1, tensor2, value):
    """``target += (value * tensor1) <combine> tensor2`` straight into ``target``'s memory
    when no graph is recorded and all three are floating tensors of one dtype and
    device whose product broadcasts to ``target``'s shape; False otherwise."""
    tensors = (target, tensor1, tensor2)
    if any(t.__class__ is not target.__class__ for t in tensors[1:]):
        return False
    if grad_state.enabled and any(t._requires_grad for t in tensors):
        return False
    a, b, c = target._data, tensor1._data, tensor2._data
    if not (a.dtype == b.dtype == c.dtype and is_floating_array(a.dtype)):
        return False
    if tensor1._device is not target._device or tensor2._device is not target._device:
        return False
    if not getattr(a.flags, "writeable", True) or b.ndim > a.ndim or c.ndim > a.ndim:
        return False
    try:
        _add_combined(target._device.backend.xp, a, b, c, combine=combine, value=value)
    except ValueError:
        return False  # shapes that do not broadcast into `a`: the general path raises PyTorch's error
    target._version_counter[0] += 1
    return True


@quiet
def _add_combined(xp, a, b, c, combine, value):
    # One temporary: (value * b), then combined with c in place when shapes allow.
    term = xp.multiply(b, value, out=xp.empty_like(b)) if value != 1 else None  # an array even when 0-d
    if term is not None and term.shape == xp.broadcast(term, c).shape:
        getattr(xp, combine)(term, c, out=term)
    else:
        term = getattr(xp, combine)(b if term is None else term, c)
    xp.add(a, term, out=a)


# --- lerp_ --------------------------------------------------------------------------


def lerp_(self, end, weight):
    """In-place :func:`ember.lerp`: ``self += weight * (end - self)``.

    Adam-style optimizers call it on every step (``exp_avg.lerp_(grad, 1 - beta1)``), so
    with a Python number as the weight, no graph recorded and ``end`` of ``self``'s
    dtype, device and shape, it writes into ``self`` with one temporary, using the same
    formula from the nearer end as the out-of-place op (so the results are identical).
    """
    from ember.native.pointwise.binary_functions import lerp

    check_inplace(self)
    if _fast_lerp(self, end, weight):
        return self
    return write_result(self, lerp(self, end, weight))


def _fast_lerp(target, end, weight):
    if end.__class__ is not target.__class__ or weight.__class__ not in (float, int):
        return False
    if grad_state.enabled and (target._requires_grad or end._requires_grad):
        return False
    a, b = target._data, end._data
    # not bfloat16, which computes in float32 (NOTE [ bfloat16 ] in dtypes.py)
    if (a.dtype != b.dtype or not is_floating_array(a.dtype) or a.dtype == BFLOAT16_NP or a.shape != b.shape
            or not getattr(a.flags, "writeable", True)):
        return False
    if end._device is not target._device:
        return False
    _lerp_into(target._device.backend.xp, a, b, weight=weight)
    target._version_counter[0] += 1
    return True


@quiet
def _lerp_into(xp, a, b, weight):
    diff = xp.empty_like(a)  # an array even for 0-d inputs (a ufunc then returns a scalar)
    xp.subtract(b, a, out=diff)
    if abs(weight) < 0.5:
        xp.multiply(diff, weight, out=diff)
        xp.add(a, diff, out=a)
    else:  # from the far end: b - (b - a) * (1 - weight)
        xp.multiply(diff, 1 - weight, out=diff)
        xp.subtract(b, diff, out=a)
