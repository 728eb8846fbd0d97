"""``ember.utils.data.dataset``: ember-data's ``ember_data.dataset`` under PyTorch's path.

PyTorch counterpart: torch/utils/data/dataset.py (v2.13).
"""

from ember.utils.data._forward import forward

__getattr__, __dir__ = forward("ember_data.dataset", __name__)
