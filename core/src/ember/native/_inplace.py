"""How an in-place op (``add_``, ``copy_``, ``x[i] = v``) is carried out.

PyTorch counterpart: the in-place branches of torch/csrc/autograd/generated/
VariableType (``check_inplace``, ``rebase_history``, ``increment_version``) and
torch/csrc/autograd/functions/tensor.cpp (``CopySlices``) (v2.13).

# NOTE [ In-place ops are out-of-place ops plus a write ]
# ember computes the out-of-place result with the ordinary op (so the autograd record
# and the backward formula are the op's own), writes it into the target's memory,
# bumps the target's version counter (shared by all views of that memory), and
# rebases the target's history onto the new node. If the new node saved the target
# itself, it keeps a copy of the old value instead (PyTorch's `original_self`), so
# `a.mul_(b)` still has `a`'s old value for `b`'s gradient.
"""

from ember import dtypes
from ember.autograd.grad_mode import grad_state
from ember.autograd.graph import RELEASED
from ember.dispatcher import trace_state


def check_inplace(target):
    """Refuse to rewrite a leaf that requires grad (or a view of one) while recording:
    its .grad would no longer be the gradient of anything."""
    if not (grad_state.enabled and target._requires_grad):
        return
    if target.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    base = target._base
    if base is not None and base.grad_fn is None and base._requires_grad:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")


def inplace(target, op, inputs, attrs=None):
    """Run ``op(*inputs, **attrs)`` and store the result in ``target``; returns ``target``."""
    check_inplace(target)
    result = op(*inputs, **(attrs or {}))
    return write_result(target, result)


def write_result(target, result):
    if result.shape != target.shape:
        raise RuntimeError(f"output with shape {list(target.shape)} doesn't match the broadcast shape "
                           f"{list(result.shape)}")
    if not dtypes.can_cast(result.dtype, target.dtype):
        raise RuntimeError(f"result type {_type_name(result.dtype)} can't be cast to the desired output type "
                           f"{_type_name(target.dtype)}")
    node = result.grad_fn
    if node is not None:
        _keep_old_value(node, target)
    # CuPy arrays have no writeable flag (every CuPy array is writeable).
    if not getattr(target._data.flags, "writeable", True):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                           "single memory location. Please clone() the tensor before performing the operation.")
    if node is not None and target._base is not None:
        from ember.native.copy_slices import rebase_view

        rebase_view(target, result)  # the base's history changes too
    target._data[...] = result._data
    target._version[0] += 1
    if trace_state.active:  # ember.jit.trace follows the write (NOTE [ Tracing at the dispatcher ])
        trace_state.rebind(target, result)
    if node is not None and target._base is None:
        target.grad_fn = node
        target._output_nr = result._output_nr
        target._requires_grad = True
    return target


def _keep_old_value(node, target):
    # Only the op's `self` (input 0, the target) is replaced by a copy, like PyTorch's
    # `original_self`. The same tensor passed again as another argument (`x.mul_(x)`)
    # stays saved as it is, so backward reports the in-place change, as PyTorch does.
    saved = node._saved
    if saved is None or saved is RELEASED or not saved[0] or saved[0][0] is not target:
        return
    from ember.dispatcher import _wrap

    inputs, versions, outputs = saved
    old = _wrap(target._data.copy(), target._device)
    old.grad_fn = target.grad_fn
    old._output_nr = target._output_nr
    old._requires_grad = target._requires_grad
    node._saved = ((old,) + tuple(inputs[1:]), (0,) + tuple(versions[1:]), outputs)


_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
               "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def _type_name(d):
    return _TYPE_NAMES[d.name]


# NOTE [ The in-place fast path ]
# Outside the graph (an optimizer step under no_grad, a running statistic), `a.add_(b)`
# need not compute a new tensor and copy it back: the ufunc writes into `a` directly,
# one pass over memory instead of three. The checks are the same as write_result's
# (result dtype castable into `a`, broadcast shape equal to `a`'s, writable memory).


def try_fast_inplace(target, ufunc_name, other, alpha=1):
    """Do ``target <op>= alpha * other`` with one ufunc call and return ``target``, or
    return None when the general path is needed (autograd involved, odd inputs)."""
    if trace_state.active:
        return None  # ember.jit.trace records the general path's op and write
    from ember.tensor import Tensor

    if isinstance(other, Tensor):
        if other._device is not target._device:
            return None
        other_grad = other._requires_grad
        operand = other._data
    elif other.__class__ in (float, int, bool):
        other_grad = False
        operand = other
    else:
        return None
    if (target._requires_grad or other_grad) and grad_state.enabled:
        return None
    from ember.dispatcher import computation_dtype
    from ember.native.unary import call_quietly

    result = dtypes.from_numpy_dtype(computation_dtype((target, other), "default" if ufunc_name != "true_divide"
                                                       else "int_to_float"))
    if not dtypes.can_cast(result, dtypes.from_numpy_dtype(target._data.dtype)):
        return None  # the general path raises PyTorch's error
    a = target._data
    if ufunc_name == "subtract" and (a.dtype.kind == "b" or other.__class__ is bool
                                     or isinstance(other, Tensor) and operand.dtype.kind == "b"):
        return None  # the general path raises PyTorch's error for any bool operand
    if alpha != 1 and not result.is_floating_point:
        return None  # the general path checks a float or bool alpha against an integer result
    if not getattr(a.flags, "writeable", True) or (isinstance(other, Tensor) and other._data.ndim > a.ndim):
        return None
    if alpha != 1:
        operand = operand * alpha
    xp = target._device.backend.xp
    try:
        # Silent on inf/NaN like PyTorch (an optimizer may scale an inf gradient).
        call_quietly(xp, getattr(xp, ufunc_name), a, operand, out=a, casting="unsafe")
    except (ValueError, OverflowError):
        # Not broadcastable into `a`, or a Python int out of `a`'s range: the general
        # path raises PyTorch's error, or wraps the int around as PyTorch does.
        return None
    target._version[0] += 1
    return target
