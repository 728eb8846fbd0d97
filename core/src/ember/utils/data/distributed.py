"""``ember.utils.data.distributed``: ember-data's ``ember_data.distributed`` under PyTorch's path.

PyTorch counterpart: torch/utils/data/distributed.py (v2.13).
"""

from ember.plugins.forwarding import forwarder

__getattr__, __dir__ = forwarder(__name__)  # NOTE [ Forwarding modules ]
