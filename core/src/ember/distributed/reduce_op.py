"""``ReduceOp``: how a collective combines the tensors of the ranks.

PyTorch counterpart: torch/distributed/distributed_c10d.py (``ReduceOp``, bound from
torch/csrc/distributed/c10d/Types.hpp) (v2.13).

The members compare equal to themselves and print like torch's (``ReduceOp.SUM``).
``AVG`` is ``SUM`` divided by the group's size; on integer tensors the division
truncates toward zero, as NCCL's integer average does (gloo refuses ``AVG``; ember
accepts it on every backend). ``PREMUL_SUM`` is left out.
"""

import enum

from ember.dtypes import is_floating_array


class ReduceOp(enum.Enum):
    """The reduction of ``all_reduce``, ``reduce`` and ``reduce_scatter_tensor``."""

    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"

    def __repr__(self):
        return f"<RedOpType.{self.name}: {list(ReduceOp).index(self)}>"

    def __str__(self):
        return f"ReduceOp.{self.name}"


# The bitwise reductions are defined on integer and bool tensors only (torch: "Cannot
# use ReduceOp.BAND with float tensors").
BITWISE = (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR)


def check_reduce_op(op, np_dtype):
    """Refuse what is not a ``ReduceOp``, and bitwise ops on floating-point data."""
    if not isinstance(op, ReduceOp):
        raise TypeError(f"op must be an ember.distributed.ReduceOp, got {op!r}")
    if op in BITWISE and is_floating_array(np_dtype):
        raise RuntimeError(f"Cannot use {op} with floating-point tensors")
