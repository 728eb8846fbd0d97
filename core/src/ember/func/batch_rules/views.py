"""Batch rules of the view and shape ops: view/reshape, permute, transpose, unsqueeze,
squeeze, expand, select, slice, basic indexing, diagonal, flip, roll, split, unbind,
unfold, repeat, padding, tril/triu, cat.

PyTorch counterpart: aten/src/ATen/functorch/BatchRulesViews.cpp (each logical dim
moved past the batch dim; the result stays a view of the physical value) and
BatchRulesDecompositions.cpp (v2.13).
"""

from ember.func.batch_rules import register
from ember.func.batch_rules._helpers import logical_rank, materialize, pad_to_rank, physical_dim, unwrap, wrap


def _batched_only(inputs, info):
    """The physical value of the one input, or None when another input is batched too."""
    value, batched = unwrap(inputs[0], info.level)
    if not batched or any(unwrap(x, info.level)[1] for x in inputs[1:]):
        return None
    return value


def _wrapped(result, level):
    if isinstance(result, (tuple, list)):
        return tuple(wrap(r, level) for r in result)
    return wrap(result, level)


def _dim_rule(*dim_attrs, extra_rank=0):
    """A rule for an op whose attributes ``dim_attrs`` are logical dims (an int or a
    tuple); ``extra_rank``: the op's dims count the result's rank (unsqueeze: one more)."""
    def rule(op, inputs, attrs, info):
        value = _batched_only(inputs, info)
        if value is None:
            return NotImplemented
        rank = logical_rank(inputs[0]) + extra_rank
        moved = dict(attrs)
        for name in dim_attrs:
            dims = attrs.get(name)
            if dims is None:
                continue
            moved[name] = (physical_dim(dims, rank) if isinstance(dims, int)
                           else tuple(physical_dim(d, rank) for d in dims))
        return _wrapped(op(value, *inputs[1:], **moved), info.level)
    return rule


register("aten::transpose", "aten::t")(_dim_rule("dim0", "dim1"))
register("aten::unsqueeze")(_dim_rule("dim", extra_rank=1))
register("aten::squeeze", "aten::squeeze.dim", "aten::squeeze.dims",
         "aten::flip", "aten::roll")(_dim_rule("dims"))
register("aten::select", "aten::slice", "aten::split", "aten::split_with_sizes", "aten::unbind", "aten::unfold",
         "aten::index_select")(_dim_rule("dim"))
register("aten::diagonal")(_dim_rule("dim1", "dim2"))
register("aten::tril", "aten::triu", "aten::constant_pad_nd")(_dim_rule())  # they work on the last dims


@register("aten::permute")
def permute(op, inputs, attrs, info):
    value = _batched_only(inputs, info)
    rank = logical_rank(inputs[0])
    return wrap(op(value, dims=(0,) + tuple(physical_dim(d, rank) for d in attrs["dims"])), info.level)


@register("aten::view", "aten::_reshape_alias", "aten::_unsafe_view")
def view(op, inputs, attrs, info):
    value = _batched_only(inputs, info)
    return wrap(op(value, shape=(value.shape[0],) + tuple(attrs["shape"])), info.level)


@register("aten::expand")
def expand(op, inputs, attrs, info):
    """The sample padded to the target's rank (new dims go after the batch), then expanded."""
    value = _batched_only(inputs, info)
    shape = tuple(attrs["shape"])
    value = pad_to_rank(value, len(shape))
    return wrap(op(value, shape=(value.shape[0],) + shape), info.level)


@register("aten::repeat")
def repeat(op, inputs, attrs, info):
    value = _batched_only(inputs, info)
    sizes = tuple(attrs["sizes"])
    return wrap(op(pad_to_rank(value, len(sizes)), sizes=(1,) + sizes), info.level)


@register("aten::_basic_index", "aten::_basic_index.alias", "aten::_basic_index.select",
          "aten::_basic_index.unsqueeze")
def basic_index(op, inputs, attrs, info):
    """``x[key]`` with ints, slices, None and Ellipsis: the key gains a full slice for
    the batch dim."""
    value = _batched_only(inputs, info)
    key = attrs["key"]
    key = key if isinstance(key, tuple) else (key,)
    return wrap(op(value, key=(slice(None),) + key), info.level)


@register("aten::cat")
def cat(op, inputs, attrs, info):
    """Every operand given the batch (an unbatched one expanded), joined one dim later."""
    rank = max(logical_rank(x) for x in inputs)
    physical = [materialize(x, info) if logical_rank(x) == rank else x for x in inputs]
    if any(logical_rank(x) != rank for x in inputs):  # legacy empty 1-d operands: the loop serves them
        return NotImplemented
    return wrap(op(*physical, **dict(attrs, dim=physical_dim(attrs["dim"], rank))), info.level)


@register("aten::index")
def index(op, inputs, attrs, info):
    """``x[key]`` with index arrays: a full slice for the batch dim in front of the key.
    NumPy (as torch) puts the indexed dims first when the index arrays are not next to
    each other; then the batch dim is moved back to the front."""
    import numpy as np

    value = _batched_only(inputs, info)
    key = attrs["key"]
    key = key if isinstance(key, tuple) else (key,)
    positions = [i for i, k in enumerate(key) if isinstance(k, np.ndarray) or hasattr(k, "__array_interface__")]
    out = op(value, key=(slice(None),) + key)
    if positions and positions[-1] - positions[0] + 1 != len(positions):  # separated: indexed dims went first
        arrays = [key[i] for i in positions]
        ndim = len(np.broadcast_shapes(*[a.shape if a.dtype != bool else (int(a.sum()),) for a in arrays]))
        out = out.movedim(ndim, 0)
    return wrap(out, info.level)
