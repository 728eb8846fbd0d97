"""``ember.amp``: automatic mixed precision: ``autocast`` and ``GradScaler``.

PyTorch counterpart: torch/amp/__init__.py (v2.13). ``ember.cuda.amp`` and
``ember.cpu.amp`` hold PyTorch's older device-specific spellings (``amp_aliases.py``).
"""

from ember.amp import amp_aliases  # noqa: F401  (ember.cuda.amp, ember.cpu.amp)
from ember.amp.autocast_mode import (
                                     autocast,
                                     custom_bwd,
                                     custom_fwd,
                                     get_autocast_dtype,
                                     is_autocast_available,
                                     is_autocast_enabled,
)
from ember.amp.grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd", "is_autocast_available", "is_autocast_enabled",
           "get_autocast_dtype"]
