"""``ember.data.transforms``: Pillow-based image transforms.

PyTorch counterpart: torchvision/transforms/__init__.py (v0.28).
"""

from ember_data.transforms import functional
from ember_data.transforms.transforms import (
    CenterCrop,
    ColorJitter,
    Compose,
    InterpolationMode,
    Lambda,
    Normalize,
    PILToTensor,
    RandomCrop,
    RandomHorizontalFlip,
    RandomResizedCrop,
    Resize,
    ToTensor,
)

__all__ = ["Compose", "ToTensor", "PILToTensor", "Normalize", "Resize", "CenterCrop", "RandomCrop",
           "RandomResizedCrop", "RandomHorizontalFlip", "ColorJitter", "Lambda", "InterpolationMode",
           "functional"]
