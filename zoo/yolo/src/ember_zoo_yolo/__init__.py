"""ember-zoo-yolo: a small anchor-free detector of the YOLO family, and its box tools.

PyTorch counterpart: torchvision/models/detection/__init__.py and torchvision/ops
(v0.28) in role; the detector itself follows no PyTorch file (torchvision has no YOLO).
"""

__version__ = "0.1.0"
