"""``ember.signal``: signal processing, PyTorch's ``torch.signal`` (its ``windows``).

PyTorch counterpart: torch/signal/__init__.py (v2.13).
"""

from ember.signal import windows

__all__ = ["windows"]
