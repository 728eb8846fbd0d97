"""The checks a rank of a multi-rank test script runs, and the report it leaves.

Used inside mpiexec jobs (collective_checks.py, tests/core/nn/parallel/ddp_checks.py):
``@checks.run("name")`` runs a function at once; it passes by returning True, anything
else (or an exception) is recorded as a failure. ``checks.write(folder, rank)`` leaves
``rank-<N>.json`` for the test to read."""

import json
import os
import socket
import traceback


class RankChecks:
    def __init__(self):
        self.names, self.failures = [], []

    def run(self, name):
        def decorate(fn):
            self.names.append(name)
            try:
                result = fn()
                if result is not True:
                    self.failures.append(f"{name}: {result}")
            except Exception:
                self.failures.append(f"{name}: {traceback.format_exc()}")
            return fn
        return decorate

    def write(self, folder, rank, **extra):
        with open(os.path.join(folder, f"rank-{rank}.json"), "w") as f:
            json.dump({"checks": self.names, "failures": self.failures, **extra}, f)


def join_mpi_and_gloo():
    """ember's default group over MPI, then torch's over gloo on 127.0.0.1 (rank 0 picks
    the port and MPI tells the others), in the same processes; returns (rank, size)."""
    import torch.distributed as tdist

    import ember.distributed as dist

    dist.init_process_group("mpi")
    rank, size = dist.get_rank(), dist.get_world_size()
    port = [None]
    if rank == 0:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port[0] = s.getsockname()[1]
    dist.broadcast_object_list(port, src=0)
    tdist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port[0]}", rank=rank, world_size=size)
    return rank, size
