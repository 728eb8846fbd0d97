"""``InstanceNorm1d``, ``InstanceNorm2d``, ``InstanceNorm3d``.

PyTorch counterpart: torch/nn/modules/instancenorm.py (v2.13). ember leaves out the
lazy variants. Instance norm shares ``_NormBase`` (parameters and buffers) with batch
norm but defaults to ``affine=False, track_running_stats=False``, normalizes each
sample on its own, and also accepts an unbatched input (no N dimension).
"""

import warnings

from ember_norm.batchnorm import _NormBase
from ember_norm.functional import instance_norm


class _InstanceNorm(_NormBase):
    """The forward of every InstanceNorm; subclasses say how many dims an unbatched input has."""

    no_batch_dim = None  # dims of an unbatched input: 2 for InstanceNorm1d (C, L), ...

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False,
                 device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def _check_input_dim(self, input):
        allowed = (self.no_batch_dim, self.no_batch_dim + 1)
        if input.dim() not in allowed:
            raise ValueError(f"expected {allowed[0]}D or {allowed[1]}D input (got {input.dim()}D input)")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        # Checkpoints from before running stats became opt-in carry them: drop them, and say so.
        if local_metadata.get("version", None) is None and not self.track_running_stats:
            found = [prefix + name for name in ("running_mean", "running_var") if prefix + name in state_dict]
            if found:
                names = " and ".join(f'"{k}"' for k in found)
                klass = type(self).__name__
                error_msgs.append(f"Unexpected running stats buffer(s) {names} for {klass} with "
                                  f"track_running_stats=False. Remove these keys from state_dict, or set "
                                  f"track_running_stats=True in {klass} if the running stats are needed.")
                for key in found:
                    state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.dim() - self.no_batch_dim
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence "
                          "this warning by not passing in num_features, which is not used because affine=False",
                          stacklevel=2)
        if input.dim() == self.no_batch_dim:
            return self._normalize(input.unsqueeze(0)).squeeze(0)
        return self._normalize(input)

    def _normalize(self, input):
        use_input_stats = self.training or not self.track_running_stats
        momentum = self.momentum if self.momentum is not None else 0.0
        return instance_norm(input, self.running_mean, self.running_var, self.weight,
                             self.bias, use_input_stats, momentum, self.eps)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization of a (N, C, L) or unbatched (C, L) input.

    >>> import ember
    >>> ember.nn.InstanceNorm1d(3)
    InstanceNorm1d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)
    """

    no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization of a (N, C, H, W) or unbatched (C, H, W) input."""

    no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization of a (N, C, D, H, W) or unbatched (C, D, H, W) input."""

    no_batch_dim = 4


__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]
