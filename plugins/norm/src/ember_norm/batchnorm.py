"""``BatchNorm1d``, ``BatchNorm2d``, ``BatchNorm3d`` and their shared base ``_NormBase``.

PyTorch counterpart: torch/nn/modules/batchnorm.py (v2.13). ember leaves out the lazy
variants; SyncBatchNorm, which torch defines in the same file, is in syncbatchnorm.py.

# NOTE [ Running statistics and momentum ]
# In training, BatchNorm normalizes with the batch mean and *biased* variance and moves
# ``running_mean`` toward the batch mean and ``running_var`` toward the *unbiased*
# variance: ``running = (1 - factor) * running + factor * batch``. The factor is
# ``momentum``, or, when momentum is None, ``1 / num_batches_tracked``, which makes the
# running statistics the plain (cumulative) average of every batch seen. In eval the
# running statistics are used; with ``track_running_stats=False`` there are none, and
# batch statistics are used in eval too.
"""

import ember
from ember.nn import Module
from ember_norm._affine import register_affine, reset_affine
from ember_norm.functional import batch_norm


class _NormBase(Module):
    """Parameters (weight, bias) and buffers (running_mean, running_var,
    num_batches_tracked) shared by batch and instance norm."""

    _version = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, *, bias=True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        register_affine(self, affine, num_features, bias, device, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", ember.zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", ember.ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", ember.tensor(0, dtype=ember.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        reset_affine(self, self.affine)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        # Checkpoints from before version 2 have no num_batches_tracked: start it at 0.
        version = local_metadata.get("version", None)
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats and key not in state_dict:
            state_dict[key] = ember.tensor(0, dtype=ember.int64)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


class _BatchNorm(_NormBase):
    """The forward of every BatchNorm: NOTE [ Running statistics and momentum ]."""

    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if (self.training and self.track_running_stats
                and self.num_batches_tracked is not None):
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked.item())
        # Batch statistics in training, and in eval when there are no running ones.
        use_batch_stats = self.training or (self.running_mean is None
                                            and self.running_var is None)
        tracks = not self.training or self.track_running_stats
        return batch_norm(input,
                          self.running_mean if tracks else None,
                          self.running_var if tracks else None,
                          self.weight, self.bias, use_batch_stats, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch normalization over a (N, C) or (N, C, L) input, per channel C.

    >>> import ember
    >>> bn = ember.nn.BatchNorm1d(3)
    >>> bn(ember.randn(4, 3)).shape
    ember.Size([4, 3])
    """

    def _check_input_dim(self, input):
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalization over a (N, C, H, W) input, per channel C.

    >>> import ember
    >>> ember.nn.BatchNorm2d(64)
    BatchNorm2d(64, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """

    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalization over a (N, C, D, H, W) input, per channel C."""

    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]
