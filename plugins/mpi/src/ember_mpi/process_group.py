"""``MPIBackend``: the collectives of one process group, run by MPI on NumPy buffers.

PyTorch counterpart: torch/csrc/distributed/c10d/ProcessGroupMPI.cpp (v2.13).

# NOTE [ One worker thread per group ]
# MPI requires every rank to enter the collectives of a communicator in the same order.
# Like ProcessGroupMPI, each group owns one worker thread and a FIFO queue: a
# collective is queued with its ``Work`` and the caller goes on (``async_op=True``, or
# DDP's bucket all-reduces during backward) while the worker runs the blocking MPI call.
# mpi4py releases the GIL inside MPI and NumPy inside its kernels, so communication
# overlaps computation. The caller waits on the ``Work`` with a deadline, so a
# collective that never completes raises instead of hanging (MPI itself has no
# timeouts). Point-to-point sends and receives are not queued (a send waiting on the
# peer's receive would block the queue both ways): they are MPI's non-blocking
# Isend/Irecv, polled by ``RequestWork.wait``; this needs MPI_THREAD_MULTIPLE, which
# mpi4py asks for by default.
#
# A collective the caller waits for at once (``async_op=False``: all_reduce and
# broadcast) skips the thread when the queue is empty: it runs on the calling thread as
# MPI's non-blocking call, polled against the deadline. Measured on 2 ranks of a 2-core
# machine, a 100 MiB Allreduce driven from a second thread took about twice as long as
# from the thread that owns the array, which this path avoids; the order of the
# collectives is kept, since nothing is queued ahead of it.

# NOTE [ Ranks must agree ]
# MPI trusts the ranks to pass matching buffers: a longer buffer on one rank either
# hangs or corrupts memory. Before each collective the ranks all-gather a small
# signature (collective, dtype, shape, root, op) and every rank raises the same error,
# naming each rank's shape, if they disagree. torch checks this only under
# TORCH_DISTRIBUTED_DEBUG=DETAIL; ember always does (one tiny extra message per call).

# NOTE [ A stuck group ends the job ]
# After a timeout the worker thread is still inside MPI, and MPI_Finalize at exit
# would wait for it forever. The group is marked broken (later calls fail at once), and
# at exit, or on an uncaught exception in a job of more than one rank, the process
# calls MPI_Abort: mpiexec then ends every rank, so nothing is left running.
"""

import atexit
import os
import queue
import sys
import threading
import time

import numpy as np

from ember.distributed.backend import CommBackend
from ember.distributed.errors import DistBackendError
from ember.distributed.work import Work
from ember_mpi import agreement
from ember_mpi.reductions import WIDENED, finish_average, mpi_op

_STOP = object()


class MPIBackend(CommBackend):
    """One MPI communicator (a duplicate of the parent's) and the thread that drives it."""

    name = "mpi"
    _broken_groups = []  # groups with a timed-out collective: see NOTE [ A stuck group ends the job ]

    def __init__(self, comm, timeout):
        self.comm = comm
        self.timeout = timeout
        self._rank = comm.Get_rank()
        self._size = comm.Get_size()
        self.global_rank = _world_rank()
        self.broken = None  # the message of the first timeout
        self._submitted = 0  # incremented by callers only
        self._finished = 0  # incremented by the worker only: the difference is what is queued or running
        self._queue = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=f"ember-mpi-{self._rank}", daemon=True)
        self._thread.start()

    @classmethod
    def world(cls, timeout):
        from mpi4py import MPI

        backend = cls(MPI.COMM_WORLD.Dup(), timeout)
        if backend._size > 1:
            _install_abort_on_error()
        return backend

    def rank(self):
        return self._rank

    def size(self):
        return self._size

    # --- the worker -------------------------------------------------------------------
    def _run(self):
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            work, job = item
            try:
                result = job()
            except Exception as exc:  # delivered to the waiting caller
                # before waking the caller, who may check _idle() at once
                self._finished += 1
                work._finish(exception=exc)
            else:
                self._finished += 1
                work._finish(result=result)

    def _check_not_broken(self, name):
        if self.broken is not None:
            raise DistBackendError(f"[rank {self.global_rank}] {name}: this process group is broken: "
                                   f"{self.broken}")

    def _submit(self, name, job, signature=None):
        """Queue ``job`` (after the agreement check on ``signature``); returns its Work."""
        self._check_not_broken(name)
        self._submitted += 1
        work = Work(name, self.global_rank, self.timeout)
        work._on_timeout = self._mark_broken

        def checked():
            if signature is not None:
                agreement.check(self.comm, name, signature, self.global_rank)
            return job()
        self._queue.put((work, checked))
        return work

    def _inline(self, name, start, signature, finish=None):
        """Run a collective on the calling thread (NOTE [ One worker thread per group ]):
        the agreement check, then ``start()``'s MPI request, polled until the deadline."""
        self._check_not_broken(name)
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        records = np.empty((self._size, signature.size), dtype=np.int64)
        self._poll(self.comm.Iallgather(signature, records), deadline, name)
        agreement.compare(records, name, self.global_rank)
        self._poll(start(), deadline, name)
        if finish is not None:
            finish()
        work = Work(name, self.global_rank, self.timeout)
        work._finish()
        return work

    def _poll(self, request, deadline, name):
        while not request.Test():
            if deadline is not None and time.monotonic() > deadline:
                message = (f"[rank {self.global_rank}] {name} timed out after {self.timeout:g} s: some rank of "
                           f"the group did not reach it (a rank stuck, dead, or running a different collective)")
                self._mark_broken(message)
                raise DistBackendError(message)
            time.sleep(0)  # let other threads (and processes on a busy machine) run

    def _idle(self):
        return self._submitted == self._finished

    def _mark_broken(self, message):
        if self.broken is None:
            self.broken = message
            MPIBackend._broken_groups.append(self)

    # --- collectives ------------------------------------------------------------------
    def allreduce(self, array, op, blocking=False):
        if blocking and self._idle() and array.dtype not in WIDENED:
            from mpi4py import MPI

            return self._inline("all_reduce",
                                lambda: self.comm.Iallreduce(MPI.IN_PLACE, array,
                                                             op=mpi_op(op)),
                                agreement.signature("all_reduce", array, op=op),
                                lambda: finish_average(array, op, self._size))

        def job():
            with _widened(array) as buffer:
                from mpi4py import MPI

                self.comm.Allreduce(MPI.IN_PLACE, buffer, op=mpi_op(op))
                finish_average(buffer, op, self._size)
        return self._submit("all_reduce", job,
                            agreement.signature("all_reduce", array, op=op))

    def broadcast(self, array, src, blocking=False):
        if blocking and self._idle():
            return self._inline("broadcast", lambda: self.comm.Ibcast(array, root=src),
                                agreement.signature("broadcast", array, root=src))
        return self._submit("broadcast", lambda: self.comm.Bcast(array, root=src),
                            agreement.signature("broadcast", array, root=src))

    def reduce(self, array, dst, op):
        def job():
            from mpi4py import MPI

            with _widened(array) as buffer:
                if self._rank == dst:
                    self.comm.Reduce(MPI.IN_PLACE, buffer, op=mpi_op(op), root=dst)
                    finish_average(buffer, op, self._size)
                else:
                    self.comm.Reduce(buffer, None, op=mpi_op(op), root=dst)
        return self._submit("reduce", job, agreement.signature("reduce", array, op=op, root=dst))

    def allgather(self, output, array):
        return self._submit("all_gather", lambda: self.comm.Allgather(array, output),
                            agreement.signature("all_gather", array))

    def reduce_scatter(self, output, array, op):
        def job():
            with _widened(array) as source, _widened(output) as target:
                self.comm.Reduce_scatter_block(source, target, op=mpi_op(op))
                finish_average(target, op, self._size)
        return self._submit("reduce_scatter", job, agreement.signature("reduce_scatter", output, op=op))

    def gather(self, output, array, dst):
        return self._submit("gather", lambda: self.comm.Gather(array, output, root=dst),
                            agreement.signature("gather", array, root=dst))

    def scatter(self, output, array, src):
        return self._submit("scatter", lambda: self.comm.Scatter(array, output, root=src),
                            agreement.signature("scatter", output, root=src))

    def alltoall(self, output, array, output_splits, input_splits):
        row = int(np.prod(array.shape[1:], dtype=np.int64))

        def job():
            agreement.check_splits(self.comm, output_splits, input_splits, self.global_rank)
            send_counts = [s * row for s in input_splits]
            recv_counts = [s * row for s in output_splits]
            self.comm.Alltoallv([array, (send_counts, _offsets(send_counts))],
                                [output, (recv_counts, _offsets(recv_counts))])
        return self._submit("all_to_all", job, agreement.signature("all_to_all", array[:0]))

    def barrier(self):
        return self._submit("barrier", self.comm.Barrier, agreement.signature("barrier", None))

    def split(self, ranks):
        from mpi4py import MPI

        member = self._rank in ranks
        work = self._submit("new_group", lambda: self.comm.Split(0 if member else MPI.UNDEFINED, self._rank))
        work.wait()
        child = work._result
        return MPIBackend(child, self.timeout) if member else None

    # --- point to point ---------------------------------------------------------------
    def send(self, array, dst, tag):
        return RequestWork("send", self, self.comm.Isend(array, dest=dst, tag=tag), None)

    def recv(self, array, src, tag):
        from mpi4py import MPI

        source = MPI.ANY_SOURCE if src is None else src
        return RequestWork("recv", self, self.comm.Irecv(array, source=source, tag=tag), array)

    def shutdown(self):
        if self._thread.is_alive() and self.broken is None:
            self._queue.put(_STOP)
            self._thread.join()
            self.comm.Free()


class RequestWork(Work):
    """The Work of a non-blocking send or receive: ``wait`` polls the MPI request."""

    def __init__(self, name, backend, request, array):
        super().__init__(name, backend.global_rank, backend.timeout)
        self._request = request
        self._array = array  # the receive buffer, to check the message's size
        self._backend = backend

    def is_completed(self):
        if not self._done.is_set():
            self._poll()
        return self._done.is_set()

    def _poll(self):
        from mpi4py import MPI

        status = MPI.Status()
        try:
            finished = self._request.Test(status)
        except MPI.Exception as exc:
            self._finish(exception=DistBackendError(f"[rank {self.rank}] {self.name}: {_describe(exc)}"))
            return
        if not finished:
            return
        if self._array is None:
            self._finish()
            return
        count = status.Get_count(MPI._typedict[self._array.dtype.char])
        if count != self._array.size:
            self._finish(exception=DistBackendError(
                f"[rank {self.rank}] recv: the tensor holds {self._array.size} elements but rank "
                f"{status.Get_source()} sent {count}"))
        else:
            self._finish(result=status.Get_source())

    def wait(self, timeout=None):
        limit = self.timeout if timeout is None else (getattr(timeout, "total_seconds", lambda: timeout)())
        deadline = None if limit is None else time.monotonic() + limit
        while not self.is_completed():
            if deadline is not None and time.monotonic() > deadline:
                self._request.Cancel()
                raise DistBackendError(f"[rank {self.rank}] {self.name} timed out after {limit:g} s: the peer "
                                       f"never posted the matching {'recv' if self.name == 'send' else 'send'}")
            time.sleep(0.0002)
        return super().wait(0)


class _widened:
    """A float32 copy of a float16 array for MPI, copied back on exit; else the array itself."""

    def __init__(self, array):
        self.array = array
        wide = WIDENED.get(array.dtype)
        self.copy = None if wide is None else array.astype(wide)

    def __enter__(self):
        return self.array if self.copy is None else self.copy

    def __exit__(self, *exc):
        if self.copy is not None and exc[0] is None:
            self.array[...] = self.copy


def _offsets(counts):
    return [int(x) for x in np.concatenate([[0], np.cumsum(counts)[:-1]])] if counts else []


def _describe(exc):
    try:
        return exc.Get_error_string()
    except Exception:
        return str(exc)


def _world_rank():
    from mpi4py import MPI

    return MPI.COMM_WORLD.Get_rank()


def _install_abort_on_error():
    """NOTE [ A stuck group ends the job ]: abort the MPI job on an uncaught exception."""
    previous = sys.excepthook

    def excepthook(kind, value, traceback):
        previous(kind, value, traceback)
        _abort(f"uncaught {kind.__name__}")
    sys.excepthook = excepthook


def _abort(why):
    """End the job: under ``ember run`` (EMBER_RUN_DIR set) exit this rank and let the
    launcher stop the others (NOTE [ The launcher ends the job ] in
    ember/distributed/run.py); under a bare mpiexec, MPI_Abort."""
    from mpi4py import MPI

    if os.environ.get("EMBER_RUN_DIR"):
        sys.stderr.write(f"[ember-mpi] rank {MPI.COMM_WORLD.Get_rank()}: {why}; ember run stops the other ranks\n")
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)
    sys.stderr.write(f"[ember-mpi] rank {MPI.COMM_WORLD.Get_rank()}: {why}; aborting the MPI job\n")
    sys.stderr.flush()
    MPI.COMM_WORLD.Abort(1)


@atexit.register
def _abort_if_broken():
    if MPIBackend._broken_groups:
        _abort(f"a collective never completed ({MPIBackend._broken_groups[0].broken})")
