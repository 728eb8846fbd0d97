"""The activation modules, one file per family.

PyTorch counterpart: the classes of torch/nn/modules/activation.py (v2.13).
"""

from ember_activation.modules.exponential import CELU, ELU, SELU
from ember_activation.modules.gelu import GELU
from ember_activation.modules.glu import GLU
from ember_activation.modules.rectifiers import (
    Hardshrink,
    Hardtanh,
    LeakyReLU,
    PReLU,
    ReLU,
    ReLU6,
    RReLU,
    Softshrink,
    Threshold,
)
from ember_activation.modules.sigmoid_family import (
    Hardsigmoid,
    Hardswish,
    LogSigmoid,
    Mish,
    Sigmoid,
    SiLU,
    Softplus,
    Softsign,
    Tanh,
    Tanhshrink,
)
from ember_activation.modules.softmax import LogSoftmax, Softmax, Softmax2d, Softmin

__all__ = ["CELU", "ELU", "GELU", "GLU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh", "LeakyReLU",
           "LogSigmoid", "LogSoftmax", "Mish", "PReLU", "ReLU", "ReLU6", "RReLU", "SELU", "SiLU", "Sigmoid", "Softmax",
           "Softmax2d", "Softmin", "Softplus", "Softshrink", "Softsign", "Tanh", "Tanhshrink", "Threshold"]


def module_classes():
    """Every module class, for the ``ember_register_modules`` hook."""
    return [globals()[name] for name in __all__]
