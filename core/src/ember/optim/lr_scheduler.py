"""``ember.optim.lr_scheduler``: learning-rate schedulers, found by name in the "optimizers" catalogue.

PyTorch counterpart: torch/optim/lr_scheduler.py (v2.13); the schedulers live in the
ember-optim distribution (``ember_optim.lr_scheduler``).
"""

from ember.plugins import forwarding as _forwarding

__all__ = ["create"]


def create(name, optimizer, **kwargs):
    """Build the scheduler registered as ``name``:
    ``ember.optim.lr_scheduler.create("StepLR", optimizer, step_size=10)``."""
    return _forwarding.create(__name__, name, optimizer, **kwargs)


__getattr__, __dir__ = _forwarding.forwarder(__name__)  # NOTE [ Forwarding modules ]
