"""Process groups: ``init_process_group``, ranks, sizes, ``new_group``, ``destroy_process_group``.

PyTorch counterpart: torch/distributed/distributed_c10d.py (v2.13): the group
bookkeeping (``_World``, ``GroupMember``, ``init_process_group``, ``new_group``,
``get_rank``...). The collectives of that file live beside it in collectives.py and
object_collectives.py.

# NOTE [ Who decides the ranks ]
# torch's env:// rendezvous reads RANK, WORLD_SIZE and MASTER_ADDR:MASTER_PORT and
# builds a TCPStore. ember's backends join through their own launcher (MPI's mpiexec,
# which ``ember run`` drives), so the backend knows the rank and the world size.
# ``init_method``, MASTER_ADDR and MASTER_PORT are accepted and not needed; a ``rank``,
# ``world_size``, RANK or WORLD_SIZE that disagrees with the backend is an error, since
# it means the script was started some other way than the backend expects.
"""

import datetime
import os

from ember.distributed.backend import find_backend
from ember.distributed.errors import DistError

DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)  # torch's default_pg_timeout


class ProcessGroup:
    """A set of global ranks that run collectives together, over one backend."""

    def __init__(self, backend, ranks, backend_name, timeout, name):
        self._backend = backend  # None on a rank outside the group
        self._ranks = list(ranks)  # global ranks, sorted; group rank i is self._ranks[i]
        self._backend_name = backend_name
        self._timeout = timeout
        self._name = name

    def rank(self):
        """This process's rank in the group, or -1 if it is not a member."""
        return -1 if self._backend is None else self._backend.rank()

    def size(self):
        return len(self._ranks)

    def name(self):
        return self._name

    def _group_rank(self, global_rank, what):
        if global_rank not in self._ranks:
            raise ValueError(f"{what} rank {global_rank} is not part of group {self._name!r} "
                             f"(ranks {self._ranks})")
        return self._ranks.index(global_rank)

    def __repr__(self):
        return f"<ember.distributed.ProcessGroup {self._name!r} ranks={self._ranks} backend={self._backend_name}>"


class _World:
    """The default group and every group made from it (torch's ``_World``)."""

    def __init__(self):
        self.default = None
        self.groups = []

    def reset(self):
        for group in reversed(self.groups):
            if group._backend is not None:
                group._backend.shutdown()
        self.default = None
        self.groups = []


_world = _World()


class group:
    """``group.WORLD``: the default process group once initialized (torch's ``GroupMember``)."""

    WORLD = None


def is_available():
    """True: ember always has the distributed package (a backend plugin may still be missing)."""
    return True


def is_initialized():
    return _world.default is not None


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Join the job's default process group (every rank calls it once).

    ``backend`` is a registered name (``"mpi"``, ``"nccl"``), ``"gloo"`` (an alias of
    the CPU backend: NOTE [ gloo is an alias ] in backend.py), or None for the CPU
    backend. ``timeout`` bounds every collective (default 30 minutes, like torch).
    """
    if is_initialized():
        raise ValueError("trying to initialize the default process group twice!")
    timeout = DEFAULT_TIMEOUT if timeout is None else timeout
    if not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {type(timeout).__name__}")
    factory, backend_name = find_backend(backend or "cpu")
    comm = factory(timeout.total_seconds())
    _check_agrees(comm, world_size, rank)
    default = ProcessGroup(comm, range(comm.size()), backend_name, timeout.total_seconds(), group_name or "0")
    _world.default = default
    _world.groups.append(default)
    group.WORLD = default


def _check_agrees(comm, world_size, rank):
    sources = [("world_size", world_size, comm.size()), ("rank", rank, comm.rank())]
    for variable, size_or_rank in (("WORLD_SIZE", comm.size()), ("RANK", comm.rank())):
        value = os.environ.get(variable)
        if value not in (None, ""):
            sources.append((f"the environment variable {variable}", int(value), size_or_rank))
    for what, given, actual in sources:
        if given is not None and given != -1 and given != actual:
            comm.shutdown()
            raise DistError(f"{what} is {given}, but the {comm.name!r} backend started this process as rank "
                            f"{comm.rank()} of {comm.size()}: start the script with `ember run "
                            f"--nproc-per-node N script.py` (or the backend's own launcher, e.g. mpiexec)")


def destroy_process_group(group=None):
    """Free ``group``, or every group (and leave the default one) when None."""
    if group is None or group is _world.default:
        _require_init()
        _world.reset()
        globals()["group"].WORLD = None
        return
    if group in _world.groups:
        _world.groups.remove(group)
        if group._backend is not None:
            group._backend.shutdown()


def _require_init():
    if _world.default is None:
        raise ValueError("Default process group has not been initialized, please make sure to call "
                         "init_process_group.")


def _resolve(group):
    """The ``ProcessGroup`` a collective runs on (the default for None)."""
    _require_init()
    if group is None:
        return _world.default
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be an ember.distributed.ProcessGroup, got {type(group).__name__}")
    return group


def get_rank(group=None):
    """This process's rank in ``group`` (-1 if it is not a member)."""
    return _resolve(group).rank()


def get_world_size(group=None):
    """The number of ranks in ``group`` (-1 on a rank outside it, like torch)."""
    pg = _resolve(group)
    return -1 if pg._backend is None else pg.size()


def get_backend(group=None):
    return _resolve(group)._backend_name


def get_process_group_ranks(group):
    """The global ranks of ``group``, in group-rank order."""
    return list(_resolve(group)._ranks)


def get_global_rank(group, group_rank):
    """The global rank of ``group_rank`` in ``group``."""
    ranks = _resolve(group)._ranks
    if not 0 <= group_rank < len(ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {ranks}")
    return ranks[group_rank]


def get_group_rank(group, global_rank):
    """The rank in ``group`` of ``global_rank``."""
    return _resolve(group)._group_rank(global_rank, "global")


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None, device_id=None):
    """A group of some of the world's ranks; every rank of the world must call it, in the same order.

    Ranks are sorted, like torch's. On a rank outside ``ranks`` the group is returned
    too, and every collective on it is a no-op there (``get_rank(group) == -1``).
    """
    world = _resolve(None)
    ranks = sorted(range(world.size()) if ranks is None else ranks)
    for r in ranks:
        if not 0 <= r < world.size():
            raise ValueError(f"new_group: rank {r} is out of range for a world of size {world.size()}")
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"new_group: ranks {ranks} contain duplicates")
    if backend is not None and find_backend(backend)[1] != world._backend_name:
        raise DistError(f"new_group: backend {backend!r} differs from the default group's "
                        f"{world._backend_name!r} (ember groups share the default group's backend)")
    seconds = world._timeout if timeout is None else timeout.total_seconds()
    comm = world._backend.split(ranks)
    pg = ProcessGroup(comm, ranks, world._backend_name, seconds, group_desc or str(len(_world.groups)))
    _world.groups.append(pg)
    return pg
