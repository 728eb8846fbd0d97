"""``ember.utils.data.dataloader``: ember-data's ``ember_data.dataloader`` under PyTorch's path.

PyTorch counterpart: torch/utils/data/dataloader.py (v2.13).
"""

from ember.utils.data._forward import forward

__getattr__, __dir__ = forward("ember_data.dataloader", __name__)
