"""``ember.distributed.fsdp``: Fully Sharded Data Parallel.

PyTorch counterpart: torch/distributed/fsdp/__init__.py (v2.13).

The rooms: api.py (strategies, state-dict types, configs), flat_param.py (one unit's flat
parameter, its shards, gather and free), fully_sharded_data_parallel.py (the wrapper
and its schedule), wrap.py (auto-wrap policies).
"""

from ember.distributed.fsdp.api import (
    BackwardPrefetch,
    CPUOffload,
    FullStateDictConfig,
    LocalStateDictConfig,
    MixedPrecision,
    ShardedStateDictConfig,
    ShardingStrategy,
    StateDictConfig,
    StateDictType,
)
from ember.distributed.fsdp.fully_sharded_data_parallel import FullyShardedDataParallel

__all__ = ["BackwardPrefetch", "CPUOffload", "FullStateDictConfig", "FullyShardedDataParallel", "LocalStateDictConfig",
           "MixedPrecision", "ShardedStateDictConfig", "ShardingStrategy", "StateDictConfig", "StateDictType"]
