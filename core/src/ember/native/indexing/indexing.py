"""Indexing: ``x[key]`` and ``x[key] = v``, ``where``, ``masked_fill``, ``gather``,
``scatter``, ``scatter_add``, ``index_select``, ``index_add``, ``masked_select``,
``take_along_dim``, ``nonzero``.

PyTorch counterpart: torch/csrc/autograd/python_variable_indexing.cpp (turning a
Python key into slices, selects and an ``index`` call), aten/src/ATen/native/
TensorAdvancedIndexing.cpp and their derivatives.yaml entries (v2.13).

A key with only ints, slices, None and Ellipsis gives a view; a key with a tensor or
list gives a copy ("advanced indexing"). PyTorch's rule for where the indexed dims go
differs from NumPy's when ints and tensors meet: see NOTE [ Ints are selects ].
"""

import numpy as np

from ember.autograd.forward_grad import AUTO_ELEMENT_WISE, AUTO_LINEAR
from ember.autograd.grad_mode import grad_state
from ember.dispatch_modes import NOT_BATCHED, modes
from ember.dispatcher import DEFAULT, NONE, Op
from ember.dtypes import is_floating_array, python_number
from ember.legacy_tensor_types import legacy_type_name
from ember.native.support._inplace import (
    _type_name,
    check_inplace,
    check_no_partial_overlap,
    is_basic_key,
    masked_fill_overlapping,
    setitem_array,
    write_result,
)
from ember.tensor import Tensor, _wrap_dim

# --- turning a Python key into an array key -------------------------------------


def _basic_key(key):
    """The NumPy key for a key of only ints, slices with positive int steps, None and
    Ellipsis (the data-loader hot path), or None if the key needs the general path.
    A trailing Ellipsis keeps a full integer key a 0-d view rather than a scalar."""
    if key.__class__ is not tuple:
        key = (key,)
    has_ellipsis = False
    for k in key:
        cls = k.__class__
        if cls is slice:
            step = k.step
            if step is not None and (step.__class__ is not int or step <= 0) or \
                    k.start is not None and k.start.__class__ is not int or \
                    k.stop is not None and k.stop.__class__ is not int:
                return None
        elif k is Ellipsis:
            has_ellipsis = True
        elif cls is not int and k is not None:
            return None
    return key if has_ellipsis else key + (Ellipsis,)


def _convert_key(tensor, key):
    """(array key, is_basic). Tensors become arrays on the tensor's device."""
    if not isinstance(key, tuple):
        key = (key,)
    out = []
    basic = True
    for k in key:
        if isinstance(k, Tensor):
            if k._device is not tensor._device and k._data.ndim and k._device.type != "cpu":
                raise RuntimeError(f"indices should be either on {k._device} or on the same device as the "
                                   f"indexed tensor ({tensor._device})")
            if k.dtype.is_floating_point:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            if k._data.ndim == 0 and k._data.dtype.kind in "iu" and k._data.dtype.name != "uint8":
                out.append(int(k.item()))  # a 0-d integer tensor indexes like an int (a view)
                continue
            array = k._data if k._device is tensor._device else tensor._device.backend.from_host(k._host())
            if array.dtype.name == "uint8":
                array = array.astype(bool)  # PyTorch reads byte index tensors as masks
            out.append(array)
            basic = False
        elif isinstance(k, slice):
            step = _as_int(k.step)
            if step is not None and step <= 0:
                raise ValueError("step must be greater than zero")
            out.append(slice(_as_int(k.start), _as_int(k.stop), step))
        elif isinstance(k, bool):
            out.append(k)
            basic = False
        elif isinstance(k, (list, range)):

            array = np.asarray(k, dtype=np.int64 if isinstance(k, range) or not k else None)
            if is_floating_array(array.dtype):
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            out.append(tensor._device.backend.from_host(array))
            basic = False
        elif k is None or k is Ellipsis or isinstance(k, int) or hasattr(k, "__index__"):
            out.append(k if k is None or k is Ellipsis else k.__index__())
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                             "are valid indices (got " + type(k).__name__ + ")")
    if basic:
        return _basic_key(tuple(out)), True
    _check_bounds(tensor._data.shape, out)
    return _select_first(tuple(out), tensor._data.ndim), False


# NOTE [ Ints are selects ]
# PyTorch turns every int of a key into a `select` (the dim disappears) while it walks
# the key, and only then indexes with the tensors that remain. NumPy instead counts an
# int as one more advanced index, which changes where the indexed dims land:
# zeros(2, 3, 4)[0, :, [0, 1]] is (3, 2) in PyTorch (the tensor index is alone once the
# int is gone, so its dim stays in place) and (2, 3) in NumPy (the int and the list are
# separated by a slice, so their broadcast dim goes first). ember does what PyTorch
# does: a key with ints and arrays becomes a SelectKey, a basic key of the ints (a
# view) followed by the key of what remains. An Ellipsis goes the same way, spelled out
# as the full slices it stands for: NumPy counts even an Ellipsis that covers no dim as
# separating two arrays, PyTorch (which expands it to those slices) does not, so
# zeros(3, 2, 1)[:, [0, 1], ..., [0, 0]] is (3, 2) there and (2, 3) in NumPy.


class SelectKey(tuple):
    """``(basic, advanced)``: index with ``basic`` (ints, full slices) first, then with
    ``advanced`` (NOTE [ Ints are selects ])."""

    __slots__ = ()


def _select_first(key, ndim):
    if not any(k.__class__ is int or k is Ellipsis for k in key):
        return key
    basic, advanced = [], []
    for k in key:
        if k.__class__ is int:
            basic.append(k)
        elif k is None:  # the new axis is made by the first step, kept by the second
            basic.append(None)
            advanced.append(slice(None))
        elif k is Ellipsis:  # spelled out: one that covers no dim leaves its neighbours adjacent
            basic.append(k)
            advanced.extend([slice(None)] * (ndim - sum(_dims_consumed(j) for j in key)))
        elif k.__class__ is slice:
            basic.append(k)
            advanced.append(slice(None))
        elif isinstance(k, bool):
            advanced.append(k)
        else:  # an array: a bool mask spans its ndim dims
            basic.extend([slice(None)] * (k.ndim if k.dtype.kind == "b" else 1))
            advanced.append(k)
    if Ellipsis not in basic:  # an all-int basic key must give a 0-d view, not a scalar
        basic.append(Ellipsis)
    return SelectKey((tuple(basic), tuple(advanced)))


def locate(a, key):
    """``(array, key)`` such that ``array[key]`` is ``a[key]`` by PyTorch's rules:
    a SelectKey's basic part is applied first, as a view of ``a``."""
    if key.__class__ is SelectKey:
        return a[key[0]], key[1]
    return a, key


def _as_int(v):
    return v.__index__() if v is not None and not isinstance(v, int) else v


def _check_bounds(shape, key):
    """Raise PyTorch's IndexError for a key that does not fit ``shape``."""
    if sum(_dims_consumed(k) for k in key) > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    dim = 0
    for position, k in enumerate(key):
        if k is Ellipsis:
            dim = len(shape) - sum(1 for j in key[position + 1:] if j is not None and not isinstance(j, bool))
            continue
        if k is None or isinstance(k, bool):
            continue
        if isinstance(k, int):
            size = shape[dim]
            if not -size <= k < size:
                raise IndexError(f"index {k} is out of bounds for dimension {dim} with size {size}")
        dim += _dims_consumed(k)


def _dims_consumed(k):
    if k is None or k is Ellipsis or isinstance(k, bool):
        return 0
    return k.ndim if getattr(getattr(k, "dtype", None), "kind", "") == "b" else 1


def _basic_index_kernel(xp, a, key):
    try:
        out = a[key]
    except IndexError:
        _check_bounds(a.shape, key)  # PyTorch's message, when it has one
        raise
    if None in key:
        out = _restride_new_axes(xp, a, key, out)
    return out


def _restride_new_axes(xp, a, key, out):
    # NumPy gives a None (new) axis stride 0; PyTorch unsqueezes while walking the key,
    # so the new axis gets size * stride of the input dim not yet indexed (or 1).
    # See NOTE [ Strides of size-1 dims ] in shape.py.
    from ember.native.shape.views import element_strides, restride

    in_strides = element_strides(a)
    strides = list(element_strides(out))
    used = sum(1 for k in key if k is not None and k is not Ellipsis)
    in_dim = out_dim = 0
    for k in key:
        if k is None:
            strides[out_dim] = a.shape[in_dim] * in_strides[in_dim] if in_dim < a.ndim else 1
            out_dim += 1
        elif k is Ellipsis:
            in_dim += a.ndim - used
            out_dim += a.ndim - used
        elif k.__class__ is slice:
            in_dim += 1
            out_dim += 1
        else:
            in_dim += 1
    return restride(xp, out, out.shape, tuple(strides))


def _index_kernel(xp, a, key):
    a, key = locate(a, key)
    out = a[key]
    strides = _index_strides(a, key)
    if strides is None or out.ndim == 0 or out.size == 0:
        return out
    from ember.memory_format import with_layout
    from ember.native.shape.views import element_strides

    return out if element_strides(out) == strides else with_layout(xp, out, strides)


# NOTE [ The layout of an advanced index ]
# PyTorch computes x[idx] with a TensorIterator over x "restrided" to the result's
# shape (stride 0 on the indexed dims) and the index tensors (broadcast to it), so the
# result's strides follow TensorIterator's dim order (ember/memory_format.py
# ``iterator_strides``) rather than NumPy's. Keys with None, Python bools or ints
# (from backward formulas) or 0-d masks keep NumPy's layout.


def _index_strides(a, key):
    from ember.memory_format import contiguous_strides, iterator_strides
    from ember.native.shape.views import element_strides

    if any(k is None or k.__class__ in (bool, int) or getattr(k, "ndim", 1) == 0 for k in key):
        return None
    entries = []  # per dim of `a`: a slice, or an index array
    for k in key:
        if k is Ellipsis:
            used = sum(1 for j in key if j is not Ellipsis and not (hasattr(j, "dtype") and j.dtype.kind == "b")) + \
                sum(j.ndim for j in key if hasattr(j, "dtype") and j.dtype.kind == "b")
            entries.extend([slice(None)] * (a.ndim - used))
        elif hasattr(k, "dtype") and k.dtype.kind == "b":
            # A mask is its nonzero() columns: index tensors of stride k.ndim (PyTorch's).
            entries.extend(("mask", k.ndim, column) for column in k.nonzero())
        elif k.__class__ is slice:
            entries.append(k)
        else:
            entries.append(("index", None, k))
    entries.extend([slice(None)] * (a.ndim - len(entries)))
    advanced = [d for d, e in enumerate(entries) if e.__class__ is not slice]
    if not advanced:
        return None
    sliced = a[tuple(e if e.__class__ is slice else slice(None) for e in entries)]
    arrays = [entries[d][2] for d in advanced]
    index_shape = np.broadcast_shapes(*[getattr(i, "shape", ()) for i in arrays])
    in_place = advanced == list(range(advanced[0], advanced[-1] + 1))
    kept = [d for d in range(a.ndim) if d not in advanced]
    before = [d for d in kept if d < advanced[0]] if in_place else []
    after = [d for d in kept if d > advanced[0]] if in_place else kept
    shape = tuple([sliced.shape[d] for d in before] + list(index_shape) + [sliced.shape[d] for d in after])
    src = element_strides(sliced)
    operands = [tuple([src[d] for d in before] + [0] * len(index_shape) + [src[d] for d in after])]
    for d in advanced:
        kind, ndim, array = entries[d]
        own = (ndim,) if kind == "mask" else contiguous_strides(array.shape)
        lead = len(index_shape) - len(array.shape)
        broadcast = [0] * lead + [0 if size == 1 and index_shape[lead + i] != 1 else own[i]
                                  for i, size in enumerate(array.shape)]
        operands.append(tuple([0] * len(before) + broadcast + [0] * len(after)))
    return iterator_strides(shape, operands)


def _basic_index_backward(ctx, grad):
    # A basic key reaches each element at most once: a plain write, no accumulation.
    (meta,) = ctx.input_meta
    from ember.native.factory import zeros

    base = zeros(meta[0], dtype=grad.dtype, device=grad.device)
    return (INDEX_PUT(base, grad, key=ctx.attrs["key"]),)


def _index_backward(ctx, grad):
    (meta,) = ctx.input_meta
    from ember.native.factory import zeros

    base = zeros(meta[0], dtype=grad.dtype, device=grad.device)
    return (INDEX_PUT(base, grad, key=ctx.attrs["key"], accumulate=True),)


BASIC_INDEX = Op("aten::_basic_index", _basic_index_kernel, _basic_index_backward, view=True,
                 backward_name="SliceBackward0")
# It keeps its inputs (which hold the indices, as PyTorch's IndexBackward0 saves them),
# so backward frees them and a second backward without retain_graph raises, as there.
INDEX = Op("aten::index", _index_kernel, _index_backward, backward_name="IndexBackward0", save="inputs",
           jvp=AUTO_LINEAR)


# PyTorch applies a basic key as a chain of views (select for an int, slice for a slice
# that does not span its whole dim, unsqueeze for None; alias when nothing remains) and
# the result's grad_fn is the last one's. ember indexes in one op, recorded under the
# name PyTorch's chain would end with.
_BASIC_INDEX_NAMED = {name: Op(f"aten::_basic_index.{name[:-len('Backward0')].lower()}", _basic_index_kernel,
                               _basic_index_backward, view=True, backward_name=name)
                      for name in ("SelectBackward0", "UnsqueezeBackward0", "AliasBackward0")}
_BASIC_INDEX_NAMED["SliceBackward0"] = BASIC_INDEX


def _basic_index_op(shape, key):
    if key.__class__ is slice:  # a lone slice is always a slice op, even a full one (PyTorch's fast path)
        return BASIC_INDEX
    key = key if key.__class__ is tuple else (key,)
    last = "AliasBackward0"
    dim = 0
    for k in key:
        if k is None:
            last = "UnsqueezeBackward0"
        elif k is Ellipsis:
            dim += len(shape) - sum(1 for k in key if k is not None and k is not Ellipsis)
        elif k.__class__ is slice:
            if dim >= len(shape) or k.indices(shape[dim]) != (0, shape[dim], 1):
                last = "SliceBackward0"
            dim += 1
        else:
            last = "SelectBackward0"
            dim += 1
    return _BASIC_INDEX_NAMED[last]


def getitem(tensor, key):
    """``tensor[key]``: a view for basic keys, a copy for tensor or list keys."""
    array_key = _basic_key(key)
    if array_key is not None:
        return _basic_index_op(tensor._data.shape, key)(tensor, key=array_key)
    if modes.vmap is not None:  # a batched index tensor (ember/func/batching.py)
        batched = modes.vmap.getitem(tensor, key)
        if batched is not NOT_BATCHED:
            return batched
    array_key, basic = _convert_key(tensor, key)
    if basic:
        return _basic_index_op(tensor._data.shape, key)(tensor, key=array_key)
    return INDEX(tensor, key=array_key)


def _index_put_kernel(xp, a, values, key, accumulate=False):
    out = a.copy()
    target, key = locate(out, key)
    try:
        if accumulate:
            _add_at(xp, target, key, values)
        else:
            target[key] = values
    except ValueError as error:  # NumPy's broadcast failure
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(getattr(values, 'shape', ()))} cannot be "
                           f"broadcast to indexing result of shape {list(target[key].shape)}") from error
    return out


def _add_at(xp, out, key, values):
    if hasattr(xp, "add") and hasattr(xp.add, "at"):
        xp.add.at(out, key, xp.broadcast_to(values, out[key].shape) if hasattr(values, "shape") else values)
    else:
        import cupyx

        cupyx.scatter_add(out, key, values)


def _index_put_backward(ctx, grad):
    key, accumulate = ctx.attrs["key"], ctx.attrs.get("accumulate", False)
    need_a, need_values = ctx.needs_input_grad
    grad_a = None
    if need_a:
        grad_a = grad if accumulate else INDEX_PUT(grad, 0.0, key=key)
    grad_values = INDEX(grad, key=key) if need_values else None
    return grad_a, grad_values


INDEX_PUT = Op("aten::index_put", _index_put_kernel, _index_put_backward, promote=NONE, jvp=AUTO_LINEAR)


def index_put(input, indices, values, accumulate=False):
    array_key, _ = _convert_key(input, tuple(indices))
    return INDEX_PUT(input, _as_value(input, values), key=array_key, accumulate=accumulate)


def _as_value(target, value):
    if isinstance(value, Tensor):
        if value._device is not target._device:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                               f"{target._device} and {value._device}!")
        value = value if value.dtype is target.dtype else value.to(target.dtype)
        return _strip_leading_ones(value)
    return python_number(value)  # NOTE [ NumPy scalars are Python numbers ] in dtypes.py


def _strip_leading_ones(value):
    # PyTorch drops a value's leading size-1 dims before broadcasting it to the indexed
    # shape, so a (1, 1, 2, 4) value fills a (2, 4) slot (and its gradient keeps the
    # (1, 1, 2, 4) shape through the reshape).
    shape = value._data.shape
    lead = 0
    while lead < len(shape) and shape[lead] == 1:
        lead += 1
    return value.reshape(shape[lead:]) if lead else value


def setitem(tensor, key, value):
    """``tensor[key] = value``, in place; differentiable for tensors in the graph."""
    if modes.vmap is not None and modes.vmap.setitem(tensor, key, value) is not NOT_BATCHED:
        return  # a batched target, value or index (ember/func/batching.py)
    check_inplace(tensor)
    if isinstance(value, np.generic) and not isinstance(value, (np.integer, float)):
        # PyTorch assigns a NumPy integer or np.float64 (a float), but no other NumPy scalar
        raise TypeError(f"can't assign a numpy.{type(value).__name__} to a {legacy_type_name(tensor)}")
    array_key = _basic_key(key)
    if array_key is None:
        array_key, basic = _convert_key(tensor, key)
        if not basic and isinstance(value, Tensor) and value.dtype is not tensor.dtype:
            raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                               f"{_type_name(tensor.dtype)} for the destination and {_type_name(value.dtype)} "
                               "for the source.")
        # (With ints in the key PyTorch writes into a select view first; its overlap rule
        # there is not mirrored: ember checks keys without ints only.)
        if not basic and isinstance(value, Tensor) and array_key.__class__ is not SelectKey \
                and not _is_masked_fill(array_key, value):
            _check_no_overlap(tensor._data, value._data)
    value = _as_value(tensor, value)
    if value.__class__ is int:
        value = _scalar_as(value, tensor._data.dtype)
    value_grad = isinstance(value, Tensor) and value._requires_grad
    direct = not grad_state.enabled or not (tensor._requires_grad or value_grad)
    if direct and not (modes.forward_ad is not None and _has_tangents(tensor, value)):
        target, key = locate(setitem_array(tensor, array_key), array_key)  # may be an expanded tensor's alias
        if isinstance(value, Tensor) and is_basic_key(array_key):  # a copy into a view, in PyTorch
            check_no_partial_overlap(target[key], value._data, tensor._device.backend.xp)
        try:
            target[key] = value._data if isinstance(value, Tensor) else value
        except IndexError:
            _check_bounds(tensor._data.shape, array_key)
            raise
        except ValueError as error:  # NumPy's broadcast failure
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(value.shape)} cannot be broadcast "
                               f"to indexing result of shape {list(target[key].shape)}") from error
        tensor._version_counter[0] += 1
        return
    write_result(tensor, INDEX_PUT(tensor, value, key=array_key))


def _has_tangents(tensor, value):
    # a write that carries tangents takes the general path (autograd/forward_grad.py)
    return tensor._fw_grads is not None or isinstance(value, Tensor) and value._fw_grads is not None


def _is_masked_fill(key, value):
    # PyTorch's index_put_ with one bool mask and a one-element value is masked_fill_
    # with value.item(): no overlap check there.
    return value._data.size == 1 and len(key) == 1 and getattr(key[0], "dtype", None) is not None \
        and key[0].dtype.kind == "b"


def _check_no_overlap(a, b):
    """PyTorch's index_put_ refuses a value whose memory range meets the target's (when
    both are dense, so the check is decidable: its assert_no_overlap)."""
    from ember.memory_format import is_non_overlapping_and_dense
    from ember.native.shape.views import element_strides
    from ember.tensor import _array_address

    same = _array_address(a) == _array_address(b) and a.shape == b.shape and a.strides == b.strides
    if not same and (a.size == 0 or b.size == 0):
        return
    if not same and not (is_non_overlapping_and_dense(a.shape, element_strides(a))
            and is_non_overlapping_and_dense(b.shape, element_strides(b))):
        return
    a_begin, b_begin = _array_address(a), _array_address(b)
    if same or a_begin < b_begin + b.nbytes and b_begin < a_begin + a.nbytes:
        raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor "
                           "refer to a single memory location. Please clone() the tensor before performing the "
                           "operation.")


def _check_writeable(tensor):
    if not getattr(tensor._data.flags, "writeable", True):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                           "single memory location. Please clone() the tensor before performing the operation.")


# --- where, masked_fill ---------------------------------------------------------


def _where_kernel(xp, cond, a, b):
    return xp.where(cond, a, b)


def _where_backward(ctx, grad):
    cond, _, _ = ctx.saved_inputs
    _, need_a, need_b = ctx.needs_input_grad
    zero = grad.new_zeros(())  # not grad * 0: a NaN or inf cotangent must not leak into the unchosen side
    return None, (WHERE_RAW(cond, grad, zero) if need_a else None), (WHERE_RAW(cond, zero, grad) if need_b else None)


WHERE_RAW = Op("aten::where", _where_kernel, _where_backward, promote=NONE, save="inputs", jvp=AUTO_ELEMENT_WISE)
# masked_fill is a where(mask, value, input) recorded under PyTorch's node names.
MASKED_FILL = Op("aten::masked_fill.Scalar", _where_kernel, _where_backward, promote=NONE, save="inputs",
                 backward_name="MaskedFillBackward0", jvp=AUTO_ELEMENT_WISE)
MASKED_FILL_TENSOR = Op("aten::masked_fill.Tensor", _where_kernel, _where_backward, promote=NONE, save="inputs",
                        backward_name="MaskedFillBackward1", jvp=AUTO_ELEMENT_WISE)


def _where_promote(cond, a, b):
    from ember import dtypes

    keys = []
    for x in (a, b):
        if isinstance(x, Tensor):
            keys.append((2 if x.ndim else 1, x.dtype))
        else:
            keys.append((0, dtypes.scalar_dtype(x)))
    common = dtypes.result_type_from_keys(tuple(keys))
    return [x.to(common) if isinstance(x, Tensor) and x.dtype is not common else
            (x if isinstance(x, Tensor) else _scalar_as(x, common.np)) for x in (a, b)]


def _scalar_as(value, np_dtype, check_overflow=False):
    """A Python number as a NumPy scalar of ``np_dtype``; ints wrap like PyTorch's
    (NOTE [ Python ints wrap into integer dtypes ] in dtypes.py), floats reach float16
    through float32."""
    from ember.dtypes import checked_int, python_float_as

    if value.__class__ is int:
        return np_dtype.type(checked_int(value, np_dtype))
    return np_dtype.type(python_float_as(value, np_dtype, check_overflow))


def where(condition, input=None, other=None):
    """``input`` where ``condition`` is true, else ``other``; scalars allowed.
    ``where(condition)`` alone is ``nonzero(condition, as_tuple=True)``."""
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if condition.dtype.name != "bool":
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{condition.dtype.name.capitalize()}")
    a, b = _where_promote(condition, python_number(input), python_number(other))
    return WHERE_RAW(condition, a, b)


def masked_fill(input, mask, value):
    """``input`` with ``value`` where ``mask`` is true (input and mask broadcast together)."""
    if mask.dtype.name != "bool":
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {mask.dtype.name}")
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value.ndim} dimension(s).")
        value = value.to(input.dtype)
        out = MASKED_FILL_TENSOR(mask, value, input)
    else:
        out = MASKED_FILL(mask, _scalar_as(python_number(value), input._data.dtype, check_overflow=True), input)
    return out  # the broadcast shape: a mask larger than the input grows it (masked_fill_ refuses)


def masked_fill_(input, mask, value):
    check_inplace(input)
    if not getattr(input._data.flags, "writeable", True) and not _records(input, value):
        masked_fill(input, mask, value)  # checks the arguments, raises PyTorch's errors
        return masked_fill_overlapping(input, mask.expand_as(input), value)
    return write_result(input, masked_fill(input, mask, value))


def _records(target, value):
    return grad_state.enabled and (target._requires_grad or isinstance(value, Tensor) and value._requires_grad)


def masked_select(input, mask):
    """The elements of ``input`` where ``mask`` is true, as a 1-d tensor."""
    from ember.native.shape.shape import broadcast_tensors

    x, m = broadcast_tensors(input, mask)
    return getitem(x, m)


# --- gather, scatter ------------------------------------------------------------


def _check_gather(name, input, dim, index):
    if index.dtype.name not in ("int64", "int32"):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    if index.ndim != input.ndim and not (index.ndim <= 1 and input.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")


def _gather_kernel(xp, a, index, dim):
    if index.size == 0:
        return xp.empty(index.shape, dtype=a.dtype)
    if a.ndim == 0:
        return a.reshape(1)[index.reshape(-1)].reshape(index.shape)
    # The index may be smaller than `a` in the other dims: address `a` by a full grid.
    return a[_scatter_index(xp, index, dim)]


def _gather_backward(ctx, grad):
    from ember.native.factory import zeros

    (meta, _) = ctx.input_meta
    _, index = ctx.saved_inputs
    base = zeros(meta[0], dtype=grad.dtype, device=grad.device)
    if index.numel() == 0:  # nothing was picked: a zero gradient
        return base, None
    return scatter_add(base, ctx.attrs["dim"], index, grad), None


GATHER = Op("aten::gather", _gather_kernel, _gather_backward, save="inputs", jvp=AUTO_LINEAR)


def gather(input, dim, index):
    """``out[i][j] = input[index[i][j]][j]`` for ``dim=0`` (and so on): values picked
    along ``dim`` by ``index``."""
    if index.numel() == 0:  # PyTorch checks nothing else for an empty index: the result is shaped like it
        return GATHER(input, index.long(), dim=dim)
    _check_gather("gather", input, dim, index)
    dim = _wrap_dim(dim, input.ndim)
    if any(index.shape[d] > input.shape[d] for d in range(index.ndim) if d != dim):
        raise RuntimeError(f"Size does not match at dimension {dim} expected index {list(index.shape)} to be "
                           f"smaller than self {list(input.shape)} apart from dimension {dim}")
    _check_index_range(index, dim, input.shape[dim] if input.ndim else 1, "gather")
    return GATHER(input, index, dim=dim)


def _check_index_range(index, dim, size, name):
    # Unlike a subscript, these ops take no negative index (PyTorch's rule); the message
    # names the first index out of range, in row-major order.
    if index.numel() and (bool((index >= size).any()) or bool((index < 0).any())):
        if name == "index_select":
            raise IndexError("index out of range in self")
        flat = index._host().reshape(-1)
        bad = int(flat[(flat < 0) | (flat >= size)][0])
        raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {size}")


def take_along_dim(input, indices, dim=None):
    if dim is None:
        return gather(input.flatten(), 0, indices.flatten())
    from ember.native.shape.shape import broadcast_shapes

    dim = _wrap_dim(dim, input.ndim)
    shape_in, shape_idx = list(input.shape), list(indices.shape)
    shape_in[dim] = shape_idx[dim] = 1
    common = list(broadcast_shapes(shape_in, shape_idx))
    a = common.copy()
    a[dim] = input.shape[dim]
    b = common.copy()
    b[dim] = indices.shape[dim]
    # Along a dim, PyTorch wraps negative indices (without one, the flat gather refuses them).
    indices = indices + (indices < 0).to(indices.dtype) * input.shape[dim]
    return gather(input.expand(a), dim, indices.expand(b))


def _scatter_index(xp, index, dim):
    # The full key of an advanced index that addresses `out` at index along `dim`.
    # An open grid by hand: CuPy's `indices` has no `sparse=`.
    ndim = index.ndim
    grids = [xp.arange(n).reshape((1,) * d + (n,) + (1,) * (ndim - d - 1)) for d, n in enumerate(index.shape)]
    return tuple(index if d == dim else grids[d] for d in range(ndim))


def _scatter_kernel(xp, a, index, src, dim, reduce=None):
    out = a.copy()
    if a.ndim == 0:
        out = out.reshape(1)
        index, dim = index.reshape(-1), 0
        if hasattr(src, "reshape"):
            src = src.reshape(-1)
    key = _scatter_index(xp, index, dim)
    values = src[tuple(slice(0, s) for s in index.shape)] if hasattr(src, "shape") and src.ndim else src
    if reduce is None:
        out[key] = values
    elif reduce == "add":
        _add_at(xp, out, key, values)
    elif reduce == "multiply":
        xp.multiply.at(out, key, values)
    else:
        raise RuntimeError(f"reduce argument must be either add or multiply, got {reduce}")
    return out.reshape(a.shape)


def _scatter_backward(ctx, grad):
    _, index, src = ctx.saved_inputs
    dim = ctx.attrs["dim"]
    need_a, _, need_src = ctx.needs_input_grad
    grad_a = SCATTER(grad, index, 0.0, dim=dim) if need_a else None
    grad_src = None
    if need_src:
        grad_src = GATHER(grad, index, dim=dim)
        if tuple(grad_src.shape) != tuple(src.shape):
            from ember.native.factory import zeros

            grad_src = SCATTER_ADD(zeros(src.shape, dtype=grad.dtype, device=grad.device),
                                   index * 0 + _arange_like(index, dim), grad_src, dim=dim)
    return grad_a, None, grad_src


def _arange_like(index, dim):
    from ember.native.factory import arange

    shape = [1] * index.ndim
    shape[dim] = index.shape[dim]
    return arange(index.shape[dim], device=index.device).reshape(shape)


def _scatter_add_backward(ctx, grad):
    _, index, src = ctx.saved_inputs
    dim = ctx.attrs["dim"]
    need_a, _, need_src = ctx.needs_input_grad
    return (grad if need_a else None), None, (GATHER(grad, index, dim=dim) if need_src else None)


SCATTER = Op("aten::scatter", _scatter_kernel, _scatter_backward, promote=NONE, save="inputs", jvp=AUTO_LINEAR)
SCATTER_ADD = Op("aten::scatter_add", lambda xp, a, index, src, dim: _scatter_kernel(xp, a, index, src, dim, "add"),
                 _scatter_add_backward, promote=NONE, save="inputs", jvp=AUTO_LINEAR)


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """Write ``src`` (or ``value``) into a copy of ``input`` at ``index`` along ``dim``."""
    _check_gather("scatter", input, dim, index)
    dim = _wrap_dim(dim, input.ndim)
    if src is None:
        src = value
    if isinstance(src, Tensor):
        if src.dtype is not input.dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    else:
        src = _scalar_as(src, input._data.dtype)
    _check_index_range(index, dim, input.shape[dim] if input.ndim else 1, "scatter")
    if reduce is None:
        return SCATTER(input, index, src, dim=dim)
    return SCATTER(input, index, src, dim=dim, reduce=reduce)


def scatter_add(input, dim, index, src):
    """Add ``src`` into a copy of ``input`` at ``index`` along ``dim`` (repeats add up)."""
    _check_gather("scatter_add", input, dim, index)
    dim = _wrap_dim(dim, input.ndim)
    _check_index_range(index, dim, input.shape[dim] if input.ndim else 1, "scatter_add")
    return SCATTER_ADD(input, index, src, dim=dim)


# --- index_select, index_add ----------------------------------------------------


def _index_select_kernel(xp, a, index, dim):
    return xp.take(a, index, axis=dim) if a.ndim else a.reshape(1)[index].reshape(index.shape)


def _index_select_backward(ctx, grad):
    (meta, _) = ctx.input_meta
    _, index = ctx.saved_inputs
    from ember.native.factory import zeros

    return index_add(zeros(meta[0], dtype=grad.dtype, device=grad.device), ctx.attrs["dim"], index, grad), None


INDEX_SELECT = Op("aten::index_select", _index_select_kernel, _index_select_backward, promote=NONE, save="inputs",
                  jvp=AUTO_LINEAR)


def index_select(input, dim, index):
    """Rows (or slices along ``dim``) picked by a 1-d integer ``index``."""
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index.dtype.name not in ("int64", "int32"):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    dim = _wrap_dim(dim, input.ndim)
    _check_index_range(index, dim, input.shape[dim] if input.ndim else 1, "index_select")
    if input.ndim == 0:  # a 0-d input gives a 0-d result (its one element, picked once)
        return INDEX_SELECT(input, index.reshape(()), dim=dim)
    return INDEX_SELECT(input, index.reshape(-1) if index.ndim == 0 else index, dim=dim)


def _index_add_kernel(xp, a, index, source, dim, alpha=1):
    if a.ndim == 0:  # a 0-d input indexes like a 1-element vector
        return _index_add_kernel(xp, a.reshape(1), index.reshape(-1), source.reshape(-1), 0, alpha).reshape(())
    out = a.copy()
    key = [slice(None)] * a.ndim
    key[dim] = index
    _add_at(xp, out, tuple(key), source if alpha == 1 else source * alpha)
    return out


def _index_add_backward(ctx, grad):
    _, index, _ = ctx.saved_inputs
    dim, alpha = ctx.attrs["dim"], ctx.attrs.get("alpha", 1)
    need_a, _, need_source = ctx.needs_input_grad
    grad_source = None
    if need_source:
        grad_source = INDEX_SELECT(grad, index, dim=dim)
        if alpha != 1:
            grad_source = grad_source * alpha
    return (grad if need_a else None), None, grad_source


INDEX_ADD = Op("aten::index_add", _index_add_kernel, _index_add_backward, promote=NONE, save="inputs", jvp=AUTO_LINEAR)


def index_add(input, dim, index, source, *, alpha=1):
    """Add slices of ``source`` into a copy of ``input`` at ``index`` along ``dim``."""
    dim = _wrap_dim(dim, input.ndim)
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_add_(): self ({input.dtype}) and source ({source.dtype}) must have the same "
                           "scalar type")
    _check_index_range(index, dim, input.shape[dim] if input.ndim else 1, "index_add")
    return INDEX_ADD(input, index, source, dim=dim, alpha=alpha)


# --- nonzero --------------------------------------------------------------------


def _nonzero_kernel(xp, a):
    return xp.stack(xp.nonzero(a), axis=1).astype("int64") if a.ndim else xp.zeros((int(bool(a)), 0), "int64")


NONZERO = Op("aten::nonzero", _nonzero_kernel, None)


def nonzero(input, *, as_tuple=False):
    """Indices of the nonzero elements: an (n, ndim) tensor, or a tuple of 1-d tensors."""
    out = NONZERO(input)
    if not as_tuple:
        return out
    if input.ndim == 0:  # one index (0) when the element is nonzero, none otherwise
        from ember.native.factory import zeros

        return (zeros(out.shape[0], dtype=out.dtype, device=out.device),)
    return tuple(out[:, d] for d in range(input.ndim))


def nonzero_static(input, *, size, fill_value=-1):
    """``nonzero(input)`` with exactly ``size`` rows: the first ``size`` indices, padded
    with rows of ``fill_value`` when there are fewer (a shape known before the values)."""
    from ember.native.factory import full
    from ember.native.shape.shape import cat

    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    found = nonzero(input)
    if found.shape[0] >= size:
        return found[:size].clone()
    padding = full((size - found.shape[0], input.ndim), fill_value, dtype=found.dtype, device=found.device)
    return cat([found, padding])


def argwhere(input):
    return nonzero(input)


del DEFAULT
