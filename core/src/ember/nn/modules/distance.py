"""``ember.nn.modules.distance``: PyTorch's module path for the PairwiseDistance and CosineSimilarity; the classes come
from the plugin that registers them, through ``ember.nn``'s module catalogue.

PyTorch counterpart: torch/nn/modules/distance.py (v2.13).
"""


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ember.nn._registry import lookup

    return lookup("modules", name, __name__)
