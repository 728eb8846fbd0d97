"""Learning-rate schedulers: the base class and one file per family.

PyTorch counterpart: torch/optim/lr_scheduler.py (v2.13), split by family:
scheduler.py (the base class ``LRScheduler``), lambda_lr.py, step_lr.py (fixed
factors), cosine.py, cyclic.py (CyclicLR, OneCycleLR), plateau.py and composite.py
(SequentialLR, ChainedScheduler).
"""

from ember_optim.lr_scheduler.composite import ChainedScheduler, SequentialLR
from ember_optim.lr_scheduler.cosine import CosineAnnealingLR, CosineAnnealingWarmRestarts
from ember_optim.lr_scheduler.cyclic import CyclicLR, OneCycleLR
from ember_optim.lr_scheduler.lambda_lr import LambdaLR, MultiplicativeLR
from ember_optim.lr_scheduler.plateau import ReduceLROnPlateau
from ember_optim.lr_scheduler.scheduler import LRScheduler
from ember_optim.lr_scheduler.step_lr import ConstantLR, ExponentialLR, LinearLR, MultiStepLR, PolynomialLR, StepLR

__all__ = ["LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
           "ExponentialLR", "PolynomialLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts", "CyclicLR",
           "OneCycleLR", "ReduceLROnPlateau", "SequentialLR", "ChainedScheduler"]
