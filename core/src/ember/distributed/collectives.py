"""The tensor collectives: ``all_reduce``, ``broadcast``, ``all_gather``, ``send``... .

PyTorch counterpart: torch/distributed/distributed_c10d.py (the collective functions,
with their signatures and in-place semantics) (v2.13).

Each function checks its tensors here (device, dtype, shapes that one rank can see),
hands contiguous arrays to the group's backend and returns None, or the ``Work`` when
``async_op=True``. A tensor that is not contiguous is copied for the backend and the
result copied back when the work is waited on. The ranks passed in (``src``, ``dst``)
are global ranks, as in torch; ``group_src``/``group_dst`` are ranks in the group.
On a rank outside ``group`` every collective returns None at once, like torch.
"""

import numpy as np

from ember.distributed.distributed_c10d import _resolve
from ember.distributed.reduce_op import ReduceOp, check_reduce_op

# --- tensors <-> backend arrays --------------------------------------------------------

def _xp(array):
    """The array's namespace: NumPy, or CuPy for CUDA tensors (the NCCL backend)."""
    namespace = getattr(array, "__array_namespace__", None)
    return np if namespace is None else namespace()


class _Buffer:
    """A tensor's memory as the backend sees it: contiguous, and written back on wait."""

    def __init__(self, tensor, what, writes):
        from ember.tensor import Tensor

        if not isinstance(tensor, Tensor):
            raise TypeError(f"{what} must be an ember.Tensor, got {type(tensor).__name__}")
        self.tensor = tensor
        data = tensor._data
        self.copied = not data.flags.c_contiguous
        self.array = data.copy(order="C") if self.copied else data
        if writes:
            tensor._version_counter[0] += 1  # an in-place write, as far as autograd is concerned

    def write_back(self):
        if self.copied:
            self.tensor._data[...] = self.array


def _finish(work, pg, buffers, async_op):
    work.timeout = pg._timeout
    writes = [b for b in buffers if b.copied]
    if writes:
        previous = work._after

        def after():
            if previous is not None:
                previous()
            for b in writes:
                b.write_back()
        work._after = after
    if async_op:
        return work
    work.wait()
    return None


def _same_kind(tensors, what):
    dtypes = {t.dtype for t in tensors}
    devices = {t.device for t in tensors}
    if len(dtypes) > 1:
        raise ValueError(f"{what}: tensors must all have the same dtype, got {sorted(map(str, dtypes))}")
    if len(devices) > 1:
        raise ValueError(f"{what}: tensors must all be on the same device, got {sorted(map(str, devices))}")


def _member(group):
    pg = _resolve(group)
    return None if pg._backend is None else pg


def _root(pg, rank, group_rank, what):
    """The group rank of a collective's root, from a global rank or a group rank."""
    if rank is not None and group_rank is not None:
        raise ValueError(f"Can not specify both {what} and group_{what}")
    if group_rank is not None:
        if not 0 <= group_rank < pg.size():
            raise ValueError(f"group_{what} {group_rank} is out of range for a group of size {pg.size()}")
        return group_rank
    return pg._group_rank(0 if rank is None else rank, what)


# --- reductions and broadcast -------------------------------------------------------------

def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` over every rank of ``group``; each rank gets the result in
    place."""
    pg = _member(group)
    if pg is None:
        return None
    buffer = _Buffer(tensor, "all_reduce's tensor", writes=True)
    check_reduce_op(op, buffer.array.dtype)
    return _finish(pg._backend.allreduce(buffer.array, op, blocking=not async_op), pg,
                   [buffer], async_op)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduce ``tensor`` over the group onto rank ``dst`` (in place there; other ranks' tensors are unchanged)."""
    pg = _member(group)
    if pg is None:
        return None
    root = _root(pg, dst, group_dst, "dst")
    buffer = _Buffer(tensor, "reduce's tensor", writes=pg.rank() == root)
    check_reduce_op(op, buffer.array.dtype)
    return _finish(pg._backend.reduce(buffer.array, root, op), pg, [buffer], async_op)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy rank ``src``'s ``tensor`` into ``tensor`` on every other rank."""
    pg = _member(group)
    if pg is None:
        return None
    root = _root(pg, src, group_src, "src")
    buffer = _Buffer(tensor, "broadcast's tensor", writes=pg.rank() != root)
    return _finish(pg._backend.broadcast(buffer.array, root, blocking=not async_op), pg, [buffer], async_op)


# --- gathers and scatters -----------------------------------------------------------------

def _stacked(output, input, size, what):
    """``output`` viewed as ``(size, *input.shape)``: it may be stacked or concatenated on dim 0."""
    stacked = (size, *input.shape)
    concatenated = (size * input.shape[0], *input.shape[1:]) if input.ndim else None
    if tuple(output.shape) not in (stacked, concatenated):
        raise ValueError(f"{what}: the output tensor must have shape {stacked} or {concatenated} for an input "
                         f"of shape {tuple(input.shape)} on a group of size {size}, got {tuple(output.shape)}")
    _same_kind([output, input], what)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Every rank's ``input_tensor``, stacked (or concatenated on dim 0) in rank order, into ``output_tensor``."""
    pg = _member(group)
    if pg is None:
        return None
    _stacked(output_tensor, input_tensor, pg.size(), "all_gather_into_tensor")
    out = _Buffer(output_tensor, "all_gather_into_tensor's output", writes=True)
    inp = _Buffer(input_tensor, "all_gather_into_tensor's input", writes=False)
    view = out.array.reshape(pg.size(), *inp.array.shape)
    return _finish(pg._backend.allgather(view, inp.array), pg, [out], async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Every rank's ``tensor`` into ``tensor_list[rank]`` (the list is filled in place)."""
    pg = _member(group)
    if pg is None:
        return None
    _check_list(tensor_list, tensor, pg.size(), "all_gather", "tensor_list")
    inp = _Buffer(tensor, "all_gather's tensor", writes=False)
    gathered = _xp(inp.array).empty((pg.size(), *inp.array.shape), dtype=inp.array.dtype)
    work = pg._backend.allgather(gathered, inp.array)
    work._after = _unstack_into(gathered, tensor_list)
    return _finish(work, pg, [], async_op)


def _check_list(tensors, like, size, what, name):
    if not isinstance(tensors, (list, tuple)) or len(tensors) != size:
        raise ValueError(f"{what}: {name} must be a list of {size} tensors (one per rank of the group), "
                         f"got {len(tensors) if isinstance(tensors, (list, tuple)) else type(tensors).__name__}")
    for i, t in enumerate(tensors):
        if tuple(t.shape) != tuple(like.shape):
            raise ValueError(f"{what}: {name}[{i}] has shape {tuple(t.shape)}, expected {tuple(like.shape)}")
    _same_kind([*tensors, like], what)


def _unstack_into(stacked, tensor_list):
    def after():
        for piece, t in zip(stacked, tensor_list):
            t._data[...] = piece
            t._version_counter[0] += 1
    return after


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input`` (stacked or concatenated per rank) over the group; rank r gets the r-th piece."""
    pg = _member(group)
    if pg is None:
        return None
    _stacked(input, output, pg.size(), "reduce_scatter_tensor")
    out = _Buffer(output, "reduce_scatter_tensor's output", writes=True)
    inp = _Buffer(input, "reduce_scatter_tensor's input", writes=False)
    check_reduce_op(op, out.array.dtype)
    view = inp.array.reshape(pg.size(), *out.array.shape)
    return _finish(pg._backend.reduce_scatter(out.array, view, op), pg, [out], async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """``reduce_scatter_tensor`` with the input given as one tensor per rank."""
    pg = _member(group)
    if pg is None:
        return None
    _check_list(input_list, output, pg.size(), "reduce_scatter", "input_list")
    out = _Buffer(output, "reduce_scatter's output", writes=True)
    check_reduce_op(op, out.array.dtype)
    stacked = _xp(out.array).stack([t._data for t in input_list])
    return _finish(pg._backend.reduce_scatter(out.array, stacked, op), pg, [out], async_op)


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Every rank's ``tensor`` into ``gather_list`` on rank ``dst`` (None elsewhere)."""
    pg = _member(group)
    if pg is None:
        return None
    root = _root(pg, dst, group_dst, "dst")
    inp = _Buffer(tensor, "gather's tensor", writes=False)
    gathered = None
    if pg.rank() == root:
        _check_list(gather_list, tensor, pg.size(), "gather", "gather_list on the destination rank")
        gathered = _xp(inp.array).empty((pg.size(), *inp.array.shape), dtype=inp.array.dtype)
    elif gather_list:
        raise ValueError("gather: Argument ``gather_list`` must NOT be specified on non-destination ranks.")
    work = pg._backend.gather(gathered, inp.array, root)
    if gathered is not None:
        work._after = _unstack_into(gathered, gather_list)
    return _finish(work, pg, [], async_op)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Rank ``src``'s ``scatter_list[r]`` into ``tensor`` on rank r."""
    pg = _member(group)
    if pg is None:
        return None
    root = _root(pg, src, group_src, "src")
    out = _Buffer(tensor, "scatter's tensor", writes=True)
    stacked = None
    if pg.rank() == root:
        _check_list(scatter_list, tensor, pg.size(), "scatter", "scatter_list on the source rank")
        stacked = _xp(out.array).stack([t._data for t in scatter_list])
    elif scatter_list:
        raise ValueError("scatter: Argument ``scatter_list`` must NOT be specified on non-source ranks.")
    return _finish(pg._backend.scatter(out.array, stacked, root), pg, [out], async_op)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None,
                      async_op=False):
    """Rank r sends the r'-th split of ``input`` (dim 0) to rank r' and receives into ``output``'s r'-th split."""
    pg = _member(group)
    if pg is None:
        return None
    _same_kind([output, input], "all_to_all_single")
    size = pg.size()
    in_splits = _splits(input_split_sizes, input, size, "input")
    out_splits = _splits(output_split_sizes, output, size, "output")
    if tuple(output.shape[1:]) != tuple(input.shape[1:]):
        raise ValueError(f"all_to_all_single: output and input must agree past dim 0, got {tuple(output.shape)} "
                         f"and {tuple(input.shape)}")
    out = _Buffer(output, "all_to_all_single's output", writes=True)
    inp = _Buffer(input, "all_to_all_single's input", writes=False)
    return _finish(pg._backend.alltoall(out.array, inp.array, out_splits, in_splits), pg, [out], async_op)


def _splits(sizes, tensor, size, what):
    rows = tensor.shape[0] if tensor.ndim else 1
    if not sizes:
        if rows % size:
            raise ValueError(f"all_to_all_single: the {what}'s dim 0 ({rows}) does not divide evenly over "
                             f"{size} ranks; pass {what}_split_sizes")
        return [rows // size] * size
    sizes = [int(s) for s in sizes]
    if len(sizes) != size or sum(sizes) != rows or min(sizes) < 0:
        raise ValueError(f"all_to_all_single: {what}_split_sizes {sizes} must be {size} non-negative sizes "
                         f"summing to the {what}'s dim 0 ({rows})")
    return sizes


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Rank r sends ``input_tensor_list[r']`` to rank r', which receives it in ``output_tensor_list[r]``."""
    pg = _member(group)
    if pg is None:
        return None
    size = pg.size()
    for name, tensors in (("output_tensor_list", output_tensor_list), ("input_tensor_list", input_tensor_list)):
        if len(tensors) != size:
            raise ValueError(f"all_to_all: {name} must hold {size} tensors, got {len(tensors)}")
    _same_kind([*output_tensor_list, *input_tensor_list], "all_to_all")
    tail = {tuple(t.shape[1:]) for t in [*output_tensor_list, *input_tensor_list]}
    if len(tail) > 1 or any(t.ndim == 0 for t in [*output_tensor_list, *input_tensor_list]):
        raise ValueError("all_to_all: ember needs every tensor to agree past dim 0 "
                         f"(it sends them as one all_to_all_single), got {sorted(tail)}")
    out_splits = [t.shape[0] for t in output_tensor_list]
    in_splits = [t.shape[0] for t in input_tensor_list]
    xp = _xp(input_tensor_list[0]._data)
    inp = xp.concatenate([xp.ascontiguousarray(t._data) for t in input_tensor_list])
    out = xp.empty((sum(out_splits), *inp.shape[1:]), dtype=inp.dtype)
    work = pg._backend.alltoall(out, inp, out_splits, in_splits)

    def after():
        start = 0
        for t, n in zip(output_tensor_list, out_splits):
            t._data[...] = out[start:start + n]
            t._version_counter[0] += 1
            start += n
    work._after = after
    return _finish(work, pg, [], async_op)


def barrier(group=None, async_op=False, device_ids=None):
    """Block until every rank of ``group`` has reached the barrier."""
    pg = _member(group)
    if pg is None:
        return None
    return _finish(pg._backend.barrier(), pg, [], async_op)


# --- point to point -----------------------------------------------------------------------

def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send ``tensor`` to rank ``dst``; returns a ``Work``."""
    pg = _member(group)
    if pg is None:
        return None
    peer = _root(pg, dst, group_dst, "dst")
    if peer == pg.rank():
        raise ValueError("Invalid destination rank: destination rank should not be the same as the rank of "
                         "the current process.")
    buffer = _Buffer(tensor, "send's tensor", writes=False)
    return _finish(pg._backend.send(buffer.array, peer, tag), pg, [], True)


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor`` from rank ``src`` (any rank when None); returns a ``Work``."""
    pg = _member(group)
    if pg is None:
        return None
    peer = None if src is None and group_src is None else _root(pg, src, group_src, "src")
    buffer = _Buffer(tensor, "recv's tensor", writes=True)
    return _finish(pg._backend.recv(buffer.array, peer, tag), pg, [buffer], True)


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send ``tensor`` to rank ``dst`` and wait until it is sent."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor``; returns the sender's global rank (-1 outside the group)."""
    pg = _member(group)
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    return pg._ranks[work._result]
