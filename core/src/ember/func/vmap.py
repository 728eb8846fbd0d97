"""``vmap``: map a function over a dimension of its inputs, by batching its ops.

PyTorch counterpart: torch/_functorch/apis.py (``vmap``) and torch/_functorch/vmap.py
(in_dims/out_dims handling, ``_create_batched_inputs``, ``_unwrap_batched``,
``chunk_size``, ``randomness``) (v2.13).

The function runs once. Its inputs are wrapped as BatchedTensors of a new vmap level
(the mapped dim moved to the front), every op it calls runs its batch rule on the
whole batch (ember/func/batching.py, ember/func/batch_rules/), and the outputs are
unwrapped with the batch dim moved to ``out_dims``.
"""

from ember.func.batched_tensor import unwrap, wrap
from ember.func.batching import vmap_level
from ember.utils._pytree import tree_flatten, tree_unflatten

__all__ = ["vmap"]


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` mapped over dimension ``in_dims`` of its inputs, results stacked at
    ``out_dims``; with ``chunk_size``, the batch runs that many samples at a time.

    >>> import ember
    >>> ember.func.vmap(lambda row: row.sum())(ember.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([3., 7.])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. "
                           f"Got {randomness}")
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    def wrapper(*args, **kwargs):
        arg_leaves, arg_spec = tree_flatten(args)
        dims = _broadcast_in_dims(in_dims, args, func)
        size = _batch_size(arg_leaves, dims, func, in_dims)
        dims = [None if d is None else d % arg_leaves[i].dim() for i, d in enumerate(dims)]
        if chunk_size is None or chunk_size >= size:
            return _run(func, arg_leaves, arg_spec, dims, size, kwargs, out_dims, randomness)
        return _run_chunked(func, arg_leaves, arg_spec, dims, size, kwargs, out_dims, randomness, chunk_size)
    return wrapper


def _run(func, leaves, spec, dims, size, kwargs, out_dims, randomness):
    from ember.random import get_rng_state

    start = get_rng_state() if randomness == "error" else None
    with vmap_level(size, randomness) as info:
        batched = [leaf if dim is None else wrap(leaf.movedim(dim, 0), info.level) for leaf, dim in zip(leaves, dims)]
        output = func(*tree_unflatten(batched, spec), **kwargs)
        if start is not None:
            _check_no_draws(start)
        return _unwrap_outputs(output, out_dims, info, func)


def _check_no_draws(start):
    # ember draws random numbers in Python (NOTE in ember/func/batch_rules/random.py):
    # a function that moved the generator drew some, which "error" forbids.
    from ember.func.batch_rules.random import ERROR_MESSAGE
    from ember.random import get_rng_state

    now = get_rng_state()
    if now.shape != start.shape or not bool((now == start).all()):
        raise RuntimeError(ERROR_MESSAGE)


def _run_chunked(func, leaves, spec, dims, size, kwargs, out_dims, randomness, chunk_size):
    """The batch in chunks of ``chunk_size`` samples, the outputs joined at ``out_dims``."""
    from ember.native.shape.shape import cat
    from ember.random import get_rng_state, set_rng_state

    state = get_rng_state() if randomness == "same" else None  # "same": every chunk draws the same numbers
    chunks = []
    for start in range(0, size, chunk_size):
        length = min(chunk_size, size - start)
        if state is not None:
            set_rng_state(state)
        part = [leaf if dim is None else leaf.narrow(dim, start, length) for leaf, dim in zip(leaves, dims)]
        chunks.append(_run(func, part, spec, dims, length, kwargs, out_dims, randomness))
    columns = [tree_flatten(chunk)[0] for chunk in chunks]
    out_spec = tree_flatten(chunks[0])[1]
    joined_dims = _out_dims_per_leaf(out_dims, chunks[0], func)
    joined = [column[0] if dim is None else cat(list(column), dim)
              for column, dim in zip(zip(*columns), joined_dims)]
    return tree_unflatten(joined, out_spec)


def _unwrap_outputs(output, out_dims, info, func):
    from ember.tensor import Tensor

    leaves, spec = tree_flatten(output)
    result = []
    for leaf, dim in zip(leaves, _out_dims_per_leaf(out_dims, output, func)):
        value, batched = unwrap(leaf, info.level)
        if dim is None:
            if batched:
                raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` can not return a BatchedTensor when "
                                 "out_dim is None")
            result.append(leaf)
            continue
        if not isinstance(leaf, Tensor):
            raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return Tensors, got type "
                             f"{type(leaf)}. Did you mean to set out_dims= to None for output?")
        if not batched:  # the same for every sample: expanded, as torch does
            value = leaf.unsqueeze(0).expand((info.size,) + tuple(leaf.shape))
        result.append(value.movedim(0, dim % value.dim()))
    return tree_unflatten(result, spec)


def _out_dims_per_leaf(out_dims, output, func):
    """One out_dim (or None) per leaf of ``output``: an int for all, or a tuple matching
    the output tuple, each entry for every leaf below it (torch's _broadcast_to_and_flatten)."""
    count = len(tree_flatten(output)[0])
    if isinstance(out_dims, tuple) and len(out_dims) == 1 and not isinstance(output, tuple):
        out_dims = out_dims[0]  # a single output with a one-element out_dims, as torch allows
    if isinstance(out_dims, int) or out_dims is None:
        return [out_dims] * count
    if isinstance(out_dims, tuple) and isinstance(output, tuple) and len(out_dims) == len(output):
        dims = []
        for dim, item in zip(out_dims, output):
            item_count = len(tree_flatten(item)[0])
            dims.extend([dim] * item_count if isinstance(dim, int) or dim is None else tree_flatten(dim)[0])
        if len(dims) == count:
            return dims
    raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible "
                     "with the structure of `outputs`.")


def _name(func):
    return getattr(func, "__name__", repr(func))


def _broadcast_in_dims(in_dims, args, func):
    """One dim (or None) per leaf of ``args``."""
    if isinstance(in_dims, int) or in_dims is None:
        if in_dims is None:
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int "
                             f"or a (potentially nested) tuple matching the structure of inputs, got: "
                             f"{type(in_dims)}.")
        return [in_dims] * len(tree_flatten(args)[0])
    if not isinstance(in_dims, tuple) or len(in_dims) != len(args):
        raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with "
                         f"the structure of `inputs`. in_dims has structure {in_dims} but inputs has "
                         f"{len(args)} arguments.")
    dims = []
    for dim, arg in zip(in_dims, args):
        count = len(tree_flatten(arg)[0])
        if isinstance(dim, int) or dim is None:
            dims.extend([dim] * count)
        else:
            dims.extend(tree_flatten(dim)[0])
    return dims


def _batch_size(leaves, dims, func, in_dims):
    from ember.tensor import Tensor

    sizes = []
    for leaf, dim in zip(leaves, dims):
        if dim is None:
            continue
        if not isinstance(leaf, Tensor):
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={dim} for an input "
                             f"but the input is of type {type(leaf)}. We cannot vmap over non-Tensor arguments, "
                             "please use None as the respective in_dim")
        if not -leaf.dim() <= dim < leaf.dim():
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={dim} for some "
                             f"input, but that input is a Tensor of dimensionality {leaf.dim()} so expected in_dim "
                             f"to satisfy -{leaf.dim()} <= in_dim < {leaf.dim()}.")
        sizes.append(leaf.shape[dim])
    if not sizes:
        raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): at least one input must be a "
                         "Tensor mapped over a dimension (in_dims not None)")
    if len(set(sizes)) > 1:
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return sizes[0]
