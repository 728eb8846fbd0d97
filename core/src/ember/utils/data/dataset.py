"""``ember.utils.data.dataset``: ember-data's ``ember_data.dataset`` under PyTorch's path.

PyTorch counterpart: torch/utils/data/dataset.py (v2.13).
"""

from ember.plugins.forwarding import forwarder

__getattr__, __dir__ = forwarder(__name__)  # NOTE [ Forwarding modules ]
