"""``ember.nn.parallel``: data parallelism across processes (DDP) and across devices of one process.

PyTorch counterpart: torch/nn/parallel/__init__.py (v2.13).
"""

from ember.nn.parallel.distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
