"""``ember.utils.data.sampler``: ember-data's ``ember_data.sampler`` under PyTorch's path.

PyTorch counterpart: torch/utils/data/sampler.py (v2.13).
"""

from ember.utils.data._forward import forward

__getattr__, __dir__ = forward("ember_data.sampler", __name__)
