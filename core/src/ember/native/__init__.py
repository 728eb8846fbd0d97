"""ember's built-in operators: the op families in folders (``convolution/``, ``linalg/``,
``pooling/``, ``pointwise/``, ``reduction/``, ``shape/``, ``indexing/``, ``random/``), the
smaller families one module each at this level, and the machinery they share in
``support/``. A family's reference kernel is the file named for the family
(``convolution/convolution.py``); faster algorithms sit beside it.

PyTorch counterpart: aten/src/ATen/native/ (v2.13).
"""

import importlib

MODULES = ("factory", "copy", "pointwise.binary", "pointwise.binary_functions", "pointwise.unary",
           "pointwise.comparison", "reduction.reduction", "reduction.extremes", "softmax", "shape.views",
           "shape.splitting", "shape.shape", "indexing.indexing", "linalg.products", "sorting", "fold", "resampling",
           "padding", "convolution.convolution", "pooling.pooling", "pooling.pooling3d", "upsampling", "linear",
           "embedding", "dropout", "attention", "pointwise.ternary", "fused_lstm", "rnn", "unique", "distance",
           "summary_ops", "histogram", "bucketization", "shape.unfold", "reduction.cumulative",
           "indexing.index_fill_copy", "indexing.scatter_reduce", "grid_sampler")


def all_modules():
    """Import every op module (they define the ``aten::`` ops as they load)."""
    return [importlib.import_module(f"ember.native.{name}") for name in MODULES]
