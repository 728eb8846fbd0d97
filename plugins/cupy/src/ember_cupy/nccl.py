"""``NCCLBackend``: the collectives of ``ember.distributed`` on CUDA tensors, through NCCL.

PyTorch counterpart: torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (v2.13); the
design is ChainerMN's: CuPy's ``cupy.cuda.nccl.NcclCommunicator``, whose unique id rank 0
creates and shares with the others over MPI (mpi4py, from ember-mpi).

Each rank uses the GPU ``LOCAL_RANK`` (set by ``ember run``). Collectives are queued on
one CUDA stream per group, in issue order, so they run in the same order on every rank;
a collective's ``Work`` completes when an event recorded after it has passed, and
``wait`` polls that event against the group's timeout. NCCL has no bitwise reductions
(``BAND``, ``BOR``, ``BXOR`` raise) and no scatter or gather: those are made of
point-to-point sends inside a NCCL group. ember checks no shapes across ranks here (the
MPI backend does, NOTE [ Ranks must agree ] in ember_mpi/process_group.py); NCCL itself
hangs on mismatched counts, which the timeout turns into an error.
"""

import os
import time

from ember.distributed.backend import CommBackend
from ember.distributed.errors import DistBackendError
from ember.distributed.work import Work


def create_world(timeout):
    """Join the NCCL world: the factory behind ``init_process_group("nccl")``."""
    import cupy
    from cupy.cuda import nccl
    from mpi4py import MPI

    world = MPI.COMM_WORLD
    cupy.cuda.Device(int(os.environ.get("LOCAL_RANK", world.Get_rank()))).use()
    unique_id = nccl.get_unique_id() if world.Get_rank() == 0 else None
    unique_id = world.bcast(unique_id, root=0)
    comm = nccl.NcclCommunicator(world.Get_size(), unique_id, world.Get_rank())
    return NCCLBackend(comm, world.Get_rank(), world.Get_size(), timeout, world)


def _dtype(array):
    from cupy.cuda import nccl

    table = {"float16": nccl.NCCL_FLOAT16, "float32": nccl.NCCL_FLOAT32, "float64": nccl.NCCL_FLOAT64,
             "int32": nccl.NCCL_INT32, "int64": nccl.NCCL_INT64, "uint8": nccl.NCCL_UINT8, "int8": nccl.NCCL_INT8}
    if array.dtype.name not in table:
        raise TypeError(f"NCCL cannot reduce {array.dtype.name} tensors")
    return table[array.dtype.name]


def _op(op):
    from cupy.cuda import nccl

    from ember.distributed.reduce_op import ReduceOp

    table = {ReduceOp.SUM: nccl.NCCL_SUM, ReduceOp.PRODUCT: nccl.NCCL_PROD, ReduceOp.MIN: nccl.NCCL_MIN,
             ReduceOp.MAX: nccl.NCCL_MAX, ReduceOp.AVG: nccl.NCCL_AVG}
    if op not in table:
        raise RuntimeError(f"the 'nccl' backend does not support {op}")
    return table[op]


class NCCLWork(Work):
    """Done when the CUDA event recorded after the collective has passed."""

    def __init__(self, name, rank, timeout, event):
        super().__init__(name, rank, timeout)
        self._event = event

    def is_completed(self):
        if not self._done.is_set() and self._event.done:
            self._finish()
        return self._done.is_set()

    def wait(self, timeout=None):
        limit = self.timeout if timeout is None else getattr(timeout, "total_seconds", lambda: timeout)()
        deadline = time.monotonic() + limit
        while not self.is_completed():
            if time.monotonic() > deadline:
                raise DistBackendError(f"[rank {self.rank}] {self.name} timed out after {limit:g} s (NCCL)")
            time.sleep(0.0001)
        return super().wait(0)


class NCCLBackend(CommBackend):
    """One NCCL communicator, its stream, and the MPI communicator that set it up."""

    name = "nccl"

    def __init__(self, comm, rank, size, timeout, mpi_comm):
        import cupy

        self.comm, self._rank, self._size, self.timeout, self.mpi_comm = comm, rank, size, timeout, mpi_comm
        self.stream = cupy.cuda.Stream(non_blocking=True)

    def rank(self):
        return self._rank

    def size(self):
        return self._size

    def _run(self, name, launch):
        import cupy

        # the collective must see the caller's writes: order the group's stream after the current one
        self.stream.wait_event(cupy.cuda.get_current_stream().record())
        launch(self.stream.ptr)
        return NCCLWork(name, self._rank, self.timeout, self.stream.record())

    def allreduce(self, array, op, blocking=False):
        return self._run("all_reduce", lambda s: self.comm.allReduce(
            array.data.ptr, array.data.ptr, array.size, _dtype(array), _op(op), s))

    def broadcast(self, array, src, blocking=False):
        return self._run("broadcast", lambda s: self.comm.bcast(array.data.ptr, array.size, _dtype(array), src, s))

    def reduce(self, array, dst, op):
        return self._run("reduce", lambda s: self.comm.reduce(
            array.data.ptr, array.data.ptr, array.size, _dtype(array), _op(op), dst, s))

    def allgather(self, output, array):
        return self._run("all_gather", lambda s: self.comm.allGather(
            array.data.ptr, output.data.ptr, array.size, _dtype(array), s))

    def reduce_scatter(self, output, array, op):
        return self._run("reduce_scatter", lambda s: self.comm.reduceScatter(
            array.data.ptr, output.data.ptr, output.size, _dtype(output), _op(op), s))

    def _grouped(self, name, pairs):
        """Point-to-point transfers ``(send?, array, peer)`` as one NCCL group."""
        from cupy.cuda import nccl

        def launch(s):
            nccl.groupStart()
            for sending, array, peer in pairs:
                if sending:
                    self.comm.send(array.data.ptr, array.size, _dtype(array), peer, s)
                else:
                    self.comm.recv(array.data.ptr, array.size, _dtype(array), peer, s)
            nccl.groupEnd()
        return self._run(name, launch)

    def gather(self, output, array, dst):
        if self._rank != dst:
            return self._grouped("gather", [(True, array, dst)])
        output[dst][...] = array
        return self._grouped("gather", [(False, output[r], r) for r in range(self._size) if r != dst])

    def scatter(self, output, array, src):
        if self._rank != src:
            return self._grouped("scatter", [(False, output, src)])
        output[...] = array[src]
        return self._grouped("scatter", [(True, array[r], r) for r in range(self._size) if r != src])

    def alltoall(self, output, array, output_splits, input_splits):
        starts_in = [sum(input_splits[:r]) for r in range(self._size)]
        starts_out = [sum(output_splits[:r]) for r in range(self._size)]
        pairs = []
        for r in range(self._size):
            pairs.append((True, array[starts_in[r]:starts_in[r] + input_splits[r]], r))
            pairs.append((False, output[starts_out[r]:starts_out[r] + output_splits[r]], r))
        return self._grouped("all_to_all", pairs)

    def barrier(self):
        import cupy

        return self.allreduce(cupy.zeros(1, dtype=cupy.float32), _sum())

    def send(self, array, dst, tag):
        return self._grouped("send", [(True, array, dst)])

    def recv(self, array, src, tag):
        if src is None:
            raise RuntimeError("the 'nccl' backend cannot receive from any source: pass src")
        work = self._grouped("recv", [(False, array, src)])
        work._result = src
        return work

    def split(self, ranks):
        from cupy.cuda import nccl
        from mpi4py import MPI

        member = self._rank in ranks
        child = self.mpi_comm.Split(0 if member else MPI.UNDEFINED, self._rank)
        if not member:
            return None
        unique_id = child.bcast(nccl.get_unique_id() if child.Get_rank() == 0 else None, root=0)
        comm = nccl.NcclCommunicator(child.Get_size(), unique_id, child.Get_rank())
        return NCCLBackend(comm, child.Get_rank(), child.Get_size(), self.timeout, child)

    def shutdown(self):
        self.stream.synchronize()
        self.comm.destroy()


def _sum():
    from ember.distributed.reduce_op import ReduceOp

    return ReduceOp.SUM
