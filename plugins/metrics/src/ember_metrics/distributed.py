"""How a metric's state is combined over the ranks of an ``ember.distributed`` job.

PyTorch counterpart: none in torch; torchmetrics/utilities/distributed.py (``gather_all_tensors``) and
the reductions of torchmetrics/utilities/data.py (``dim_zero_sum``, ``dim_zero_cat``, ...)
(torchmetrics 1.9), applied as torchmetrics' ``Metric._sync_dist`` applies them.

# NOTE [ Syncing a state ]
# torchmetrics gathers every state from every rank (``all_gather``) and then reduces the
# stack with the state's ``dist_reduce_fx``. ember does the same for "cat", None and a
# callable, and hands "sum", "min", "max" and "mean" to ``all_reduce`` (the same
# numbers: summing a stack of the ranks' tensors is what an all-reduce with SUM
# computes, in one collective instead of a gather of every rank's copy). A list state is
# concatenated on its rank first, then gathered. Ranks may hold lists of different
# lengths (a rank may even hold none, when its share of the data was empty): each rank
# first says the shape and dtype it holds (``all_gather_object``), every rank pads its
# tensor along dim 0 to the longest, and the gathered tensors are cut back to their own
# lengths, as ``gather_all_tensors`` pads uneven tensors.
"""

import ember
import ember.distributed as dist


def is_distributed():
    """Whether this process is one rank of a job of more than one."""
    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def reduce_state(value, reduction, group=None):
    """The state ``value`` of this rank combined with every other rank's by
    ``reduction`` (NOTE [ Syncing a state ])."""
    if isinstance(value, list):
        gathered = gather_all_tensors(_local_cat(value), group)
        kept = [tensor for tensor in gathered if tensor is not None]
        return [ember.cat(kept)] if kept else []
    if reduction in ("sum", "mean", "min", "max"):
        return _all_reduce(value, reduction, group)
    gathered = gather_all_tensors(value, group)
    if reduction == "cat":
        return _local_cat(gathered)
    stacked = ember.stack(gathered)
    if reduction is None:
        return stacked
    return reduction(stacked)


def _all_reduce(value, reduction, group):
    op = {"sum": dist.ReduceOp.SUM, "mean": dist.ReduceOp.SUM, "min": dist.ReduceOp.MIN,
          "max": dist.ReduceOp.MAX}[reduction]
    result = value.clone()
    dist.all_reduce(result, op=op, group=group)
    if reduction == "mean":  # torchmetrics' dim_zero_mean of the stack: a float mean
        result = result.double() / dist.get_world_size(group) if not result.is_floating_point() \
            else result / dist.get_world_size(group)
    return result


def _local_cat(values):
    """A list state as one tensor (None for an empty list)."""
    if not values:
        return None
    return ember.cat([item.reshape(1) if item.ndim == 0 else item for item in values])


def gather_all_tensors(tensor, group=None):
    """Every rank's ``tensor``, in rank order; tensors of different lengths along dim 0
    (and None, for a rank that holds nothing) come back as each rank held them."""
    described = [None] * dist.get_world_size(group)
    mine = None if tensor is None else (tuple(tensor.shape), tensor.dtype)
    dist.all_gather_object(described, mine, group=group)
    present = [entry for entry in described if entry is not None]
    if not present:
        return described
    shape, dtype = present[0]
    longest = max(entry[0][0] if entry[0] else 1 for entry in present)
    padded = _padded(tensor, shape, dtype, longest)
    gathered = [ember.empty_like(padded) for _ in described]
    dist.all_gather(gathered, padded, group=group)
    return [None if entry is None else _cut(result, entry[0])
            for result, entry in zip(gathered, described)]


def _padded(tensor, shape, dtype, longest):
    """``tensor`` (or nothing, shaped as the other ranks' tensors) padded to ``longest`` rows."""
    if not shape:  # 0-d states all have one shape
        return tensor.clone()
    rows = 0 if tensor is None else tensor.shape[0]
    pad = ember.zeros((longest - rows, *shape[1:]), dtype=dtype)
    return pad if tensor is None else ember.cat([tensor, pad])


def _cut(tensor, shape):
    return tensor if not shape else tensor[:shape[0]]
