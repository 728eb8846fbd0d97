"""``ember.nn.modules.distance``: PyTorch's module path for the PairwiseDistance and CosineSimilarity; the classes come
from the plugin that registers them, through ``ember.nn``'s module catalogue.

PyTorch counterpart: torch/nn/modules/distance.py (v2.13).
"""

from ember.plugins.forwarding import forwarder

__getattr__, __dir__ = forwarder(__name__)  # NOTE [ Forwarding modules ]
