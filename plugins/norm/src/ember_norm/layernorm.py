"""``LayerNorm``: normalization over the trailing dims of each sample.

PyTorch counterpart: torch/nn/modules/normalization.py, class ``LayerNorm`` (v2.13).
"""

from ember.nn import Module
from ember_norm._affine import register_affine, reset_affine
from ember_norm.functional import layer_norm


def normalized_shape_tuple(normalized_shape):
    """``4`` -> ``(4,)``; a list or Size -> a tuple of ints."""
    if isinstance(normalized_shape, int):
        return (normalized_shape,)
    return tuple(int(s) for s in normalized_shape)


class LayerNorm(Module):
    """``(x - mean) / sqrt(var + eps) * weight + bias`` over the last ``len(normalized_shape)`` dims.

    Args:
        normalized_shape: an int or a tuple: the trailing sizes to normalize over.
        eps: added to the (biased) variance.
        elementwise_affine: learn ``weight`` (ones) and ``bias`` (zeros) of that shape.
        bias: with ``elementwise_affine``, whether to learn the bias.

    >>> import ember
    >>> ember.nn.LayerNorm(4)
    LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = normalized_shape_tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        register_affine(self, elementwise_affine, self.normalized_shape, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        reset_affine(self, self.elementwise_affine)

    def forward(self, input):
        return layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


__all__ = ["LayerNorm"]
