"""Tests for ember/nn/parallel/distributed.py and reducer.py: DistributedDataParallel on
2 ranks (one mpiexec job running ddp_checks.py) against big-batch training and against
torch's DDP with gloo; SyncBatchNorm against torch's BatchNorm over the global batch.
In one process: the bucket assignment and the errors."""

import json
import pathlib

import pytest
import torch
import torch.distributed
from mpi_jobs import mpiexec

import ember
import ember.distributed as dist
from ember.nn.parallel import DistributedDataParallel as DDP
from ember.nn.parallel.reducer import compute_bucket_assignment_by_size

CHECKS = pathlib.Path(__file__).with_name("ddp_checks.py")


def test_ddp_on_two_ranks_matches_big_batch_and_torch(tmp_path):
    job = mpiexec(2, CHECKS, tmp_path, timeout=300)
    assert job.returncode == 0, job.stdout + job.stderr
    for rank in range(2):
        report = json.loads((tmp_path / f"rank-{rank}.json").read_text())
        assert report["failures"] == [], f"rank {rank}:\n" + "\n".join(report["failures"])
        assert len(report["checks"]) == 7


@pytest.mark.parametrize("caps", [[2048, 1024], [1024], [1 << 30], [100, 5000, 3000]])
def test_bucket_assignment_is_torchs(caps):
    shapes = [(256,), (256,), (3, 100), (512,), (16, 16), (7,), (2000,), (1,)]
    dtypes = [ember.float32, ember.float64, ember.float32, ember.float32, ember.float64, ember.float32,
              ember.float32, ember.float64]
    params = [ember.zeros(*s, dtype=d) for s, d in zip(shapes, dtypes)]
    twins = [torch.zeros(*s, dtype=getattr(torch, str(d).split(".")[1])) for s, d in zip(shapes, dtypes)]
    expected, _ = torch.distributed._compute_bucket_assignment_by_size(twins, caps, [False] * len(twins))
    assert compute_bucket_assignment_by_size(params, caps) == expected


def test_the_reducer_launches_the_last_layers_first(world):
    model = ember.nn.Sequential(ember.nn.Linear(100, 100), ember.nn.Linear(100, 100), ember.nn.Linear(100, 100))
    ddp = DDP(model, bucket_cap_mb=0.04)
    # 0.04 MB holds a bit more than one layer: buckets close once they reach the cap
    assert [b.indices for b in ddp.reducer.buckets] == [[3, 4, 5], [0, 1, 2]]


@pytest.fixture
def world(monkeypatch):
    for variable in ("RANK", "WORLD_SIZE"):
        monkeypatch.delenv(variable, raising=False)
    dist.init_process_group("mpi")
    yield
    dist.destroy_process_group()


def test_one_rank_ddp_gives_the_modules_own_gradients(world):
    model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.ReLU(), ember.nn.Linear(4, 2))
    ddp = DDP(model, bucket_cap_mb=0.00005)
    assert len(ddp.reducer.buckets) > 1
    x = ember.randn(5, 3)
    ddp(x).sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model(x).sum().backward()
    assert all(ember.equal(a, p.grad) for a, p in zip(grads, model.parameters()))
    assert list(ddp.state_dict()) == ["module." + k for k in model.state_dict()]


def test_ddp_errors(world):
    with pytest.raises(RuntimeError, match="doesn't have any parameter that requires a gradient"):
        DDP(ember.nn.ReLU())
    with pytest.raises(NotImplementedError, match="gradient_as_bucket_view"):
        DDP(ember.nn.Linear(2, 2), gradient_as_bucket_view=True)


def test_ddp_needs_a_process_group():
    with pytest.raises(RuntimeError, match="Default process group has not been initialized"):
        DDP(ember.nn.Linear(2, 2))
