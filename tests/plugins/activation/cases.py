"""The activation cases the tests share: (functional name, keyword arguments), and
inputs that sit on every kink of the piecewise activations.

Tests for plugins/activation/src/ember_activation (PyTorch counterpart:
torch/nn/functional.py's activations, v2.13).
"""

import numpy as np

# Elementwise functional forms and the arguments each is tried with.
ELEMENTWISE = [
    ("relu", {}),
    ("relu6", {}),
    ("leaky_relu", {}),
    ("leaky_relu", {"negative_slope": 0.2}),
    ("elu", {}),
    ("elu", {"alpha": 0.5}),
    ("selu", {}),
    ("celu", {}),
    ("celu", {"alpha": 2.0}),
    ("gelu", {}),
    ("gelu", {"approximate": "tanh"}),
    ("silu", {}),
    ("mish", {}),
    ("hardswish", {}),
    ("hardsigmoid", {}),
    ("hardtanh", {}),
    ("hardtanh", {"min_val": -2.0, "max_val": 0.5}),
    ("sigmoid", {}),
    ("tanh", {}),
    ("softplus", {}),
    ("softplus", {"beta": 2.0, "threshold": 5.0}),
    ("softsign", {}),
    ("tanhshrink", {}),
    ("threshold", {"threshold": 0.3, "value": -2.0}),
    ("hardshrink", {}),
    ("hardshrink", {"lambd": 1.0}),
    ("softshrink", {}),
    ("softshrink", {"lambd": 1.2}),
    ("logsigmoid", {}),
]

# Functional forms that act along a dim.
ALONG_DIM = [
    ("glu", {}),
    ("glu", {"dim": 1}),
    ("softmax", {"dim": 1}),
    ("softmax", {"dim": -1}),
    ("log_softmax", {"dim": 0}),
    ("log_softmax", {"dim": 2}),
    ("softmin", {"dim": 1}),
]

# Smooth activations: second derivatives are compared with torch's.
SMOOTH = [
    ("gelu", {}),
    ("gelu", {"approximate": "tanh"}),
    ("silu", {}),
    ("softplus", {}),
    ("softplus", {"beta": 0.5, "threshold": 3.0}),
    ("elu", {"alpha": 0.7}),
    ("selu", {}),
    ("celu", {"alpha": 1.5}),
    ("mish", {}),
    ("logsigmoid", {}),
    ("hardswish", {}),
    ("softsign", {}),
    ("tanhshrink", {}),
]

# Every kink of the piecewise activations above (0, +-0.3, +-0.5, +-1, +-1.2, 0.5,
# +-2, +-3, 6), where the gradient conventions differ between formulas.
KINKS = np.array([-6.0, -3.0, -2.0, -1.2, -1.0, -0.5, -0.3, 0.0, 0.3, 0.5, 1.0, 1.2, 2.0, 3.0, 6.0, 7.0])

# Large magnitudes, where naive softplus / sigmoid / exp formulas overflow.
EXTREMES = np.array([-1000.0, -100.0, -40.0, -20.0, -1e-3, 0.0, 1e-3, 20.0, 40.0, 100.0, 1000.0])


def case_id(case):
    name, kwargs = case
    return name + "".join(f"-{k}={v}" for k, v in kwargs.items())
