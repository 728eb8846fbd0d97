"""Testing helpers for ember and for plugin authors.

PyTorch counterpart: torch/testing/ (``assert_close``, ``make_tensor``) and
torch/library.py ``opcheck`` (v2.13).
"""

from ember.testing.opcheck import opcheck
from ember.testing.parity import assert_close, assert_parity, make_tensor

__all__ = ["assert_close", "assert_parity", "make_tensor", "opcheck"]
