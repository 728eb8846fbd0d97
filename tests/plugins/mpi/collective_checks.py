"""Run by every rank of an mpiexec job (tests/plugins/mpi/test_collectives.py): each
collective and ReduceOp of ember.distributed on float32, float64 and int64 against a
NumPy reference computed from every rank's inputs. Writes ``rank-<N>.json`` into the
folder given as argv[1]: the names of the checks run and the failures."""

import sys

import numpy as np
from rank_checks import RankChecks  # beside this file: python puts the script's folder on sys.path

import ember
import ember.distributed as dist
from ember.distributed import ReduceOp

dist.init_process_group("mpi")
RANK, SIZE = dist.get_rank(), dist.get_world_size()
DTYPES = {"float32": ember.float32, "float64": ember.float64, "int64": ember.int64}
REDUCE = {ReduceOp.SUM: np.sum, ReduceOp.PRODUCT: np.prod, ReduceOp.MIN: np.min, ReduceOp.MAX: np.max,
          ReduceOp.BAND: np.bitwise_and.reduce, ReduceOp.BOR: np.bitwise_or.reduce,
          ReduceOp.BXOR: np.bitwise_xor.reduce}
checks = RankChecks()


def data(rank, dtype, shape=(3, 4), salt=0):
    """Rank ``rank``'s input (every rank can compute every other rank's)."""
    rng = np.random.default_rng(1000 * salt + rank)
    if dtype == "int64":
        return rng.integers(-4, 9, size=shape).astype(np.int64)  # small: PRODUCT stays in range
    return rng.standard_normal(shape).astype(dtype)


def reference(op, arrays):
    stacked = np.stack(arrays)
    if op is ReduceOp.AVG:
        total = stacked.sum(axis=0)
        if stacked.dtype.kind == "i":
            return np.sign(total) * (np.abs(total) // SIZE)
        return total / SIZE
    return REDUCE[op](stacked, axis=0)


def same(got, expected, dtype):
    got = got.numpy() if hasattr(got, "numpy") else np.asarray(got)
    tol = {"float32": 1e-5, "float64": 1e-12}.get(dtype, 0)
    return got.shape == np.shape(expected) and np.allclose(got, expected, rtol=tol, atol=tol)




for dtype_name, dtype in DTYPES.items():
    everyone = [data(r, dtype_name) for r in range(SIZE)]
    mine = everyone[RANK]
    ops = [op for op in ReduceOp if dtype_name == "int64" or op not in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR)]
    for op in ops:
        @checks.run(f"all_reduce {op} {dtype_name}")
        def _():
            t = ember.from_numpy(mine.copy())
            dist.all_reduce(t, op=op)
            return same(t, reference(op, everyone), dtype_name) or (t.tolist(), reference(op, everyone))

        @checks.run(f"reduce {op} {dtype_name}")
        def _():
            t = ember.from_numpy(mine.copy())
            dist.reduce(t, dst=SIZE - 1, op=op)
            expected = reference(op, everyone) if RANK == SIZE - 1 else mine
            return same(t, expected, dtype_name)

        @checks.run(f"reduce_scatter_tensor {op} {dtype_name}")
        def _():
            big = [data(r, dtype_name, (SIZE, 2, 3), salt=7) for r in range(SIZE)]
            out = ember.zeros(2, 3, dtype=dtype)
            dist.reduce_scatter_tensor(out, ember.from_numpy(big[RANK].copy()), op=op)
            return same(out, reference(op, [b[RANK] for b in big]), dtype_name)

    @checks.run(f"all_reduce async, non-contiguous {dtype_name}")
    def _():
        base = ember.from_numpy(np.ascontiguousarray(mine.T))
        work = dist.all_reduce(base.t(), async_op=True)
        work.wait()
        return work.is_completed() and same(base.t(), reference(ReduceOp.SUM, everyone), dtype_name)

    @checks.run(f"broadcast {dtype_name}")
    def _():
        t = ember.from_numpy(mine.copy())
        dist.broadcast(t, src=SIZE - 1)
        return same(t, everyone[SIZE - 1], dtype_name)

    @checks.run(f"all_gather and all_gather_into_tensor {dtype_name}")
    def _():
        pieces = [ember.zeros(3, 4, dtype=dtype) for _ in range(SIZE)]
        dist.all_gather(pieces, ember.from_numpy(mine.copy()))
        stacked = ember.zeros(SIZE, 3, 4, dtype=dtype)
        dist.all_gather_into_tensor(stacked, ember.from_numpy(mine.copy()))
        flat = ember.zeros(SIZE * 3, 4, dtype=dtype)
        dist.all_gather_into_tensor(flat, ember.from_numpy(mine.copy()), async_op=True).wait()
        return (all(same(p, e, dtype_name) for p, e in zip(pieces, everyone))
                and same(stacked, np.stack(everyone), dtype_name) and same(flat, np.concatenate(everyone), dtype_name))

    @checks.run(f"reduce_scatter (list) {dtype_name}")
    def _():
        lists = [[data(r, dtype_name, (2,), salt=10 + k) for k in range(SIZE)] for r in range(SIZE)]
        out = ember.zeros(2, dtype=dtype)
        dist.reduce_scatter(out, [ember.from_numpy(a) for a in lists[RANK]])
        return same(out, np.sum([lists[r][RANK] for r in range(SIZE)], axis=0), dtype_name)

    @checks.run(f"gather and scatter {dtype_name}")
    def _():
        gathered = [ember.zeros(3, 4, dtype=dtype) for _ in range(SIZE)] if RANK == 0 else None
        dist.gather(ember.from_numpy(mine.copy()), gathered, dst=0)
        ok = RANK != 0 or all(same(g, e, dtype_name) for g, e in zip(gathered, everyone))
        pieces = [data(SIZE - 1, dtype_name, (2, 2), salt=20 + k) for k in range(SIZE)]
        out = ember.zeros(2, 2, dtype=dtype)
        dist.scatter(out, [ember.from_numpy(p) for p in pieces] if RANK == SIZE - 1 else None, src=SIZE - 1)
        return ok and same(out, pieces[RANK], dtype_name)

    @checks.run(f"all_to_all_single even and uneven, all_to_all {dtype_name}")
    def _():
        rows = [[r + k + 1 for k in range(SIZE)] for r in range(SIZE)]  # rank r sends rows[r][k] rows to k
        sent = [data(r, dtype_name, (sum(rows[r]), 2), salt=30) for r in range(SIZE)]

        def piece(r, k):
            start = sum(rows[r][:k])
            return sent[r][start:start + rows[r][k]]
        out = ember.zeros(sum(rows[r][RANK] for r in range(SIZE)), 2, dtype=dtype)
        dist.all_to_all_single(out, ember.from_numpy(sent[RANK].copy()),
                               output_split_sizes=[rows[r][RANK] for r in range(SIZE)],
                               input_split_sizes=rows[RANK])
        uneven = same(out, np.concatenate([piece(r, RANK) for r in range(SIZE)]), dtype_name)
        even_in = [data(r, dtype_name, (SIZE * 2, 3), salt=40) for r in range(SIZE)]
        even_out = ember.zeros(SIZE * 2, 3, dtype=dtype)
        dist.all_to_all_single(even_out, ember.from_numpy(even_in[RANK].copy()))
        even = same(even_out, np.concatenate([even_in[r][2 * RANK:2 * RANK + 2] for r in range(SIZE)]), dtype_name)
        outs = [ember.zeros(rows[r][RANK], 2, dtype=dtype) for r in range(SIZE)]
        dist.all_to_all(outs, [ember.from_numpy(piece(RANK, k).copy()) for k in range(SIZE)])
        listed = all(same(o, piece(r, RANK), dtype_name) for r, o in enumerate(outs))
        return (uneven and even and listed) or (uneven, even, listed)

    @checks.run(f"send/recv ring, isend/irecv, recv from any source {dtype_name}")
    def _():
        right, left = (RANK + 1) % SIZE, (RANK - 1) % SIZE
        got = ember.zeros(3, 4, dtype=dtype)
        if RANK % 2 == 0:
            dist.send(ember.from_numpy(mine.copy()), dst=right)
            source = dist.recv(got, src=left)
        else:
            source = dist.recv(got, src=left)
            dist.send(ember.from_numpy(mine.copy()), dst=right)
        sends = dist.isend(ember.from_numpy(mine.copy()), dst=right, tag=7)
        got2 = ember.zeros(3, 4, dtype=dtype)
        receives = dist.irecv(got2, tag=7)
        sends.wait()
        receives.wait()
        return (source == left and same(got, everyone[left], dtype_name) and same(got2, everyone[left], dtype_name)
                and receives.is_completed())


@checks.run("barrier and new_group (members and a non-member)")
def _():
    dist.barrier()
    members = [0, SIZE - 1]
    group = dist.new_group(members)
    t = ember.tensor([float(RANK + 1)])
    result = dist.all_reduce(t, group=group)
    if RANK in members:
        return (dist.get_rank(group) == members.index(RANK) and dist.get_world_size(group) == 2
                and t.item() == 1 + SIZE)
    return result is None and dist.get_rank(group) == -1 and t.item() == RANK + 1


@checks.run("broadcast from a group's rank uses the global src")
def _():
    group = dist.new_group(list(range(1, SIZE)))
    t = ember.tensor([float(RANK)])
    dist.broadcast(t, src=SIZE - 1, group=group)
    return t.item() == (RANK if RANK == 0 else SIZE - 1)


@checks.run("object collectives")
def _():
    objects = [{"rank": RANK, "t": ember.arange(RANK + 1)}, f"from {RANK}"]
    dist.broadcast_object_list(objects, src=1)
    gathered = [None] * SIZE
    dist.all_gather_object(gathered, (RANK, "x" * RANK))
    return objects[0]["t"].tolist() == [0, 1] and objects[1] == "from 1" and gathered == [
        (r, "x" * r) for r in range(SIZE)]


@checks.run("mismatched shapes give one clear error on every rank, and the group still works")
def _():
    try:
        dist.all_reduce(ember.ones(RANK + 2))
        return "no error"
    except dist.DistBackendError as exc:
        text = str(exc)
        expected = [f"rank {r}: all_reduce of float32 ({r + 2},) op=SUM" for r in range(SIZE)]
        if not all(e in text for e in expected) or f"[rank {RANK}]" not in text:
            return text
    t = ember.ones(2)
    dist.all_reduce(t)
    return t.tolist() == [SIZE, SIZE]


@checks.run("mismatched dtypes and collectives are errors")
def _():
    errors = 0
    try:
        dist.all_reduce(ember.ones(2, dtype=ember.float64 if RANK else ember.float32))
    except dist.DistBackendError as exc:
        errors += "float64" in str(exc) and "float32" in str(exc)
    try:
        if RANK == 0:
            dist.broadcast(ember.ones(2), src=0)
        else:
            dist.all_reduce(ember.ones(2))
    except dist.DistBackendError as exc:
        errors += "broadcast" in str(exc) and "all_reduce" in str(exc)
    try:
        dist.all_to_all_single(ember.zeros(SIZE), ember.zeros(SIZE + 1),
                               input_split_sizes=[2] + [1] * (SIZE - 1))
    except dist.DistBackendError as exc:
        errors += "split sizes disagree" in str(exc)
    return errors == 3 or errors


@checks.run("a receive of the wrong size is an error")
def _():
    if RANK == 0:
        dist.send(ember.ones(5), dst=1)
    elif RANK == 1:
        try:
            dist.recv(ember.zeros(3), src=0)
            return "no error"
        except dist.DistBackendError as exc:
            return "recv" in str(exc) or str(exc)
    return True


dist.barrier()
checks.write(sys.argv[1], RANK, size=SIZE)
dist.destroy_process_group()
