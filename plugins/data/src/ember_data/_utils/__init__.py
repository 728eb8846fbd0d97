"""The DataLoader's helpers: collate, fetch, the worker loop, pinning, worker signals.

PyTorch counterpart: torch/utils/data/_utils/__init__.py (v2.13).
"""

# How often (seconds) a waiting process checks on the others: the main process on its
# workers while it waits for a batch, a worker on its parent while it waits for work.
# Short enough that a dead worker is reported within a fraction of a second.
STATUS_CHECK_INTERVAL = 0.1

# How long shutdown waits for a worker to exit by itself before terminating it.
WORKER_JOIN_TIMEOUT = 5.0
