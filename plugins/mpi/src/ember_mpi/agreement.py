"""The check that every rank passes matching buffers to a collective.

PyTorch counterpart: torch/csrc/distributed/c10d/ProcessGroupWrapper.cpp (the
TORCH_DISTRIBUTED_DEBUG=DETAIL check of collective fingerprints) (v2.13).
See NOTE [ Ranks must agree ] in process_group.py.
"""

import numpy as np

from ember.distributed.errors import DistBackendError

_MAX_DIMS = 8
_NAMES = ["all_reduce", "broadcast", "reduce", "all_gather", "reduce_scatter", "gather", "scatter",
          "all_to_all", "barrier"]
_OPS = ["SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"]


def signature(name, array, op=None, root=-1):
    """A fixed-size int64 record of one rank's view of a collective."""
    record = np.full(5 + _MAX_DIMS, -1, dtype=np.int64)
    record[0] = _NAMES.index(name)
    record[3] = -1 if op is None else _OPS.index(op.name)
    record[4] = root
    if array is not None:
        record[1] = ord(array.dtype.char)
        shape = array.shape
        record[2] = len(shape)
        if len(shape) > _MAX_DIMS:  # fold the extra dims into the last slot
            shape = (*shape[:_MAX_DIMS - 1], int(np.prod(shape[_MAX_DIMS - 1:])))
        record[5:5 + len(shape)] = shape
    return record


def _describe(record):
    name = _NAMES[record[0]]
    if record[2] < 0:
        return name
    shape = tuple(int(d) for d in record[5:5 + min(int(record[2]), _MAX_DIMS)])
    text = f"{name} of {np.dtype(chr(record[1])).name} {shape}"
    if record[3] >= 0:
        text += f" op={_OPS[record[3]]}"
    if record[4] >= 0:
        text += f" root={record[4]}"
    return text


def check(comm, name, record, global_rank):
    """All-gather the records; raise the same error on every rank if they differ."""
    records = np.empty((comm.Get_size(), record.size), dtype=np.int64)
    comm.Allgather(record, records)
    compare(records, name, global_rank)


def compare(records, name, global_rank):
    """Raise, naming every rank's view, unless all the gathered records are equal."""
    if (records == records[0]).all():
        return
    views = "; ".join(f"rank {r}: {_describe(rec)}" for r, rec in enumerate(records))
    raise DistBackendError(f"[rank {global_rank}] {name}: the ranks called mismatched collectives or passed "
                           f"tensors of different shapes or dtypes ({views})")


def check_splits(comm, output_splits, input_splits, global_rank):
    """all_to_all: what rank j sends to rank i must be what rank i expects from j."""
    sent_to_me = np.empty(comm.Get_size(), dtype=np.int64)
    comm.Alltoall(np.asarray(input_splits, dtype=np.int64), sent_to_me)
    agrees = np.array([(sent_to_me == np.asarray(output_splits)).all()], dtype=np.int64)
    from mpi4py import MPI

    comm.Allreduce(MPI.IN_PLACE, agrees, op=MPI.MIN)  # every rank raises, or none
    if not agrees[0]:
        raise DistBackendError(f"[rank {global_rank}] all_to_all: the split sizes disagree: this rank expects "
                               f"{list(output_splits)} rows from the ranks, and they send {sent_to_me.tolist()}")
