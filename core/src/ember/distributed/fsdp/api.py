"""The options of ``FullyShardedDataParallel``: sharding strategies, state-dict types and configs.

PyTorch counterpart: torch/distributed/fsdp/api.py (v2.13). ember has the enums and the
config classes programs pass; of the strategies it runs FULL_SHARD, SHARD_GRAD_OP and
NO_SHARD (the hybrid ones need a second, intra-node group and are refused), of the
state-dict types FULL_STATE_DICT and LOCAL_STATE_DICT (SHARDED_STATE_DICT returns
torch's ShardedTensor/DTensor values, which ember does not have).
"""

from dataclasses import dataclass
from enum import Enum, auto


class ShardingStrategy(Enum):
    """What each rank keeps of a unit's flat parameter, and when it gathers the rest.

    FULL_SHARD: parameters, gradients and optimizer state sharded; gathered before
    forward, freed after it, gathered again before backward.
    SHARD_GRAD_OP: the same, but the gathered parameters stay from forward to backward.
    NO_SHARD: every rank keeps everything; gradients are all-reduced (DDP's schedule).
    """

    FULL_SHARD = auto()
    SHARD_GRAD_OP = auto()
    NO_SHARD = auto()
    HYBRID_SHARD = auto()
    _HYBRID_SHARD_ZERO2 = auto()


class BackwardPrefetch(Enum):
    """When torch issues the next unit's all_gather in backward (NOTE [ The FSDP schedule ])."""

    BACKWARD_PRE = auto()
    BACKWARD_POST = auto()


class StateDictType(Enum):
    """What ``state_dict()`` returns: the full unsharded tensors, the local flat shards, or sharded tensors."""

    FULL_STATE_DICT = auto()
    LOCAL_STATE_DICT = auto()
    SHARDED_STATE_DICT = auto()


@dataclass
class StateDictConfig:
    offload_to_cpu: bool = False


@dataclass
class FullStateDictConfig(StateDictConfig):
    """``rank0_only=True`` gives the full state dict on rank 0 and an empty dict elsewhere."""

    rank0_only: bool = False


@dataclass
class LocalStateDictConfig(StateDictConfig):
    pass


@dataclass
class ShardedStateDictConfig(StateDictConfig):
    _use_dtensor: bool = False


@dataclass
class CPUOffload:
    offload_params: bool = False


@dataclass
class MixedPrecision:
    param_dtype: object = None
    reduce_dtype: object = None
    buffer_dtype: object = None
