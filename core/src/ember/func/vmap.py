"""``vmap``: map a function over a dimension of its inputs.

PyTorch counterpart: torch/_functorch/apis.py (``vmap``) and torch/_functorch/vmap.py
(in_dims/out_dims handling, ``randomness``) (v2.13).
"""

from ember.utils._pytree import tree_flatten, tree_unflatten

__all__ = ["vmap"]

# NOTE [ vmap as a loop ]
# torch's vmap runs the function once, on tensors that carry a hidden batch
# dimension, and every op has a batching rule that works on the whole batch. ember
# runs the function once per sample, on the sample's slices, and stacks the results
# along out_dims: the values are the same (each op sees exactly the numbers it would
# per sample) and so are the gradients through it (slicing and stacking are
# differentiable), which is what per-sample gradients (``vmap(grad(loss))``) need.
# What differs: speed (a Python call per sample), and ember accepts programs torch
# refuses inside vmap (``.item()``, branches on values). randomness: "error" raises
# torch's error when the function draws random numbers; "same" replays one generator
# state for every sample (the same numbers for each, as torch's "same"); "different"
# draws sample after sample (different numbers per sample, but not torch's, which
# draws the batch at once).


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` mapped over dimension ``in_dims`` of its inputs, results stacked at
    ``out_dims`` (``chunk_size`` changes nothing here: NOTE [ vmap as a loop ]).

    >>> import ember
    >>> ember.func.vmap(lambda row: row.sum())(ember.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([3., 7.])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. "
                           f"Got {randomness}")

    def wrapper(*args, **kwargs):
        arg_leaves, arg_spec = tree_flatten(args)
        dims = _broadcast_in_dims(in_dims, args, func)
        size = _batch_size(arg_leaves, dims, func, in_dims)
        results = [func(*tree_unflatten(_slices(arg_leaves, dims, i), arg_spec), **kwargs)
                   for i in _sample_order(size, randomness)]
        return _stacked(results, out_dims, func)
    return wrapper


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


def _slices(leaves, dims, i):
    return [leaf if dim is None else leaf.select(dim, i) for leaf, dim in zip(leaves, dims)]


def _sample_order(size, randomness):
    """The sample indices, with the generator handled as ``randomness`` asks."""
    from ember.random import get_rng_state, set_rng_state

    start = get_rng_state()
    for i in range(size):
        if randomness == "same":
            set_rng_state(start)
        yield i
        if randomness == "error" and not _same_state(get_rng_state(), start):
            raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use "
                               "the 'same' or 'different' randomness flags on vmap or perform the randomness "
                               "operation out of vmap")


def _same_state(a, b):
    return a.shape == b.shape and bool((a == b).all())


def _stacked(results, out_dims, func):
    from ember.native.shape.shape import stack

    leaves_per_sample = [tree_flatten(r) for r in results]
    spec = leaves_per_sample[0][1]
    columns = list(zip(*(leaves for leaves, _ in leaves_per_sample)))
    dims = [out_dims] * len(columns) if isinstance(out_dims, int) else tree_flatten(out_dims)[0]
    if len(dims) != len(columns):
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible "
                         "with the structure of `outputs`.")
    stacked = []
    for column, dim in zip(columns, dims):
        from ember.tensor import Tensor

        if not all(isinstance(value, Tensor) for value in column):
            raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return Tensors, got type "
                             f"{type(column[0])}. Did you mean to set out_dims= to None for output?")
        stacked.append(stack(column, dim=dim))
    return tree_unflatten(stacked, spec)
