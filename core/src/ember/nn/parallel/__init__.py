"""``ember.nn.parallel``: data parallelism across processes (DDP) and across devices of one process.

PyTorch counterpart: torch/nn/parallel/__init__.py (v2.13).
"""

from ember.nn.parallel.data_parallel import DataParallel, data_parallel
from ember.nn.parallel.distributed import DistributedDataParallel
from ember.nn.parallel.parallel_apply import parallel_apply
from ember.nn.parallel.replicate import replicate
from ember.nn.parallel.scatter_gather import gather, scatter

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel", "gather", "parallel_apply", "replicate",
           "scatter"]
