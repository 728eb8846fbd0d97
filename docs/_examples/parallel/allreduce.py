"""Every rank contributes rank + 1; all_reduce leaves the sum on every rank."""
import ember
import ember.distributed as dist

dist.init_process_group()  # the CPU backend: ember-mpi
rank, size = dist.get_rank(), dist.get_world_size()
t = ember.tensor([1.0, 2.0]) * (rank + 1)
dist.all_reduce(t)  # in place, like torch
gathered = [None] * size
dist.all_gather_object(gathered, {"rank": rank})
# one write per line
print(f"rank {rank} of {size}: sum {t.tolist()}, gathered {gathered}\n", end="",
      flush=True)
dist.destroy_process_group()
