"""``ember.data.transforms``: forwards to the module the ember-data plugin registers as "transforms",
so ``from ember.data.transforms import ...`` works like ``ember.data.transforms.<name>``.

PyTorch counterpart: torchvision/transforms/__init__.py (v0.28).
"""

from ember.plugins.forwarding import forwarder

__getattr__, __dir__ = forwarder(__name__)  # NOTE [ Forwarding modules ]
