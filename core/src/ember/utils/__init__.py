"""``ember.utils``: home of ``ember.utils.data``, an alias of ``ember.data``.

PyTorch counterpart: torch/utils/__init__.py (v2.13); only the ``data`` alias.
"""

from ember.utils import data

__all__ = ["data"]
