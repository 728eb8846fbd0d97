"""``ember.optim.swa_utils``: weight averaging (AveragedModel, SWALR, update_bn, the EMA/SWA
averaging functions), found by name in the "optimizers" catalogue.

PyTorch counterpart: torch/optim/swa_utils.py (v2.13); the code lives in the
ember-optim distribution (``ember_optim.swa_utils``).
"""


def __getattr__(name):
    if name.startswith("__"):  # dunder probes (hasattr(m, "__wrapped__"), copy, pickle) never reach the registry
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ember.optim._registry import lookup

    return lookup("swa_utils", name, __name__)


def __dir__():
    from ember.optim._registry import names

    return sorted(set(globals()) | set(names("swa_utils")))
