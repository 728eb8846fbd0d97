"""``ember.nn.modules.batchnorm``: PyTorch's module path for the batch norms (ember-norm); the classes come
from the plugin that registers them, through ``ember.nn``'s module catalogue.

PyTorch counterpart: torch/nn/modules/batchnorm.py (v2.13).
"""

from ember.plugins.forwarding import forwarder

__getattr__, __dir__ = forwarder(__name__)  # NOTE [ Forwarding modules ]
