"""Rank 1 fails while rank 0 waits in a collective: ember run stops the job."""
import ember
import ember.distributed as dist

dist.init_process_group()
if dist.get_rank() == 1:
    raise RuntimeError("out of data")
dist.all_reduce(ember.ones(1))  # rank 0 would wait here for ever
