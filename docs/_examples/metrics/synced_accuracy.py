"""Each rank scores its own half of the predictions; compute() syncs the states, so every
rank prints the accuracy of all of them (and its own states are back afterwards)."""
import ember
import ember.distributed as dist
import ember.metrics

dist.init_process_group()  # the CPU backend: ember-mpi
rank = dist.get_rank()
preds = ember.tensor([0, 1, 2, 2, 1, 0, 0, 1])
target = ember.tensor([0, 1, 1, 2, 1, 0, 2, 1])
mine = slice(0, 6) if rank == 0 else slice(6, 8)  # uneven shares: 6 samples and 2
metric = ember.metrics.Accuracy(task="multiclass", num_classes=3)
metric.update(preds[mine], target[mine])
value = float(metric.compute())  # 6 right of 8, on every rank
print(f"rank {rank}: accuracy {value}, local tp {metric.tp.tolist()}\n", end="",
      flush=True)
dist.destroy_process_group()
