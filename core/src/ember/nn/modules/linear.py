"""``Identity``, ``Linear`` and ``Bilinear``: the affine layers.

PyTorch counterpart: torch/nn/modules/linear.py (v2.13). ember leaves out
``LazyLinear`` (no uninitialised parameters).
"""

import math

from ember.nn import functional as F
from ember.nn import init
from ember.nn.modules.lazy import LazyModuleMixin
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter, UninitializedParameter


def _empty(*shape, device=None, dtype=None):
    from ember.native.factory import empty

    return empty(*shape, device=device, dtype=dtype)


class Identity(Module):
    """Returns its input unchanged; any constructor arguments are ignored.

    >>> import ember
    >>> ember.nn.Identity(54, unused="argument")(ember.ones(2)).shape
    ember.Size([2])
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x W^T + b`` over the last dim of the input.

    Args:
        in_features: size of each input sample's last dim.
        out_features: size of each output sample's last dim.
        bias: learn an additive bias (``bias=False`` registers ``bias`` as None).

    Shapes: input ``(*, in_features)``, output ``(*, out_features)``.

    Attributes:
        weight: ``(out_features, in_features)``, initialised U(-k, k) with
            ``k = 1 / sqrt(in_features)`` (kaiming_uniform_ with a = sqrt(5), PyTorch's).
        bias: ``(out_features,)``, U(-k, k).

    >>> import ember
    >>> m = ember.nn.Linear(20, 30)
    >>> m(ember.randn(128, 20)).shape
    ember.Size([128, 30])
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_empty(out_features, in_features, device=device,
                                       dtype=dtype))
        if bias:
            self.bias = Parameter(_empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        # kaiming_uniform_ with a = sqrt(5) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class NonDynamicallyQuantizableLinear(Linear):
    """``Linear`` under the name PyTorch gives ``MultiheadAttention.out_proj`` (so the
    repr reads the same); ember has no quantization, so nothing else differs."""


class Bilinear(Module):
    """``y = x1^T A x2 + b``: one bilinear form per output feature.

    Args:
        in1_features, in2_features: sizes of the two inputs' last dims.
        out_features: size of the output's last dim.
        bias: learn an additive bias.

    Shapes: inputs ``(*, in1_features)`` and ``(*, in2_features)``, output
    ``(*, out_features)``.

    Attributes:
        weight: ``(out_features, in1_features, in2_features)``, U(-k, k) with
            ``k = 1 / sqrt(in1_features)``.
        bias: ``(out_features,)``, U(-k, k).

    >>> import ember
    >>> m = ember.nn.Bilinear(20, 30, 40)
    >>> m(ember.randn(128, 20), ember.randn(128, 30)).shape
    ember.Size([128, 40])
    """

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(_empty(out_features, in1_features, in2_features, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(_empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class LazyLinear(LazyModuleMixin, Linear):
    """:class:`Linear` whose ``in_features`` is read from the first input's last dim
    (the protocol of ember/nn/modules/lazy.py); then it becomes a Linear.

    >>> import ember
    >>> layer = ember.nn.LazyLinear(3)
    >>> layer(ember.ones(2, 5)).shape, type(layer).__name__, tuple(layer.weight.shape)
    (ember.Size([2, 3]), 'Linear', (3, 5))
    """

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False, device, dtype)
        self.out_features = out_features
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.in_features = input.shape[-1]
            self.weight.materialize((self.out_features, self.in_features))
            if self.bias is not None:
                self.bias.materialize((self.out_features,))
            self.reset_parameters()
