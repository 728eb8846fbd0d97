"""Shared by the 2-rank benchmarks: start this script again under mpiexec when it was
run plainly, and join ember's MPI group and torch's gloo group in the same processes."""

import os
import pathlib
import socket
import subprocess
import sys


def relaunch_under_mpiexec(script, nprocs=2):
    """When not already a rank, run ``script`` on ``nprocs`` ranks and exit with its status."""
    if "PMI_RANK" in os.environ or "OMPI_COMM_WORLD_RANK" in os.environ:
        return
    mpiexec = pathlib.Path(sys.executable).parent / "mpiexec"
    status = subprocess.call([str(mpiexec), "-n", str(nprocs), sys.executable, script, *sys.argv[1:]])
    sys.exit(status)


def join_both(torch):
    """ember's default group (mpi) and torch's (gloo on 127.0.0.1); returns (rank, size)."""
    import ember.distributed as dist

    dist.init_process_group("mpi")
    port = [None]
    if dist.get_rank() == 0:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port[0] = s.getsockname()[1]
    dist.broadcast_object_list(port, src=0)
    torch.distributed.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port[0]}",
                                         rank=dist.get_rank(), world_size=dist.get_world_size())
    return dist.get_rank(), dist.get_world_size()
