"""``ember.utils.data.sampler``: ember-data's ``ember_data.sampler`` under PyTorch's path.

PyTorch counterpart: torch/utils/data/sampler.py (v2.13).
"""

from ember.plugins.forwarding import forwarder

__getattr__, __dir__ = forwarder(__name__)  # NOTE [ Forwarding modules ]
