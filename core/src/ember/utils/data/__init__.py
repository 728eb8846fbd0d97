"""``ember.utils.data``: the same names as ``ember.data``, for code written against
``torch.utils.data``; its submodules (``dataloader``, ``sampler``, ``dataset``,
``distributed``) are the ember-data modules under torch's paths.

PyTorch counterpart: torch/utils/data/__init__.py (v2.13).
"""

from ember.plugins.forwarding import forwarder

__getattr__, __dir__ = forwarder(__name__)  # NOTE [ Forwarding modules ]
