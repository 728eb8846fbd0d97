"""ember-metrics: metrics after torchmetrics' design (``Metric``, ``MetricCollection``).

PyTorch counterpart: torchmetrics/__init__.py (torchmetrics 1.9), a separate package
beside PyTorch as this is a separate distribution beside ember-core.
"""

__version__ = "0.1.0"
