"""Which first-party distribution provides each optimizer, scheduler and SWA name.

PyTorch counterpart: none (torch.optim ships inside torch); this table is how
``ember.optim.AdamW`` can say "pip install ember-optim" when the plugin is missing.
The sibling of ember/nn/_provided_by.py, keyed by kind instead of catalogue.
"""

OPTIM = "ember-optim"

_OPTIMIZERS = ("Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
               "LBFGS")
_LR_SCHEDULERS = ("LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
                  "ExponentialLR", "PolynomialLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts", "CyclicLR",
                  "OneCycleLR", "ReduceLROnPlateau", "SequentialLR", "ChainedScheduler")
_SWA_UTILS = ("AveragedModel", "SWALR", "update_bn", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn",
              "get_ema_avg_fn", "get_swa_avg_fn")

# kind -> {registered name: distribution that provides it}
PROVIDED_BY = {
    "optimizer": dict.fromkeys(_OPTIMIZERS, OPTIM),
    "lr_scheduler": dict.fromkeys(_LR_SCHEDULERS, OPTIM),
    "swa_utils": dict.fromkeys(_SWA_UTILS, OPTIM),
}
