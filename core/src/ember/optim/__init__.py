"""``ember.optim``: optimizers, found by name in the "optimizers" catalogue.

PyTorch counterpart: torch/optim/__init__.py (v2.13). The optimizers themselves live
in the ember-optim distribution (``ember_optim``); ``ember.optim.SGD`` looks the name
up in what plugins registered through ``ember_register_optimizers``, and, when the
plugin is not installed, says which distribution to install.
``ember.optim.lr_scheduler`` and ``ember.optim.swa_utils`` resolve their names the
same way.
"""

from ember.optim import lr_scheduler, swa_utils
from ember.plugins import forwarding as _forwarding

__all__ = ["lr_scheduler", "swa_utils", "create"]


def create(name, params, **kwargs):
    """Build the optimizer registered as ``name``: ``ember.optim.create("AdamW", model.parameters(), lr=1e-3)``."""
    return _forwarding.create(__name__, name, params, **kwargs)


__getattr__, __dir__ = _forwarding.forwarder(__name__)  # NOTE [ Forwarding modules ]
