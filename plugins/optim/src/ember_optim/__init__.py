"""ember-optim: ember's optimizers, learning-rate schedulers and weight averaging as a plugin.

PyTorch counterpart: torch/optim/__init__.py (v2.13).

ember imports this module when it first needs a catalogue and calls the hook below,
which registers every class and function under its name with a ``kind``:
``"optimizer"`` (``ember.optim.<Name>``), ``"lr_scheduler"``
(``ember.optim.lr_scheduler.<Name>``) or ``"swa_utils"`` (``ember.optim.swa_utils.<name>``),
and the ops of the fused updates (``optim::_fused_sgd_``...), by whose names another
plugin (ember-numba) registers compiled kernels for them.
Nothing heavy is imported at top level: the classes are imported inside the hook, and
the names below on first access.
"""

from ember.plugins import hookimpl

__version__ = "0.1.0"

# name -> module that defines it, for each kind the core namespaces resolve.
OPTIMIZERS = {"Optimizer": "optimizer", "SGD": "sgd", "Adam": "adam", "AdamW": "adamw", "RMSprop": "rmsprop",
              "Adagrad": "adagrad", "Adadelta": "adadelta", "Adamax": "adamax", "NAdam": "nadam",
              "RAdam": "radam", "LBFGS": "lbfgs", "SparseAdam": "sparse_adam"}
LR_SCHEDULERS = ("LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
                 "ExponentialLR", "PolynomialLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts", "CyclicLR",
                 "OneCycleLR", "ReduceLROnPlateau", "SequentialLR", "ChainedScheduler")
SWA_UTILS = ("AveragedModel", "SWALR", "update_bn", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn",
             "get_ema_avg_fn", "get_swa_avg_fn")

__all__ = list(OPTIMIZERS) + ["lr_scheduler", "swa_utils", "functional"]


@hookimpl
def ember_register_optimizers(register):
    from importlib import import_module

    from ember_optim import lr_scheduler, swa_utils

    for name, module in OPTIMIZERS.items():
        register(getattr(import_module(f"ember_optim.{module}"), name), kind="optimizer")
    for name in LR_SCHEDULERS:
        register(getattr(lr_scheduler, name), kind="lr_scheduler")
    for name in SWA_UTILS:
        register(getattr(swa_utils, name), name=name, kind="swa_utils")


@hookimpl
def ember_register_ops(register):
    from ember_optim import fused_adagrad, fused_adam, fused_rmsprop, fused_sgd

    for op in (fused_sgd.fused_sgd_op, fused_adam.fused_adam_op, fused_rmsprop.fused_rmsprop_op,
               fused_adagrad.fused_adagrad_op):
        register(op)


def __getattr__(name):
    from importlib import import_module

    if name in OPTIMIZERS:
        return getattr(import_module(f"ember_optim.{OPTIMIZERS[name]}"), name)
    if name in ("optimizer", "lr_scheduler", "swa_utils", "functional"):
        return import_module(f"ember_optim.{name}")
    raise AttributeError(f"module 'ember_optim' has no attribute '{name}'")
