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

import numpy as np

from ember import dtypes
from ember.autograd.grad_mode import grad_state
from ember.autograd.graph import RELEASED, OpNode
from ember.autograd.views import check_view_inplace, move_retains_grad
from ember.dispatch_modes import modes


def check_inplace(target):
    """Refuse to rewrite a leaf that requires grad (or a view of one) while recording:
    its .grad would no longer be the gradient of anything. Views made under no_grad or
    by a multi-output op are refused too (NOTE [ Views and in-place writes ])."""
    if not (grad_state.enabled and target._requires_grad):
        return
    check_view_inplace(target)
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


def write_result(target, result, *, uniform=False):
    """Write ``result`` into ``target`` and give ``target`` its history. ``uniform``: every
    element of ``result`` is the same value, so overlapping memory (an expanded tensor)
    takes the write, as PyTorch's ``fill_`` does."""
    if modes.vmap is not None:  # a batched target or result writes physically (ember/func/batching.py)
        written = modes.vmap.write(target, result, write_result, uniform=uniform)
        if written is not None:
            return written
    if result.shape != target.shape:
        raise RuntimeError(f"output with shape {list(target.shape)} doesn't match the broadcast shape "
                           f"{list(result.shape)}")
    if not dtypes.can_cast(result.dtype, target.dtype):
        raise RuntimeError(f"result type {_type_name(result.dtype)} can't be cast to the desired output type "
                           f"{_type_name(target.dtype)}")
    node = result._grad_fn
    if node is not None:
        check_view_inplace(target)  # an operand, not the target, may be what requires grad
        _keep_old_value(node, target)
    data = target._data
    # CuPy arrays have no writeable flag (every CuPy array is writeable).
    if not getattr(data.flags, "writeable", True):
        if overlapping(data) and not uniform:
            raise RuntimeError(_OVERLAP_ERROR)
        data = _writeable(target)  # cut from an expanded tensor, or written with one value
    if node is not None and target._base is not None:
        from ember.native.support.copy_slices import rebase_view

        rebase_view(target, result)  # the base's history changes too
    source = result._data
    if source.dtype != data.dtype:  # NOTE [ float64 to float16 through float32 ] in dtypes.py
        source = dtypes.cast_array(source, data.dtype)
    data[...] = source
    target._version_counter[0] += 1
    if modes.trace is not None:  # ember.jit.trace follows the write (NOTE [ Tracing at the dispatcher ])
        modes.trace.rebind(target, result)
    if modes.forward_ad is not None:  # the target's tangent follows too (autograd/forward_grad.py)
        modes.forward_ad.after_write(target, result)
    if node is None:
        return target
    if target._base is None:
        old_fn, old_nr = target._grad_fn, target._output_nr
        target._grad_fn = node
        target._output_nr = result._output_nr
        target._requires_grad = True
        move_retains_grad(target, old_fn, old_nr)
    else:
        target._view_version = target._version_counter[0]  # its grad_fn (set by rebase_view) is current
    _save_target_as_output(node, target, result._output_nr)
    return target


def _save_target_as_output(node, target, output_nr):
    # An op that saved its output (sigmoid, exp) saved the out-of-place result; after
    # the write that output *is* the target, so the record follows the target's memory
    # and version, and a later in-place write is caught in backward, as in PyTorch.
    saved = node._saved if isinstance(node, OpNode) else None
    if not saved or saved is RELEASED:
        return
    for record in saved[2]:
        if record.output_nr == output_nr:
            record.data = target._data
            record.version_counter = target._version_counter
            record.saved_version = target._version_counter[0]


def _keep_old_value(node, target):
    # Only the op's `self` (the first input that is the target: input 0 of `mul`, input 2
    # of the `where` behind masked_fill_) is replaced by a copy, like PyTorch's
    # `original_self`. The same tensor passed again as another argument (`x.mul_(x)`)
    # stays saved as it is, so backward reports the in-place change, as PyTorch does.
    saved = node._saved if isinstance(node, OpNode) else None
    if not saved or saved is RELEASED:
        return
    inputs, versions, outputs = saved
    position = next((i for i, x in enumerate(inputs) if x is target), None)
    if position is None:
        return
    from ember.dispatcher import _wrap

    old = _wrap(target._data.copy(), target._device)
    old._grad_fn = target.grad_fn
    old._output_nr = target._output_nr
    old._requires_grad = target._requires_grad
    inputs, versions = list(inputs), list(versions)
    inputs[position], versions[position] = old, 0
    node._saved = (tuple(inputs), tuple(versions), outputs)


# NOTE [ Writing into overlapping memory ]
# An expanded tensor reads several elements from one memory location, so ember keeps
# its array read-only and most in-place ops refuse it, with PyTorch's error. PyTorch
# allows exactly the writes that cannot disagree with themselves: ``fill_``/``zero_``
# with a Python number (every alias gets one value; a tensor value is refused there),
# a write into a part of it whose own elements are distinct (``e[0] = v``,
# ``e[1].add_(1)``), and, with a deprecation warning, ``masked_fill_`` and advanced-index
# writes (a location gets the value when any alias of it is selected). Those writes go
# through a writeable array over the same memory (views.writeable_alias).

_OVERLAP_ERROR = ("unsupported operation: more than one element of the written-to tensor refers to a single memory "
                  "location. Please clone() the tensor before performing the operation.")


def overlapping(array):
    """PyTorch's internal-overlap test: some dim of size > 1 has stride 0 (and there
    is an element at all)."""
    return array.size > 0 and any(stride == 0 and size > 1 for size, stride in zip(array.shape, array.strides))


def check_no_partial_overlap(written, source, xp=None):
    """PyTorch's ``assert_no_partial_overlap`` for a copy from ``source`` into ``written``
    (arrays): the same memory with the same geometry is fine (a no-op), as is memory
    that is not dense (PyTorch's test gives up there); dense ranges that intersect
    otherwise raise, since the result would depend on the order of the writes.
    With ``xp`` (setitem), ``source`` is first expanded to ``written``'s shape, as
    PyTorch's setitem does before its copy."""
    if not hasattr(source, "flags") or written is source:
        return
    if modes.vmap is not None and not (hasattr(written, "__array_interface__")
                                       and hasattr(source, "__array_interface__")):
        return  # a batched tensor's stand-in array (ember/func/batched_tensor.py): no memory to compare
    if xp is not None and source.shape != written.shape:
        from ember.native.shape.views import _expand_kernel

        lead = 0
        while lead < source.ndim - written.ndim and source.shape[lead] == 1:
            lead += 1
        try:
            source = _expand_kernel(xp, source.reshape(source.shape[lead:]), written.shape)
        except (ValueError, IndexError):
            return  # shapes that do not broadcast: the write itself raises PyTorch's error
    if not (_dense(written) and _dense(source)):
        return
    from ember.tensor import _array_address

    begin_w, begin_s = _array_address(written), _array_address(source)
    end_w, end_s = begin_w + written.nbytes, begin_s + source.nbytes
    # The same geometry (PyTorch compares the strides, so a copy_ between different ranks differs).
    if begin_w == begin_s and end_w == end_s and written.ndim == source.ndim and _steps(written) == _steps(source):
        return
    if begin_w < end_s and begin_s < end_w:
        raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor refer "
                           "to a single memory location. Please clone() the tensor before performing the operation.")


def _steps(array):
    # The strides that matter: a dim of size 1 is never stepped over (NOTE [ Strides of size-1 dims ]).
    return tuple((n, st) for n, st in zip(array.shape, array.strides) if n != 1)


def _dense(array):
    # Non-overlapping and dense in some dim order (PyTorch's is_non_overlapping_and_dense).
    dims = sorted((abs(st), n) for n, st in zip(array.shape, array.strides) if n != 1)
    expected = array.itemsize
    for stride, size in dims:
        if stride != expected:
            return False
        expected *= size
    return array.size > 0


def fill_overlapping(target, value):
    """``fill_`` on overlapping memory, outside autograd (NOTE [ Writing into overlapping memory ])."""
    _writeable(target)[...] = value._data if hasattr(value, "_data") else value
    target._version_counter[0] += 1
    return target


def masked_fill_overlapping(target, mask, value):
    """``masked_fill_`` on overlapping memory, outside autograd, with PyTorch's warning."""
    import warnings

    warnings.warn("Use of masked_fill_ on expanded tensors is deprecated. Please clone() the tensor before "
                  "performing this operation. This also applies to advanced indexing e.g. tensor[mask] = scalar",
                  UserWarning, stacklevel=3)
    xp = target._device.backend.xp
    value = value._data if hasattr(value, "_data") else value
    xp.copyto(_writeable(target), xp.asarray(value, dtype=target._data.dtype), where=mask._data)
    target._version_counter[0] += 1
    return target


def setitem_array(tensor, array_key):
    """The array ``tensor[key] = v`` writes into outside autograd: ``tensor``'s own, or a
    writeable alias of overlapping memory where PyTorch allows the write."""
    a = tensor._data
    if getattr(a.flags, "writeable", True):
        return a
    if is_basic_key(array_key):
        if overlapping(a[array_key]):
            raise RuntimeError(_OVERLAP_ERROR)
    else:
        import warnings

        warnings.warn("Use of index_put_ on expanded tensors is deprecated. Please clone() the tensor before "
                      "performing this operation. This also applies to advanced indexing e.g. tensor[indices] = "
                      "tensor", UserWarning, stacklevel=3)
    return _writeable(tensor)


def is_basic_key(array_key):
    """True for a key of ints, slices, None and Ellipsis only (a view in PyTorch)."""
    return all(k is None or k is Ellipsis or k.__class__ in (int, slice) for k in array_key)


def _writeable(target):
    from ember.native.shape.views import writeable_alias

    return writeable_alias(target._device.backend.xp, target._data)


def _type_name(d):
    return dtypes.SCALAR_TYPE_NAMES[d.name]


# NOTE [ The in-place fast path ]
# Outside the graph (an optimizer step under no_grad, a running statistic), `a.add_(b)`
# need not compute a new tensor and copy it back: the ufunc writes into `a` directly,
# one pass over memory instead of three. The checks are the same as write_result's
# (result dtype castable into `a`, broadcast shape equal to `a`'s, writable memory).


def try_fast_inplace(target, ufunc_name, other, alpha=1):
    """Do ``target <op>= alpha * other`` with one ufunc call and return ``target``, or
    return None when the general path is needed (autograd involved, odd inputs)."""
    if modes.trace is not None or modes.vmap is not None or modes.forward_ad is not None:
        return None  # jit.trace records the general path's op and write; vmap writes physically; forward AD its tangent
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
    from ember.native.pointwise.unary import call_quietly

    result = dtypes.from_numpy_dtype(computation_dtype((target, other), "default" if ufunc_name != "true_divide"
                                                       else "int_to_float"))
    if not dtypes.can_cast(result, dtypes.from_numpy_dtype(target._data.dtype)):
        return None  # the general path raises PyTorch's error
    if result.np in dtypes.REDUCED_FLOATS and (ufunc_name == "multiply" or alpha != 1) or result is dtypes.bfloat16:
        # mul computes float16 in float32 (NOTE [ opmath ] in opmath.py), bfloat16 everything, and
        # alpha takes two loops (NOTE [ alpha in the two loops ])
        return None
    a = target._data
    if ufunc_name == "subtract" and (a.dtype.kind == "b" or other.__class__ is bool
                                     or isinstance(other, Tensor) and operand.dtype.kind == "b"):
        return None  # the general path raises PyTorch's error for any bool operand
    if not (alpha.__class__ is int and alpha == 1 or result.is_floating_point and alpha.__class__ in (int, float)):
        return None  # the general path checks alpha (a float or bool alpha, a NumPy scalar's type)
    if not getattr(a.flags, "writeable", True) or (isinstance(other, Tensor) and other._data.ndim > a.ndim):
        return None
    if a.dtype == dtypes.float16.np:  # float64 to float16 through float32 (NOTE in dtypes.py)
        if operand.__class__ is float:
            operand = float(np.float32(operand))
        elif isinstance(other, Tensor) and operand.dtype == np.float64:
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
    target._version_counter[0] += 1
    return target
