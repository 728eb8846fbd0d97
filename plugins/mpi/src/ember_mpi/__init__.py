"""ember-mpi: the MPI communication backend of ``ember.distributed``.

PyTorch counterpart: torch/csrc/distributed/c10d/ProcessGroupMPI.cpp (found through
``Backend.register_backend`` in torch/distributed/distributed_c10d.py) (v2.13).

mpi4py is imported inside the hook's factory, never when ember discovers the plugin.
"""

from ember.plugins import hookimpl

__version__ = "0.1.0"


def create_world(timeout):
    """Join ``MPI_COMM_WORLD`` (the factory ``init_process_group("mpi")`` calls)."""
    from ember_mpi.process_group import MPIBackend

    return MPIBackend.world(timeout)


@hookimpl
def ember_register_comm_backends(register):
    register(create_world, name="mpi", devices=("cpu",))
