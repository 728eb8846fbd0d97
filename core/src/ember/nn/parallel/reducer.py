"""The reducer of ``DistributedDataParallel``: gradient buckets, all-reduced during backward.

PyTorch counterpart: torch/csrc/distributed/c10d/reducer.cpp (``Reducer``:
``mark_variable_ready``, ``mark_bucket_ready``, ``finalize_backward``,
``prepare_for_backward``) and ``compute_bucket_assignment_by_size`` (v2.13).

# NOTE [ Buckets and the overlap of communication with backward ]
# Backward produces gradients roughly in the reverse order of the parameters'
# registration (the last layer first). The parameters are therefore grouped into
# buckets of about ``bucket_cap_mb``, one dtype per bucket, and the buckets are taken
# in reverse order; the first layers get a small bucket (1 MiB) of their own, so little
# communication is left once backward is over. Each parameter gets a
# post-accumulate-grad hook: when its ``.grad`` is final, the hook copies it into its
# bucket's flat buffer, and when a bucket's last gradient has arrived the whole bucket
# is all-reduced *asynchronously* (the backend's worker thread sends it while backward
# goes on computing earlier layers). Buckets are launched in index order on every rank,
# since the ranks must issue collectives in the same order. When the last bucket has
# been launched, the reducer waits for all of them and copies the averages back into
# the ``.grad`` of each parameter.
#
# NOTE [ Why gradients are averaged ]
# Each rank's loss is the mean over its own B samples. The gradient of the mean loss
# over all world_size * B samples is the mean of the ranks' gradients, so dividing
# the sum by world_size makes a DDP step equal to a big-batch step (torch divides
# each bucket before the all-reduce; ember does the same, in the same order).
#
# NOTE [ Unused parameters ]
# A parameter that takes no part in this iteration's loss never gets its hook called,
# and its bucket would never be launched. With ``find_unused_parameters=True``,
# ``prepare_for_backward`` walks the autograd graph from the outputs and marks the
# parameters it does not reach as ready at once (their slot in the bucket holds their
# current .grad, or zeros);
# after the all-reduce, a parameter unused on every rank keeps ``grad`` as it was.
# Without it, an unfinished reduction is an error at the next forward, as in torch.

ember leaves out bucket rebuilding: torch's first iteration puts every parameter in one
bucket (unless ``find_unused_parameters``) and then rebuilds buckets in the order the
gradients arrived; ember buckets by registration order from the start. The averaged
gradients are the same either way. Also left out: ``gradient_as_bucket_view``, static graphs and
communication hooks.
"""

import numpy as np

DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024  # torch.distributed._DEFAULT_FIRST_BUCKET_BYTES
MB = 1024 * 1024


def compute_bucket_assignment_by_size(params, bucket_bytes_caps):
    """Lists of parameter indices, one dtype per bucket, like torch's function of this
    name.

    Parameters are taken in registration order; each dtype fills its own bucket until
    it holds at least the current cap (``bucket_bytes_caps[0]`` for that dtype's first
    bucket, then the next caps, the last one repeating). Buckets are returned sorted by
    their first index; the reducer reverses that list, so the small first bucket, which
    holds the first layers, is the last to be all-reduced.
    """
    # open_buckets: dtype -> [indices, bytes]; caps_used: dtype -> buckets closed
    buckets, open_buckets, caps_used = [], {}, {}
    for index, param in enumerate(params):
        key = param.dtype
        bucket = open_buckets.setdefault(key, [[], 0])
        bucket[0].append(index)
        bucket[1] += param.numel() * param.element_size()
        cap = bucket_bytes_caps[min(caps_used.get(key, 0), len(bucket_bytes_caps) - 1)]
        if bucket[1] >= cap:
            buckets.append(bucket[0])
            del open_buckets[key]
            caps_used[key] = caps_used.get(key, 0) + 1
    buckets.extend(indices for indices, _ in open_buckets.values())
    return sorted(buckets, key=lambda indices: indices[0])


class Bucket:
    """A flat buffer for some parameters' gradients, all-reduced as one tensor."""

    def __init__(self, params, indices):
        import ember

        self.indices = indices
        self.params = [params[i] for i in indices]
        sizes = [p.numel() for p in self.params]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        self.buffer = ember.zeros(int(self.offsets[-1]), dtype=self.params[0].dtype,
                                  device=self.params[0].device)
        self.pending = len(self.params)
        self.work = None

    def view(self, position):
        return self.buffer._data[self.offsets[position]:self.offsets[position + 1]]


class Reducer:
    """Owns the buckets and the hooks (see the NOTEs above)."""

    def __init__(self, params, process_group, bucket_cap_mb=25, find_unused_parameters=False):
        self.params = params
        self.process_group = process_group
        self.find_unused_parameters = find_unused_parameters
        caps = [min(DEFAULT_FIRST_BUCKET_BYTES, int(bucket_cap_mb * MB)), int(bucket_cap_mb * MB)]
        assignment = compute_bucket_assignment_by_size(params, caps)
        self.buckets = [Bucket(params, indices) for indices in reversed(assignment)]
        self.where = {}  # param index -> (bucket, position in the bucket)
        for bucket in self.buckets:
            for position, index in enumerate(bucket.indices):
                self.where[index] = (bucket, position)
        self.next_bucket = 0  # buckets are launched in this order
        self.expect_hooks = False  # set by prepare_for_backward
        self.used = np.zeros(len(params), dtype=np.int32)
        self.handles = [p.register_post_accumulate_grad_hook(self._hook(i)) for i, p in enumerate(params)]

    def _hook(self, index):
        def hook(param):
            if self.expect_hooks:
                self.used[index] = 1
                self.mark_variable_ready(index)
        return hook

    def prepare_for_backward(self, outputs):
        """Reset the buckets; with find_unused_parameters, mark the unreachable as ready."""
        if self.expect_hooks and any(b.pending < len(b.params) or b.work is not None for b in self.buckets):
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a new one. This "
                "error indicates that your module has parameters that were not used in producing loss. You can "
                "enable unused parameter detection by passing the keyword argument "
                "`find_unused_parameters=True` to `ember.nn.parallel.DistributedDataParallel`.")
        for bucket in self.buckets:
            bucket.pending = len(bucket.params)
            bucket.work = None
        self.next_bucket = 0
        self.used[:] = 0
        self.expect_hooks = True
        if self.find_unused_parameters:
            reached = _reachable_leaves(outputs)
            for index, param in enumerate(self.params):
                if id(param) not in reached:
                    self.mark_variable_ready(index)

    def mark_variable_ready(self, index):
        bucket, position = self.where[index]
        # An unused parameter contributes its current .grad if it has one (torch's
        # reducer does the same), else zeros.
        grad = self.params[index].grad
        if grad is None:
            bucket.view(position)[...] = 0
        else:
            bucket.view(position)[...] = grad._data.reshape(-1)
        bucket.pending -= 1
        if bucket.pending == 0:
            self._launch_ready_buckets()

    def _launch_ready_buckets(self):
        from ember import distributed as dist

        size = dist.get_world_size(self.process_group)
        while (self.next_bucket < len(self.buckets)
               and self.buckets[self.next_bucket].pending == 0):
            bucket = self.buckets[self.next_bucket]
            bucket.buffer._data /= size  # NOTE [ Why gradients are averaged ]
            bucket.work = dist.all_reduce(bucket.buffer, group=self.process_group,
                                          async_op=True)
            self.next_bucket += 1
        if self.next_bucket == len(self.buckets):
            self.finalize_backward()

    def finalize_backward(self):
        """Wait for every bucket and write the averaged gradients into ``.grad``."""
        import ember
        from ember import distributed as dist

        globally_used = None
        if self.find_unused_parameters:
            used = ember.from_numpy(self.used.copy())
            dist.all_reduce(used, group=self.process_group)
            globally_used = used.numpy()
        for bucket in self.buckets:
            bucket.work.wait()
            for position, (index, param) in enumerate(zip(bucket.indices,
                                                          bucket.params)):
                if globally_used is not None and not globally_used[index]:
                    continue
                averaged = bucket.view(position).reshape(param.shape)
                if param.grad is None:
                    param.grad = ember.from_numpy(averaged.copy()).to(param.device)
                else:
                    param.grad._data[...] = averaged
            bucket.work = None
        self.expect_hooks = False

    def remove_hooks(self):
        for handle in self.handles:
            handle.remove()


def _reachable_leaves(outputs):
    """ids of the leaf tensors the autograd graph of ``outputs`` reaches (iteratively)."""
    from ember.autograd.graph import AccumulateGrad

    stack = [t.grad_fn for t in outputs if getattr(t, "grad_fn", None) is not None]
    seen, leaves = set(), set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            leaves.add(id(node.variable))
            continue
        stack.extend(next_node for next_node, _ in node.next_functions)
    return leaves
