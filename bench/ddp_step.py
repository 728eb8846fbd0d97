"""A DistributedDataParallel training step of ResNet-18 (CIFAR-style, 11.2 M parameters)
on 2 ranks: ember (MPI) against torch (gloo), same processes, same weights and data.

    python bench/ddp_step.py [threads]     # starts itself under mpiexec -n 2

Per rank: batch 8 of 3x32x32, cross-entropy, SGD with momentum. Besides the DDP step
(JSON "ember"/"torch"/"ratio", below 1.0: ember is faster) it times, for each library,
the same step without DDP ("local") and an all-reduce of every gradient alone ("comm"),
and reports the share of the all-reduce hidden behind backward:
``hidden = 1 - (ddp - local) / comm`` (1: communication fully overlapped; 0: none). That
difference of two step times is noisy on a loaded machine, so for ember it also times,
inside each DDP step, how long the reducer waits for the buckets once backward is over
("ember exposed wait"): ``ember hidden (wait) = 1 - wait / comm``.
"""

import sys
import time

from common import interleaved, libraries
from distributed_common import join_both, relaunch_under_mpiexec
from resnet_step import build_models, make_step

relaunch_under_mpiexec(__file__)
THREADS = int(sys.argv[1]) if len(sys.argv) > 1 else 1
BATCH = 8
np, torch, ember = libraries(THREADS)
import ember.distributed as dist  # noqa: E402

rank, size = join_both(torch)
model, reference = build_models()
ember_ddp = ember.nn.parallel.DistributedDataParallel(model)
torch_ddp = torch.nn.parallel.DistributedDataParallel(reference)
rng = np.random.default_rng(rank)
x = rng.standard_normal((BATCH, 3, 32, 32)).astype(np.float32)
y = rng.integers(0, 10, BATCH).astype(np.int64)
flat_ember = ember.zeros(sum(p.numel() for p in model.parameters()))
waits = []
finalize = ember_ddp.reducer.finalize_backward


def timed_finalize():
    started = time.perf_counter()
    finalize()
    waits.append(time.perf_counter() - started)


ember_ddp.reducer.finalize_backward = timed_finalize
flat_torch = torch.zeros(sum(p.numel() for p in reference.parameters()))


def synced(step, barrier):
    def run():
        barrier()
        step()
    return run


steps = {
    "ember": synced(make_step(ember, ember_ddp, x, y), dist.barrier),
    "torch": synced(make_step(torch, torch_ddp, x, y), torch.distributed.barrier),
    "ember local": synced(make_step(ember, model, x, y), dist.barrier),
    "torch local": synced(make_step(torch, reference, x, y), torch.distributed.barrier),
    "ember comm": synced(lambda: dist.all_reduce(flat_ember), dist.barrier),
    "torch comm": synced(lambda: torch.distributed.all_reduce(flat_torch), torch.distributed.barrier),
}
for step in steps.values():
    step()  # warm-up
medians = interleaved(steps, rounds=5, inner=1)
if rank == 0:
    import json
    import statistics

    def hidden(lib):
        exposed = medians[lib] - medians[f"{lib} local"]
        return max(0.0, min(1.0, 1 - exposed / medians[f"{lib} comm"]))
    print(json.dumps({"benchmark": "DDP ResNet-18 step, 2 ranks x batch 8", "threads": THREADS,
                      "ember": medians["ember"] * 1e3, "torch": medians["torch"] * 1e3,
                      "ratio": medians["ember"] / medians["torch"],
                      **{f"{k} ms": v * 1e3 for k, v in medians.items() if " " in k},
                      "ember hidden": hidden("ember"), "torch hidden": hidden("torch"),
                      "ember exposed wait ms": statistics.median(waits) * 1e3,
                      "ember hidden (wait)": max(0.0, 1 - statistics.median(waits) / medians["ember comm"])}))
dist.barrier()
torch.distributed.destroy_process_group()
dist.destroy_process_group()
