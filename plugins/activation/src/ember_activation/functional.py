"""``ember_activation.functional``: every activation's functional form, in one namespace.

PyTorch counterpart: the activation functions of torch/nn/functional.py (v2.13).
Each function lives in the file of its family; this module gathers them, and the
plugin registers them so that ``ember.nn.functional.<name>`` finds them.
"""

from ember_activation.exponential import celu, celu_, elu, elu_, selu, selu_
from ember_activation.gelu import gelu
from ember_activation.glu import glu
from ember_activation.rectifiers import (
    hardshrink,
    hardtanh,
    hardtanh_,
    leaky_relu,
    leaky_relu_,
    prelu,
    relu,
    relu6,
    relu_,
    rrelu,
    rrelu_,
    softshrink,
    threshold,
    threshold_,
)
from ember_activation.sigmoid_family import (
    hardsigmoid,
    hardswish,
    logsigmoid,
    mish,
    sigmoid,
    silu,
    softplus,
    softsign,
    tanh,
    tanhshrink,
)
from ember_activation.softmax import gumbel_softmax, log_softmax, softmax, softmin

__all__ = ["celu", "celu_", "elu", "elu_", "gelu", "glu", "gumbel_softmax", "hardshrink", "hardsigmoid", "hardswish",
           "hardtanh", "hardtanh_", "leaky_relu", "leaky_relu_", "log_softmax", "logsigmoid", "mish", "prelu", "relu",
           "relu6", "relu_", "rrelu", "rrelu_", "selu", "selu_", "sigmoid", "silu", "softmax", "softmin", "softplus",
           "softshrink", "softsign", "tanh", "tanhshrink", "threshold", "threshold_"]


def functionals():
    """Every functional form, for the ``ember_register_functionals`` hook."""
    return [globals()[name] for name in __all__]


def ops():
    """Every fused op this plugin defines, for the ``ember_register_ops`` hook."""
    from ember_activation import exponential, rectifiers, sigmoid_family
    from ember_activation import gelu as gelu_family

    return [op for family in (rectifiers, exponential, gelu_family, sigmoid_family) for op in family.OPS]
