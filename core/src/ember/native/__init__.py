"""ember's built-in operators, one family per module.

PyTorch counterpart: aten/src/ATen/native/ (v2.13).
"""

import importlib

MODULES = ("factory", "copy", "binary", "binary_functions", "unary", "comparison", "reduction", "extremes", "softmax",
           "views", "splitting", "shape", "indexing", "linalg", "sorting", "fold", "resampling", "padding",
           "convolution", "pooling", "upsampling", "linear", "embedding", "dropout", "attention", "pointwise",
           "fused_lstm", "rnn")


def all_modules():
    """Import every op module (they define the ``aten::`` ops as they load)."""
    return [importlib.import_module(f"ember.native.{name}") for name in MODULES]
