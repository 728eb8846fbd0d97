"""The bytes each rank holds under FullyShardedDataParallel, per sharding strategy: the
parameters (the flat shards), Adam's state, and the most full (gathered) parameters
alive at once during a training step; against the same model unsharded.

    python bench/fsdp_memory.py [ranks]     # starts itself under mpiexec (2 ranks by default)

The model: 8 Linear(512, 512) layers with ReLU (2.1 M float32 parameters), one FSDP unit
per Linear (ModuleWrapPolicy), batch 16 per rank. Rank 0 prints one JSON line per
strategy, in MiB. Counted from the tensors themselves (``numel * element_size``), not
from the process's resident size, which NumPy's allocator and the MPI buffers blur.
"""

import json
import sys

from distributed_common import relaunch_under_mpiexec

relaunch_under_mpiexec(__file__, nprocs=int(sys.argv[1]) if len(sys.argv) > 1 else 2)

import ember  # noqa: E402
import ember.distributed as dist  # noqa: E402
from ember.distributed.fsdp import FullyShardedDataParallel, ShardingStrategy  # noqa: E402
from ember.distributed.fsdp.flat_param import UNSHARDED, reset_peak  # noqa: E402
from ember.distributed.fsdp.wrap import ModuleWrapPolicy  # noqa: E402

MIB = 1024 * 1024
dist.init_process_group("mpi")


def model():
    ember.manual_seed(0)
    layers = []
    for _ in range(8):
        layers += [ember.nn.Linear(512, 512), ember.nn.ReLU()]
    return ember.nn.Sequential(*layers)


def nbytes(tensors):
    return sum(t.numel() * t.element_size() for t in tensors)


def step(net, opt):
    x = ember.randn(16, 512)
    opt.zero_grad()
    net(x).square().mean().backward()
    opt.step()


plain = model()
opt = ember.optim.Adam(plain.parameters())
step(plain, opt)
rows = [{"strategy": "unsharded", "params": nbytes(plain.parameters()) / MIB,
         "adam_state": nbytes(v for s in opt.state.values() for v in s.values() if v.ndim) / MIB,
         "peak_gathered": 0.0}]
for strategy in (ShardingStrategy.FULL_SHARD, ShardingStrategy.SHARD_GRAD_OP, ShardingStrategy.NO_SHARD):
    net = FullyShardedDataParallel(model(), sharding_strategy=strategy,
                                   auto_wrap_policy=ModuleWrapPolicy({ember.nn.Linear}))
    opt = ember.optim.Adam(net.parameters())
    step(net, opt)
    reset_peak()
    step(net, opt)
    rows.append({"strategy": strategy.name, "params": nbytes(net.parameters()) / MIB,
                 "adam_state": nbytes(v for s in opt.state.values() for v in s.values() if v.ndim) / MIB,
                 "peak_gathered": UNSHARDED["peak"] / MIB})
if dist.get_rank() == 0:
    for row in rows:
        print(json.dumps({"world": dist.get_world_size(), **{k: round(v, 3) if isinstance(v, float) else v
                                                             for k, v in row.items()}}))
dist.destroy_process_group()
