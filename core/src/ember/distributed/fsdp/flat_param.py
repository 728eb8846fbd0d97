"""The flat parameter of one FSDP unit: its shards, the all_gather that rebuilds it, and the
views that the wrapped module sees as its parameters.

PyTorch counterpart: torch/distributed/fsdp/_flat_param.py (``FlatParamHandle``:
``flatten_tensors``, ``shard``, ``unshard``, ``reshard``, ``_get_unflat_views``) and
the gradient half of torch/distributed/fsdp/_runtime_utils.py
(``_post_backward_hook``, ``_reduce_grad``) (v2.13).

# NOTE [ One flat parameter per unit ]
# A unit's parameters (those of its module that no nested unit took) are flattened in
# registration order into one 1-D buffer, padded with zeros to a multiple of the world
# size, and cut into world-size equal pieces: rank r keeps piece r, ceil(numel / world)
# elements, as the ``_flat_param`` Parameter the optimizer sees. torch pads the same
# way (``chunk`` then pad the last piece), so each rank's shard has torch's size.
# The module's own parameter slots are emptied (None): outside forward the module has
# no full parameters at all, which is the memory FSDP saves.
#
# NOTE [ Freeing storage the autograd graph still holds ]
# Before forward, the shards are all-gathered into a full buffer wrapped as a leaf
# tensor, and ``_FlatParamViews`` cuts that leaf into the original shapes; the module
# runs with those views as its parameters, so the graph's saved tensors are the views
# and gradients flow back into the leaf. torch then frees the full buffer
# (``storage.resize_(0)``) while the graph still points at the view tensors, and
# resizes and refills that same storage before backward. ember does the same with the
# tensor objects: "free" swaps each view's (and the leaf's) array for a zero-stride NaN
# array of the same shape (no memory, and NaN if anything read it by mistake), and
# "unshard for backward" gathers a new buffer and puts views of it back into the very
# tensor objects the graph saved.
"""

import numpy as np

from ember.autograd.function import Function

# The bytes of full (unsharded) parameters alive now, and the most at any time since
# ``reset_peak``: the figure tests and bench/fsdp_memory.py report.
UNSHARDED = {"now": 0, "peak": 0}


def reset_peak():
    UNSHARDED["peak"] = UNSHARDED["now"]


def _freed(array_like, shape):
    """A stand-in array for freed storage: the shape and dtype, no memory, NaN if read."""
    return np.broadcast_to(np.array(np.nan, dtype=array_like.dtype), shape)


class _FlatParamViews(Function):
    """The unsharded flat parameter cut into the module's parameter shapes (views, no copy)."""

    @staticmethod
    def forward(ctx, flat, shapes, offsets):
        from ember.autograd import graph

        ctx.numel = flat.numel()
        return tuple(graph._wrap(flat._data[start:start + int(np.prod(shape, dtype=np.int64))].reshape(shape),
                                 flat._device) for shape, start in zip(shapes, offsets))

    @staticmethod
    def backward(ctx, *grads):
        import ember

        pieces = [g.reshape(-1) for g in grads]
        used = sum(p.numel() for p in pieces)
        pad = ember.zeros(ctx.numel - used, dtype=grads[0].dtype, device=grads[0].device)
        return ember.cat([*pieces, pad]), None, None


class FlatParamHandle:
    """One unit's flat parameter: shard on construction, ``unshard``/``free`` around use."""

    def __init__(self, params, group, sharded):
        import ember
        from ember import distributed as dist
        from ember.nn.parameter import Parameter

        self.group = group
        self.world = dist.get_world_size(group)
        self.rank = dist.get_rank(group)
        self.sharded = sharded
        self.shapes = [tuple(p.shape) for p in params]
        sizes = [p.numel() for p in params]
        self.offsets = [int(o) for o in np.cumsum([0, *sizes[:-1]])]
        self.numel = sum(sizes)
        self.shard_numel = -(-self.numel // self.world) if sharded else self.numel
        self.padded_numel = self.shard_numel * self.world if sharded else self.numel
        flat = ember.cat([p.detach().reshape(-1) for p in params])
        if sharded:  # NOTE [ One flat parameter per unit ]
            pad = ember.zeros(self.padded_numel - self.numel, dtype=flat.dtype, device=flat.device)
            flat = ember.cat([flat, pad])[self.rank * self.shard_numel:(self.rank + 1) * self.shard_numel]
        self.flat_param = Parameter(flat.clone(), requires_grad=params[0].requires_grad)
        self.leaf = None if sharded else self.flat_param  # the full flat tensor the views come from
        self.views = []  # (view, offset) handed out since the last backward: the graph may hold them
        self.unsharded = not sharded
        if not sharded:
            self.flat_param.register_post_accumulate_grad_hook(self._post_backward)

    # --- gather and free ----------------------------------------------------------------
    def unshard(self):
        """Make the full flat parameter available: all_gather the shards if needed."""
        import ember
        from ember import distributed as dist

        if self.unsharded:
            return
        flat = self.flat_param
        full = ember.empty(self.padded_numel, dtype=flat.dtype, device=flat.device)
        dist.all_gather_into_tensor(full, flat.detach(), group=self.group)
        if self.leaf is None:
            self.leaf = full.requires_grad_(flat.requires_grad)
            if self.leaf.requires_grad:
                self.leaf.register_post_accumulate_grad_hook(self._post_backward)
        else:  # refill the tensors the graph holds (the NOTE above)
            self.leaf._data = full._data
            for view, start in self.views:
                piece = full._data[start:start + view._data.size]
                view._data = piece.reshape(view._data.shape)
        self.unsharded = True
        _count(self.padded_numel * flat.element_size())

    def free(self):
        """Give the full buffer back; the views keep their shapes (NOTE above)."""
        if not self.sharded or not self.unsharded:
            return
        self.leaf._data = _freed(self.leaf._data, self.leaf._data.shape)
        for view, _ in self.views:
            view._data = _freed(view._data, view._data.shape)
        self.unsharded = False
        _count(-self.padded_numel * self.flat_param.element_size())

    def new_views(self):
        """The module's parameters for one forward: views of the full flat parameter."""
        views = _FlatParamViews.apply(self.leaf, self.shapes, self.offsets)
        views = list(views) if isinstance(views, tuple) else [views]
        self.views.extend(zip(views, self.offsets))
        return views

    def stand_in(self, i):
        """Parameter ``i`` while no full buffer exists: freed storage of its shape."""
        from ember.autograd import graph

        return graph._wrap(_freed(self.flat_param._data, self.shapes[i]), self.flat_param._device)

    def forget_views(self):
        """After backward (or a forward without grad) no graph holds the views any more."""
        self.views = []
        if self.sharded and self.leaf is not None and not self.unsharded:
            self.leaf = None

    # --- gradients ----------------------------------------------------------------------
    def _post_backward(self, leaf):
        """The full gradient is here: average it over the ranks, keep this rank's part.

        Sharded: reduce_scatter (the sum of grad / world) into the shard's ``.grad``,
        added to a gradient already there (accumulation, as torch). NO_SHARD: the flat
        parameter is the leaf; all_reduce its ``.grad`` (DDP's average).
        """
        from ember import distributed as dist
        from ember.autograd import no_grad

        with no_grad():
            if not self.sharded:
                leaf.grad.div_(self.world)
                dist.all_reduce(leaf.grad, group=self.group)
                self.views = []
                return
            full_grad = leaf.grad.div_(self.world)
            leaf.grad = None
            shard = full_grad.new_empty(self.shard_numel)
            dist.reduce_scatter_tensor(shard, full_grad, group=self.group)
            if self.flat_param.grad is None:
                self.flat_param.grad = shard
            else:
                self.flat_param.grad.add_(shard)
        self.free()
        self.forget_views()

    # --- the full parameters outside forward (state dicts, summon_full_params) ---------
    def write_back(self):
        """Copy this rank's piece of the (possibly edited) full buffer into its shard."""
        if self.sharded:
            piece = self.leaf._data[self.rank * self.shard_numel:(self.rank + 1) * self.shard_numel]
            self.flat_param._data[...] = piece
            self.flat_param._version_counter[0] += 1


def _count(nbytes):
    UNSHARDED["now"] += nbytes
    UNSHARDED["peak"] = max(UNSHARDED["peak"], UNSHARDED["now"])
