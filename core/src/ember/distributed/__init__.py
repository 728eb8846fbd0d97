"""``ember.distributed``: process groups and collectives over pluggable communication backends.

PyTorch counterpart: torch/distributed/__init__.py (v2.13).

The rooms: distributed_c10d.py (groups, ranks, init and destroy), collectives.py
(tensor collectives), object_collectives.py (Python objects, loaded safely),
reduce_op.py, work.py (``Work``), backend.py (the backend registry and the interface
ember-mpi and ember-cupy's NCCL implement), errors.py, and run.py with
launch_rank.py (``ember run``, torchrun's counterpart).
"""

from ember.distributed.backend import Backend, CommBackend
from ember.distributed.collectives import (
                                           all_gather,
                                           all_gather_into_tensor,
                                           all_reduce,
                                           all_to_all,
                                           all_to_all_single,
                                           barrier,
                                           broadcast,
                                           gather,
                                           irecv,
                                           isend,
                                           recv,
                                           reduce,
                                           reduce_scatter,
                                           reduce_scatter_tensor,
                                           scatter,
                                           send,
)
from ember.distributed.distributed_c10d import (
                                           ProcessGroup,
                                           destroy_process_group,
                                           get_backend,
                                           get_global_rank,
                                           get_group_rank,
                                           get_process_group_ranks,
                                           get_rank,
                                           get_world_size,
                                           group,
                                           init_process_group,
                                           is_available,
                                           is_initialized,
                                           new_group,
)
from ember.distributed.errors import DistBackendError, DistError, DistNetworkError
from ember.distributed.object_collectives import all_gather_object, broadcast_object_list, gather_object
from ember.distributed.reduce_op import ReduceOp
from ember.distributed.work import Work

__all__ = [
    "Backend", "CommBackend", "DistBackendError", "DistError", "DistNetworkError", "ProcessGroup", "ReduceOp",
    "Work", "all_gather", "all_gather_into_tensor", "all_gather_object", "all_reduce", "all_to_all",
    "all_to_all_single", "barrier", "broadcast", "broadcast_object_list", "destroy_process_group", "gather",
    "gather_object", "get_backend", "get_global_rank", "get_group_rank", "get_process_group_ranks", "get_rank",
    "get_world_size", "group", "init_process_group", "irecv", "is_available", "is_initialized", "isend",
    "new_group", "recv", "reduce", "reduce_scatter", "reduce_scatter_tensor", "scatter", "send",
]
