"""100 MiB float32 all_reduce on 2 ranks: ember (MPI) against torch (gloo), same processes.

    python bench/allreduce.py [threads]     # starts itself under mpiexec -n 2

Rounds alternate the two libraries (each preceded by its own barrier); rank 0 prints
the JSON line: median ms of each, their ratio (below 1.0: ember is faster) and the
bus bandwidth of each in GiB/s (2 (n - 1) / n * bytes / time, NCCL-tests' convention).
"""

import sys

from common import interleaved, libraries
from distributed_common import join_both, relaunch_under_mpiexec

relaunch_under_mpiexec(__file__)
THREADS = int(sys.argv[1]) if len(sys.argv) > 1 else 1
np, torch, ember = libraries(THREADS)
import ember.distributed as dist  # noqa: E402

rank, size = join_both(torch)
ELEMENTS = 100 * 1024 * 1024 // 4
mine = ember.from_numpy(np.full(ELEMENTS, rank + 1.0, dtype=np.float32))
theirs = torch.full((ELEMENTS,), rank + 1.0)


def ember_step():
    dist.barrier()
    dist.all_reduce(mine)


def torch_step():
    torch.distributed.barrier()
    torch.distributed.all_reduce(theirs)


ember_step()
torch_step()  # warm-up: the first call sets up connections and buffers
medians = interleaved({"ember": ember_step, "torch": torch_step}, rounds=7, inner=1)
assert np.isfinite(mine.numpy()[:4]).all() and mine.numpy()[0] == theirs[0].item()  # both summed alike
if rank == 0:
    import json

    bus = 2 * (size - 1) / size * ELEMENTS * 4 / 2**30
    print(json.dumps({"benchmark": "all_reduce 100 MiB float32, 2 ranks", "threads": THREADS,
                      "ember": medians["ember"] * 1e3, "torch": medians["torch"] * 1e3,
                      "ratio": medians["ember"] / medians["torch"],
                      "ember GiB/s": bus / medians["ember"], "torch GiB/s": bus / medians["torch"]}))
dist.barrier()
torch.distributed.destroy_process_group()
dist.destroy_process_group()
