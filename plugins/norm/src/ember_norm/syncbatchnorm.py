"""``SyncBatchNorm``: batch normalization whose statistics span every rank of a process group.

PyTorch counterpart: torch/nn/modules/batchnorm.py (``SyncBatchNorm``,
``convert_sync_batchnorm``) and torch/nn/modules/_functions.py (its autograd
function) (v2.13).

# NOTE [ What SyncBatchNorm exchanges ]
# With DistributedDataParallel each rank sees B samples, so plain BatchNorm normalizes
# with the statistics of B samples, not of the world_size * B samples of the global
# batch. SyncBatchNorm all-reduces, per channel, the sum and the count (giving the
# global mean), then the sum of squared deviations from it (the global biased
# variance: two passes, which keeps float64 exact to rounding). Backward all-reduces
# two more per-channel sums, sum(dy) and sum(dy * (x - mean)), from which each rank
# computes its part of the input gradient; weight and bias get their local gradients,
# which DDP averages. The result equals BatchNorm over the global batch.
# torch computes the statistics with one all_gather of (mean, invstd, count) and a
# Welford merge; ember's sums give the same numbers to rounding, and run on CPU
# (torch's SyncBatchNorm needs a GPU).
"""

import ember
from ember.autograd import Function
from ember_norm.batchnorm import _BatchNorm


def _reduced_dims(x):
    return [0, *range(2, x.dim())]


def _channel_shape(x):
    return [1, x.shape[1]] + [1] * (x.dim() - 2)


class SyncBatchNormFunction(Function):
    """Forward and backward of NOTE [ What SyncBatchNorm exchanges ]."""

    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, eps, momentum, group):
        from ember import distributed as dist

        dims, shape = _reduced_dims(x), _channel_shape(x)
        local_count = x.numel() // x.shape[1]
        sums = ember.cat([x.sum(dims), ember.full((1,), local_count, dtype=x.dtype)])
        dist.all_reduce(sums, group=group)
        count = sums[-1].item()
        if count <= 1:
            raise ValueError("Expected more than 1 value per channel when training, got "
                             f"input size {list(x.shape)} (over all ranks: {int(count)} "
                             "values per channel)")
        mean = sums[:-1] / count
        xmu = x - mean.reshape(shape)
        squares = (xmu * xmu).sum(dims)
        dist.all_reduce(squares, group=group)
        invstd = (squares / count + eps).rsqrt()
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean * momentum)
        if running_var is not None:
            running_var.mul_(1 - momentum).add_(squares / (count - 1) * momentum)
        y = xmu * invstd.reshape(shape)
        ctx.save_for_backward(xmu, invstd, weight)
        ctx.count, ctx.group = count, group
        if weight is not None:
            y = y * weight.reshape(shape)
        if bias is not None:
            y = y + bias.reshape(shape)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        from ember import distributed as dist

        xmu, invstd, weight = ctx.saved_tensors
        dims, shape = _reduced_dims(xmu), _channel_shape(xmu)
        sum_dy = grad_output.sum(dims)
        sum_dy_xmu = (grad_output * xmu).sum(dims)
        grad_weight = sum_dy_xmu * invstd if weight is not None else None
        grad_bias = sum_dy.clone()
        both = ember.cat([sum_dy, sum_dy_xmu])
        dist.all_reduce(both, group=ctx.group)
        channels = xmu.shape[1]
        mean_dy = (both[:channels] / ctx.count).reshape(shape)
        mean_dy_xmu = (both[channels:] / ctx.count).reshape(shape)
        scale = invstd.reshape(shape)
        grad_input = (grad_output - mean_dy - xmu * scale * scale * mean_dy_xmu) * scale
        if weight is not None:
            grad_input = grad_input * weight.reshape(shape)
        return grad_input, grad_weight, grad_bias, None, None, None, None, None


class SyncBatchNorm(_BatchNorm):
    """BatchNorm over the global batch of a process group (NOTE [ What SyncBatchNorm exchanges ]).

    Outside training, or without a process group of more than one rank, it is plain
    BatchNorm, like torch's.
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input):
        from ember import distributed as dist

        self._check_input_dim(input)
        if not (self.training and dist.is_initialized() and dist.get_world_size(self.process_group) > 1):
            return super().forward(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked.item())
        running = (self.running_mean, self.running_var) if self.track_running_stats else (None, None)
        return SyncBatchNormFunction.apply(input, self.weight, self.bias, *running, self.eps, factor,
                                           self.process_group)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """A copy-free conversion: every ``BatchNorm*d`` in ``module`` becomes a ``SyncBatchNorm``
        sharing its parameters and buffers; returns the (possibly new) root module."""
        converted = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            converted = cls(module.num_features, module.eps, module.momentum, module.affine,
                            module.track_running_stats, process_group)
            if module.affine:
                with ember.no_grad():
                    converted.weight = module.weight
                    converted.bias = module.bias
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                setattr(converted, name, getattr(module, name))
            converted.training = module.training
        for name, child in module.named_children():
            converted.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return converted


__all__ = ["SyncBatchNorm"]
