"""``ember.optim.optimizer``: ember-optim's ``ember_optim.optimizer`` (``Optimizer``,
``required``) under PyTorch's path, for programs that subclass
``torch.optim.optimizer.Optimizer``.

PyTorch counterpart: torch/optim/optimizer.py (v2.13).
"""

from ember.plugins.forwarding import forwarder

__getattr__, __dir__ = forwarder(__name__)  # NOTE [ Forwarding modules ]
