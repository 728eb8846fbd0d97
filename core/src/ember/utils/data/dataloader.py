"""``ember.utils.data.dataloader``: ember-data's ``ember_data.dataloader`` under PyTorch's path.

PyTorch counterpart: torch/utils/data/dataloader.py (v2.13).
"""

from ember.plugins.forwarding import forwarder

__getattr__, __dir__ = forwarder(__name__)  # NOTE [ Forwarding modules ]
