"""``ReduceOp`` -> MPI reduction, and what MPI cannot do by itself (AVG, float16).

PyTorch counterpart: torch/csrc/distributed/c10d/ProcessGroupMPI.cpp (``mpiOp``, the
map from c10d's ReduceOp to MPI_Op) (v2.13).
"""

import numpy as np


def mpi_op(op):
    """The MPI operation that computes ``op`` (AVG is a SUM, divided afterwards)."""
    from mpi4py import MPI

    from ember.distributed.reduce_op import ReduceOp

    return {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD, ReduceOp.MIN: MPI.MIN,
            ReduceOp.MAX: MPI.MAX, ReduceOp.BAND: MPI.BAND, ReduceOp.BOR: MPI.BOR, ReduceOp.BXOR: MPI.BXOR}[op]


def finish_average(array, op, size):
    """Divide a summed ``array`` by ``size`` in place when ``op`` is AVG.

    Integers truncate toward zero (NCCL's integer average): ``-7 / 2 -> -3``.
    """
    from ember.distributed.reduce_op import ReduceOp

    if op is not ReduceOp.AVG:
        return
    if array.dtype.kind in "iu":
        array[...] = np.sign(array) * (np.abs(array) // size)
    elif array.dtype.kind == "b":
        return
    else:
        array /= size


# MPI has no 16-bit float types: these are reduced in float32 and rounded back.
WIDENED = {np.dtype(np.float16): np.float32}
