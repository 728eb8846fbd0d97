"""Tests for ember/distributed/collectives.py in one process (a world of one rank).

Many-rank runs against NumPy are in tests/plugins/mpi/test_collectives.py; here the
API itself: signatures, in-place results, async Work, non-contiguous tensors, errors.
"""

import numpy as np
import pytest

import ember
import ember.distributed as dist
from ember.distributed import ReduceOp

DTYPES = [ember.float32, ember.float64, ember.int64]


def sample(dtype, shape=(2, 3)):
    return ember.arange(1, 1 + int(np.prod(shape))).reshape(shape).to(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", list(ReduceOp))
def test_all_reduce_of_one_rank_is_the_identity(world, dtype, op):
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and dtype.is_floating_point:
        with pytest.raises(RuntimeError, match=f"Cannot use {op} with floating-point tensors"):
            dist.all_reduce(sample(dtype), op=op)
        return
    t = sample(dtype)
    before = t._version
    assert dist.all_reduce(t, op=op) is None
    assert t.tolist() == sample(dtype).tolist() and t.dtype == dtype
    assert t._version > before  # an in-place write


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_collective_on_one_rank(world, dtype):
    x = sample(dtype)
    for fn in (lambda: dist.broadcast(x, src=0), lambda: dist.reduce(x, dst=0),
               lambda: dist.broadcast(x, group_src=0), lambda: dist.barrier()):
        assert fn() is None
    assert x.tolist() == sample(dtype).tolist()
    out = ember.zeros(1, 2, 3, dtype=dtype)
    dist.all_gather_into_tensor(out, x)
    assert out[0].tolist() == x.tolist()
    flat = ember.zeros(2, 3, dtype=dtype)  # concatenated on dim 0 works too
    dist.all_gather_into_tensor(flat, x)
    assert flat.tolist() == x.tolist()
    pieces = [ember.zeros(2, 3, dtype=dtype)]
    dist.all_gather(pieces, x)
    assert pieces[0].tolist() == x.tolist()
    scattered = ember.zeros(2, 3, dtype=dtype)
    dist.reduce_scatter_tensor(scattered, x.unsqueeze(0))
    assert scattered.tolist() == x.tolist()
    dist.reduce_scatter(scattered, [x * 2])
    assert scattered.tolist() == (x * 2).tolist()
    gathered = [ember.zeros(2, 3, dtype=dtype)]
    dist.gather(x, gathered, dst=0)
    assert gathered[0].tolist() == x.tolist()
    target = ember.zeros(2, 3, dtype=dtype)
    dist.scatter(target, [x], src=0)
    assert target.tolist() == x.tolist()
    swapped = ember.zeros(2, 3, dtype=dtype)
    dist.all_to_all_single(swapped, x)
    assert swapped.tolist() == x.tolist()
    outs = [ember.zeros(2, 3, dtype=dtype)]
    dist.all_to_all(outs, [x])
    assert outs[0].tolist() == x.tolist()


def test_a_non_contiguous_tensor_is_written_back_in_place(world):
    base = ember.arange(12.0).reshape(3, 4)
    view = base.t()[1:]  # non-contiguous, shares base's memory
    dist.all_reduce(view, op=ReduceOp.PRODUCT)
    out = ember.zeros(1, 3, 3)
    dist.all_gather_into_tensor(out, view)
    assert out[0].tolist() == base.t()[1:].tolist()
    target = ember.zeros(4, 3).t()
    dist.scatter(target, [ember.ones(3, 4)], src=0)
    assert target.tolist() == ember.ones(3, 4).tolist()


def test_async_op_returns_a_work(world):
    t = ember.ones(4)
    work = dist.all_reduce(t, async_op=True)
    assert isinstance(work, dist.Work)
    assert work.wait() is True
    assert work.is_completed() and work.is_success() and work.exception() is None
    assert dist.barrier(async_op=True).wait()


def test_point_to_point_needs_another_rank(world):
    with pytest.raises(ValueError, match="destination rank should not be the same"):
        dist.send(ember.ones(2), dst=0)
    with pytest.raises(ValueError, match="dst rank 3 is not part of group"):
        dist.send(ember.ones(2), dst=3)


def test_a_work_that_never_finishes_times_out_naming_the_rank():
    work = dist.Work("all_reduce", rank=5, timeout=0.05)
    with pytest.raises(dist.DistBackendError, match=r"\[rank 5\] all_reduce timed out after 0.05 s"):
        work.wait()


def test_bad_arguments_are_refused_like_torch(world):
    x = ember.ones(2, 3)
    with pytest.raises(TypeError, match="op must be an ember.distributed.ReduceOp"):
        dist.all_reduce(x, op="sum")
    with pytest.raises(TypeError, match="all_reduce's tensor must be an ember.Tensor"):
        dist.all_reduce(np.ones(3))
    with pytest.raises(ValueError, match=r"output tensor must have shape \(1, 2, 3\) or \(2, 3\)"):
        dist.all_gather_into_tensor(ember.zeros(4, 3), x)
    with pytest.raises(ValueError, match="tensor_list must be a list of 1 tensors"):
        dist.all_gather([ember.zeros(2, 3)] * 2, x)
    with pytest.raises(ValueError, match="same dtype"):
        dist.all_gather([ember.zeros(2, 3, dtype=ember.float64)], x)
    with pytest.raises(ValueError, match="Can not specify both src and group_src"):
        dist.broadcast(x, src=0, group_src=0)
    with pytest.raises(ValueError, match="input_split_sizes .* must be 1 non-negative sizes"):
        dist.all_to_all_single(ember.zeros(2, 3), x, input_split_sizes=[1, 1])


def test_collectives_need_init(monkeypatch):
    assert not dist.is_initialized()
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.all_reduce(ember.ones(1))
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.get_rank()
