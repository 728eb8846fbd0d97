"""The update loops of every optimizer as plain functions, in one namespace.

PyTorch counterpart: torch/optim/_functional.py (v2.13), which gathers the functional
forms the same way. Each function lives next to its class (``ember_optim/adam.py``
holds ``Adam`` and ``adam``); it takes lists of parameters, gradients and state
tensors and updates them in place, one parameter at a time.
"""

from ember_optim.adadelta import adadelta
from ember_optim.adagrad import adagrad
from ember_optim.adam import adam
from ember_optim.adamax import adamax
from ember_optim.adamw import adamw
from ember_optim.nadam import nadam
from ember_optim.radam import radam
from ember_optim.rmsprop import rmsprop
from ember_optim.sgd import sgd

__all__ = ["sgd", "adam", "adamw", "rmsprop", "adagrad", "adadelta", "adamax", "nadam", "radam"]
