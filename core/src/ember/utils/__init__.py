"""``ember.utils``: home of ``ember.utils.data`` (an alias of ``ember.data``) and
``ember.utils.checkpoint``.

PyTorch counterpart: torch/utils/__init__.py (v2.13).
"""

from ember.utils import checkpoint, data

__all__ = ["checkpoint", "data"]
