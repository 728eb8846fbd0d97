"""Communication backends: the registry, and the interface a backend implements.

PyTorch counterpart: torch/distributed/distributed_c10d.py (``Backend`` and
``Backend.register_backend``) and torch/csrc/distributed/c10d/Backend.hpp (the
virtual collectives a ProcessGroupGloo/NCCL/MPI implements) (v2.13).

Backends are plugins: a distribution implements the hook
``ember_register_comm_backends(register)`` and calls
``register(factory, name="mpi", devices=("cpu",))``. ``factory(timeout)`` joins the
job's world and returns a :class:`CommBackend`. ember-mpi provides ``"mpi"`` (CPU
tensors, mpi4py); ember-cupy provides ``"nccl"`` (CUDA tensors).

# NOTE [ gloo is an alias ]
# ember has no gloo. So that a PyTorch script runs with only the import changed,
# ``init_process_group("gloo")`` picks the backend registered for CPU tensors (mpi),
# and says so in ``get_backend()``'s answer ("mpi").
"""

from ember.distributed.errors import DistError

ALIASES = {"gloo": "cpu", "cpu:gloo": "cpu", "cuda:nccl": "nccl"}
DISTRIBUTIONS = {"mpi": "ember-mpi", "nccl": "ember-cupy"}


class Backend(str):
    """A backend name, lower-cased: ``Backend("MPI") == "mpi"``."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend name must be a string, but got: {name!r}")
        return super().__new__(cls, name.lower())

    @classmethod
    def register_backend(cls, name, func, devices=("cpu",)):
        """Register ``func(timeout) -> CommBackend`` under ``name`` in-process (like a plugin)."""
        from ember import plugins
        from ember.plugins import hookimpl

        class _InProcess:
            @hookimpl
            def ember_register_comm_backends(self, register):
                register(func, name=name.lower(), devices=tuple(devices))

        plugins.register(_InProcess(), name=f"comm_backend_{name.lower()}")


def find_backend(name):
    """``(factory, registered name)`` for a backend name, alias or device type."""
    from ember.plugins import registry

    catalogue = registry.catalogue("comm_backends")
    wanted = ALIASES.get(name.lower(), name.lower())
    if wanted in catalogue:
        return catalogue[wanted].obj, wanted
    for key, entry in catalogue.items():  # a device type: the backend that serves it
        if wanted in entry.extra.get("devices", ()):
            return entry.obj, key
    known = ", ".join(sorted(catalogue)) or "none"
    dist = DISTRIBUTIONS.get(wanted, DISTRIBUTIONS["mpi"] if wanted == "cpu" else None)
    from ember.plugins.manager import install_hint

    hint = f" Install it with: {install_hint(dist)}" if dist else ""
    raise DistError(f"no ember communication backend named {name!r} is installed (installed: {known}).{hint}")


class CommBackend:
    """What a communication backend implements, on one group of ranks.

    Every method takes backend arrays (NumPy for ``mpi``), contiguous, already checked
    by ``ember.distributed`` for dtype and device, and returns a
    :class:`~ember.distributed.work.Work`. Ranks are ranks *in this group*. The
    collectives must check that the ranks agree on shapes and dtypes and raise
    ``DistBackendError`` naming them otherwise.
    """

    name = "undefined"

    def rank(self):
        raise NotImplementedError

    def size(self):
        raise NotImplementedError

    def _missing(self, what):
        return NotImplementedError(f"the {self.name!r} communication backend does not implement {what}")

    def allreduce(self, array, op, blocking=False):
        """``blocking``: the caller waits at once, so the backend may run it on the calling thread."""
        raise self._missing("all_reduce")

    def broadcast(self, array, src, blocking=False):
        raise self._missing("broadcast")

    def reduce(self, array, dst, op):
        raise self._missing("reduce")

    def allgather(self, output, array):
        """``output`` has shape ``(size, *array.shape)``."""
        raise self._missing("all_gather")

    def reduce_scatter(self, output, array, op):
        """``array`` has shape ``(size, *output.shape)``."""
        raise self._missing("reduce_scatter")

    def gather(self, output, array, dst):
        """``output`` (``(size, *array.shape)``) is None except on ``dst``."""
        raise self._missing("gather")

    def scatter(self, output, array, src):
        """``array`` (``(size, *output.shape)``) is None except on ``src``."""
        raise self._missing("scatter")

    def alltoall(self, output, array, output_splits, input_splits):
        """Splits count rows of the first dimension."""
        raise self._missing("all_to_all")

    def barrier(self):
        raise self._missing("barrier")

    def send(self, array, dst, tag):
        raise self._missing("send")

    def recv(self, array, src, tag):
        """``src`` None receives from any rank; the Work's result is the source rank."""
        raise self._missing("recv")

    def split(self, ranks):
        """A backend over the sorted group ``ranks``, or None on ranks outside it (collective)."""
        raise self._missing("new_group")

    def shutdown(self):
        """Free the group's resources (``destroy_process_group``)."""
