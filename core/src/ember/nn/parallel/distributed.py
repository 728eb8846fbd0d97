"""``DistributedDataParallel``: one model replica per process, gradients averaged across them.

PyTorch counterpart: torch/nn/parallel/distributed.py (v2.13). The buckets and hooks
are in reducer.py (torch's reducer.cpp).

Construction broadcasts rank 0's parameters and buffers, so every replica starts
equal; each forward (with ``broadcast_buffers``) broadcasts rank 0's buffers again
(BatchNorm's running statistics), and each backward averages the gradients (NOTE
[ Buckets and the overlap of communication with backward ] in reducer.py), so after
``optimizer.step()`` the replicas are still equal. ``no_sync()`` skips the averaging
for gradient accumulation: gradients add up locally, and the first backward outside
it averages the total. The wrapped model is ``self.module``, so ``state_dict`` keys
start with ``module.`` like torch's. ember leaves out ``device_ids`` beyond one
device, communication hooks, ``static_graph``, ``join`` and mixed precision.
"""

import contextlib

from ember.nn.modules.module import Module
from ember.nn.parallel.reducer import Reducer


class DistributedDataParallel(Module):
    """Wrap ``module`` so that its gradients are averaged over ``process_group``."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, **unsupported):
        super().__init__()
        from ember import distributed as dist

        if unsupported:
            raise TypeError(f"DistributedDataParallel: ember does not support {sorted(unsupported)}")
        if gradient_as_bucket_view:
            raise NotImplementedError("DistributedDataParallel: ember leaves out gradient_as_bucket_view")
        if not dist.is_initialized():
            raise RuntimeError("Default process group has not been initialized, please make sure to call "
                               "init_process_group.")
        params = _unique(p for p in module.parameters() if p.requires_grad)
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        self.module = module
        self.process_group = process_group if process_group is not None else dist.group.WORLD
        self.device_ids = device_ids
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        self._sync_module_states()
        self.reducer = Reducer(params, self.process_group, 25 if bucket_cap_mb is None else bucket_cap_mb,
                               find_unused_parameters)

    # --- keeping the replicas equal --------------------------------------------------
    def _sync_module_states(self):
        """Broadcast rank 0's parameters and buffers (torch's ``_sync_module_states``)."""
        tensors = [p for p in self.module.parameters()] + [b for b in self.module.buffers()]
        _broadcast_coalesced(_unique(tensors), self.process_group)

    def _sync_buffers(self):
        buffers = [b for b in self.module.buffers()]
        if buffers:
            _broadcast_coalesced(buffers, self.process_group)

    # --- forward ---------------------------------------------------------------------
    def forward(self, *inputs, **kwargs):
        from ember.autograd import is_grad_enabled

        sync = is_grad_enabled() and self.require_backward_grad_sync
        if self.broadcast_buffers and self.require_forward_param_sync:
            self._sync_buffers()
        output = self.module(*inputs, **kwargs)
        if sync:
            self.reducer.prepare_for_backward(_tensors_in(output) if self.find_unused_parameters else [])
        self.require_forward_param_sync = sync
        return output

    @contextlib.contextmanager
    def no_sync(self):
        """Inside, backward accumulates gradients locally; the next synced backward averages the total."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous


def _unique(tensors):
    seen, out = set(), []
    for t in tensors:
        if id(t) not in seen:
            seen.add(id(t))
            out.append(t)
    return out


def _broadcast_coalesced(tensors, group):
    """Broadcast from the group's first rank, one flat message per dtype."""
    import ember
    from ember import distributed as dist

    src = dist.get_global_rank(group, 0)
    by_dtype = {}
    for t in tensors:
        by_dtype.setdefault(t.dtype, []).append(t)
    for same in by_dtype.values():
        flat = ember.cat([t.detach().reshape(-1) for t in same])
        dist.broadcast(flat, src=src, group=group)
        start = 0
        for t in same:
            t._data[...] = flat._data[start:start + t.numel()].reshape(t.shape)
            start += t.numel()


def _tensors_in(output):
    """Every tensor in a (nested) output, for the unused-parameter search."""
    from ember.tensor import Tensor

    if isinstance(output, Tensor):
        return [output]
    if isinstance(output, dict):
        output = list(output.values())
    if isinstance(output, (list, tuple)):
        return [t for item in output for t in _tensors_in(item)]
    return []
