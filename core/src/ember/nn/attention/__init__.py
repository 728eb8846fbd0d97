"""``ember.nn.attention``: which kernels ``scaled_dot_product_attention`` may use.

PyTorch counterpart: torch/nn/attention/__init__.py (``SDPBackend``, ``sdpa_kernel``)
(v2.13), whose flags live in ATen's global context and choose among the math kernel and
the fused ones (flash, memory-efficient, cuDNN).

ember has one kernel, the math formulation ``softmax(q k^T / sqrt(d) + mask) v``
(ember/native/attention.py), on every device. ``sdpa_kernel`` keeps torch's interface and
records the enabled backends (``enabled_backends()``), so programs that pin a backend
run; ember's attention is computed the same way whatever is enabled, which gives
torch's math-kernel numbers, within rounding of its fused kernels' numbers.
"""

import contextlib
import enum

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    """The attention backends, with torch's values."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_ALL = [SDPBackend.MATH, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION,
        SDPBackend.OVERRIDEABLE]
_enabled = list(_ALL)


def enabled_backends():
    """The backends enabled now, in priority order (all of them outside ``sdpa_kernel``)."""
    return list(_enabled)


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Enable only ``backends`` (one ``SDPBackend`` or a list) inside the block, and
    restore the previous set on exit (ember's one kernel runs either way)."""
    global _enabled
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError(f"Backend must be an instance of SDPBackend or a list of SDPBackend instances, "
                             f"got {type(backends).__name__}")
    chosen = list(dict.fromkeys([backends] if isinstance(backends, SDPBackend) else backends))
    previous = _enabled
    _enabled = chosen if set_priority else [b for b in _ALL if b in chosen]
    try:
        yield {}
    finally:
        _enabled = previous
