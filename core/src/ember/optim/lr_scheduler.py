"""``ember.optim.lr_scheduler``: learning-rate schedulers, found by name in the "optimizers" catalogue.

PyTorch counterpart: torch/optim/lr_scheduler.py (v2.13); the schedulers live in the
ember-optim distribution (``ember_optim.lr_scheduler``).
"""

__all__ = ["create"]


def create(name, optimizer, **kwargs):
    """Build the scheduler registered as ``name``:
    ``ember.optim.lr_scheduler.create("StepLR", optimizer, step_size=10)``."""
    from ember.optim._registry import create as _create

    return _create("lr_scheduler", name, optimizer, **kwargs)


def __getattr__(name):
    if name.startswith("__"):  # dunder probes (hasattr(m, "__wrapped__"), copy, pickle) never reach the registry
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ember.optim._registry import lookup

    return lookup("lr_scheduler", name, __name__)


def __dir__():
    from ember.optim._registry import names

    return sorted(set(globals()) | set(names("lr_scheduler")))
