"""``ember.utils.data.distributed``: ember-data's ``ember_data.distributed`` under PyTorch's path.

PyTorch counterpart: torch/utils/data/distributed.py (v2.13).
"""

from ember.utils.data._forward import forward

__getattr__, __dir__ = forward("ember_data.distributed", __name__)
