"""``ember.optim.swa_utils``: weight averaging (AveragedModel, SWALR, update_bn, the EMA/SWA
averaging functions), found by name in the "optimizers" catalogue.

PyTorch counterpart: torch/optim/swa_utils.py (v2.13); the code lives in the
ember-optim distribution (``ember_optim.swa_utils``).
"""

from ember.plugins.forwarding import forwarder

__getattr__, __dir__ = forwarder(__name__)  # NOTE [ Forwarding modules ]
