"""``RMSNorm``: root-mean-square normalization over the trailing dims.

PyTorch counterpart: torch/nn/modules/normalization.py, class ``RMSNorm`` (v2.13).
"""

import ember
from ember.nn import Module, Parameter
from ember_norm.functional import rms_norm
from ember_norm.layernorm import normalized_shape_tuple


class RMSNorm(Module):
    """``x / sqrt(mean(x ** 2) + eps) * weight`` over the last ``len(normalized_shape)`` dims.

    Args:
        normalized_shape: an int or a tuple of the trailing sizes.
        eps: added to the mean square; None uses the input dtype's machine epsilon.
        elementwise_affine: learn ``weight`` (ones) of that shape.

    >>> import ember
    >>> ember.nn.RMSNorm(4)
    RMSNorm((4,), eps=None, elementwise_affine=True)
    """

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = normalized_shape_tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ember.empty(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            with ember.no_grad():
                self.weight.fill_(1)

    def forward(self, x):
        return rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


__all__ = ["RMSNorm"]
