"""A script for ``ember run`` (tests/core/distributed/test_run.py): argv[1] picks what
goes wrong; argv[2] is a unique marker the test looks for among the processes (a folder, for "sleep")."""

import datetime
import os
import sys
import time

import ember
import ember.distributed as dist

mode = sys.argv[1]
dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=2))
rank = dist.get_rank()
t = ember.ones(3)
dist.all_reduce(t)
if mode == "ok":
    print(f"rank {rank}: RANK={os.environ['RANK']} LOCAL_RANK={os.environ['LOCAL_RANK']} "
          f"WORLD_SIZE={os.environ['WORLD_SIZE']} MASTER_ADDR={os.environ['MASTER_ADDR']} "
          f"MASTER_PORT={os.environ['MASTER_PORT']} sum={t.tolist()}\n", end="", flush=True)  # one write per line
elif mode == "raise" and rank == 1:
    raise ValueError("rank one gives up")
elif mode == "kill" and rank == 1:
    os.kill(os.getpid(), 9)
elif mode == "timeout" and rank == 1:
    time.sleep(600)  # never reaches the next all_reduce
elif mode == "swallowed":  # rank 0 catches its timeout and ends normally: ember-mpi ends the job at exit
    if rank == 1:
        time.sleep(600)
    try:
        dist.all_reduce(t)
    except dist.DistBackendError as exc:
        print(f"rank 0 caught: {exc}", flush=True)
        sys.exit(0)
elif mode == "sleep":  # both ranks wait to be interrupted
    open(os.path.join(sys.argv[2], f"ready-{rank}"), "w").close()
    time.sleep(600)
dist.all_reduce(t)
dist.destroy_process_group()
