"""Tests for ember_cupy/nccl.py: the "nccl" backend on CUDA tensors, in a world of one
rank (tests with more ranks need one GPU per rank). Skipped where no CUDA device exists."""

import numpy as np
import pytest

import ember
import ember.distributed as dist
from ember.distributed import ReduceOp

pytestmark = pytest.mark.skipif(not ember.cuda.is_available(), reason="needs a CUDA device")


@pytest.fixture
def nccl_world(monkeypatch):
    for variable in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(variable, raising=False)
    dist.init_process_group("nccl")
    yield
    dist.destroy_process_group()


def test_the_cuda_device_type_picks_nccl(nccl_world):
    assert dist.get_backend() == "nccl"


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.int64])
def test_collectives_of_one_rank_on_the_gpu(nccl_world, dtype):
    x = ember.arange(6).reshape(2, 3).to(dtype).to("cuda")
    expected = x.cpu().numpy()
    for op in (ReduceOp.SUM, ReduceOp.MAX, ReduceOp.AVG):
        dist.all_reduce(x, op=op)
        np.testing.assert_array_equal(x.cpu().numpy(), expected)
    dist.broadcast(x, src=0)
    out = ember.zeros(1, 2, 3, dtype=dtype, device="cuda")
    dist.all_gather_into_tensor(out, x)
    np.testing.assert_array_equal(out.cpu().numpy()[0], expected)
    work = dist.all_reduce(x, async_op=True)
    assert work.wait() and work.is_completed()
    dist.barrier()


def test_bitwise_reductions_are_refused(nccl_world):
    with pytest.raises(RuntimeError, match="does not support ReduceOp.BAND"):
        dist.all_reduce(ember.ones(2, dtype=ember.int64, device="cuda"), op=ReduceOp.BAND)
