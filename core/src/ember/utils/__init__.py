"""``ember.utils``: home of ``ember.utils.data`` (an alias of ``ember.data``),
``ember.utils.checkpoint`` and ``ember.utils.cpp_extension`` (imported on demand, as torch's).

PyTorch counterpart: torch/utils/__init__.py (v2.13).
"""

from ember.utils import checkpoint, data

__all__ = ["checkpoint", "data"]
