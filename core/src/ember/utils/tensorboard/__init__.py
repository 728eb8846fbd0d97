"""``ember.utils.tensorboard``: ``SummaryWriter``, TensorBoard event files through the
``tensorboard`` package.

PyTorch counterpart: torch/utils/tensorboard/__init__.py (v2.13). Needs the tensorboard
package (pip install tensorboard); importing this module without it says so, as torch's.
"""

try:
    import tensorboard  # noqa: F401
except ImportError as exc:
    raise ImportError("ember.utils.tensorboard needs the tensorboard package: pip install tensorboard") from exc

from ember.utils.tensorboard.writer import SummaryWriter

__all__ = ["SummaryWriter"]
