"""Detection metrics.

PyTorch counterpart: none in torch; torchmetrics/detection/__init__.py (torchmetrics 1.9).
"""

from ember_metrics.detection.mean_ap import MeanAveragePrecision

__all__ = ["MeanAveragePrecision"]
