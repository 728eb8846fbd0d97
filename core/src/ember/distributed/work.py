"""``Work``: the handle of a collective that may still be running.

PyTorch counterpart: torch/csrc/distributed/c10d/Work.hpp (bound as
``torch.distributed.Work``) (v2.13).

A backend runs each collective on its own thread, in the order the ranks issued them
(NOTE [ One worker thread per group ] in ember_mpi/process_group.py), and completes the
collective's ``Work`` from there. ``wait`` blocks the caller until then, or raises
``DistBackendError`` naming the rank and the collective once ``timeout`` has passed.
"""

import threading

from ember.distributed.errors import DistBackendError


class Work:
    """One issued collective: ``wait()``, ``is_completed()``, ``is_success()``, ``exception()``."""

    def __init__(self, name, rank, timeout, after=None):
        self.name = name  # e.g. "all_reduce", for messages
        self.rank = rank  # the global rank that issued it
        self.timeout = timeout  # seconds (a float), or None for no limit
        self._done = threading.Event()
        self._exception = None
        self._after = after  # runs in wait(), on the caller's thread (copies back into tensors)
        self._result = None
        self._on_timeout = None  # the backend's callback: ``on_timeout(message)``

    # --- the backend's side -------------------------------------------------------
    def _finish(self, exception=None, result=None):
        self._exception = exception
        self._result = result
        self._done.set()

    # --- the user's side ----------------------------------------------------------
    def is_completed(self):
        """True once the collective has finished (successfully or not); never blocks."""
        return self._done.is_set()

    def is_success(self):
        """True once the collective has finished without an error."""
        return self._done.is_set() and self._exception is None

    def exception(self):
        """The error the collective ended with, or None."""
        return self._exception

    def wait(self, timeout=None):
        """Block until the collective is done; returns True.

        Raises ``DistBackendError`` when ``timeout`` (a ``datetime.timedelta`` or seconds;
        by default the process group's) passes first, or the backend's error.
        """
        limit = _seconds(timeout) if timeout is not None else self.timeout
        if not self._done.wait(limit):
            message = (f"[rank {self.rank}] {self.name} timed out after {limit:g} s: some rank of the group "
                       f"did not reach it (a rank stuck, dead, or running a different collective)")
            if self._on_timeout is not None:
                self._on_timeout(message)
            raise DistBackendError(message)
        if self._exception is not None:
            raise self._exception
        if self._after is not None:
            after, self._after = self._after, None
            after()
        return True

    def result(self):
        """What the collective produced (its output tensors), after ``wait``."""
        self.wait()
        return self._result

    def get_future(self):
        raise NotImplementedError("ember's Work has no futures; call wait() (ember leaves torch.futures out)")

    def __repr__(self):
        state = "done" if self.is_completed() else "running"
        return f"<ember.distributed.Work {self.name} rank={self.rank} {state}>"


def completed_work(name, rank, result=None):
    """A ``Work`` that is already done (a collective that needs no communication)."""
    work = Work(name, rank, None)
    work._finish(result=result)
    return work


def _seconds(timeout):
    if hasattr(timeout, "total_seconds"):
        return timeout.total_seconds()
    return float(timeout)
