"""Tests for ember/distributed/fsdp/fully_sharded_data_parallel.py and flat_param.py:
FSDP on 2 and 3 ranks (3 pads every unit unevenly) in one mpiexec job each, running
fsdp_checks.py against torch in one process on the whole batch and against torch's
FSDP over gloo. In one process: the world-of-one switch to NO_SHARD, and the errors."""

import json
import pathlib
import warnings

import pytest
import torch
from mpi_jobs import mpiexec

import ember
import ember.distributed as dist
from ember.distributed.fsdp import FullyShardedDataParallel as FSDP
from ember.distributed.fsdp import ShardingStrategy

CHECKS = pathlib.Path(__file__).with_name("fsdp_checks.py")


@pytest.mark.slow
@pytest.mark.parametrize("ranks", [2, 3])
def test_fsdp_training_equals_one_process_on_the_whole_batch(tmp_path, ranks):
    job = mpiexec(ranks, CHECKS, tmp_path, timeout=300)
    assert job.returncode == 0, job.stdout + job.stderr
    for rank in range(ranks):
        report = json.loads((tmp_path / f"rank-{rank}.json").read_text())
        assert report["failures"] == [], f"rank {rank}:\n" + "\n".join(report["failures"])
        assert len(report["checks"]) == 15


def test_a_world_of_one_switches_to_no_shard_as_torch(world):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = FSDP(ember.nn.Linear(3, 2))
    assert model.sharding_strategy is ShardingStrategy.NO_SHARD
    assert str(caught[0].message) == ("FSDP is switching to use `NO_SHARD` instead of ShardingStrategy.FULL_SHARD "
                                      "since the world size is 1.")
    assert [n for n, _ in model.named_parameters()] == ["_fsdp_wrapped_module._flat_param"]
    assert list(model.state_dict()) == ["weight", "bias"]
    assert model.module.weight.shape == (2, 3)  # a stand-in outside forward


def test_one_rank_fsdp_gives_the_modules_own_gradients(world):
    torch.manual_seed(0)
    reference = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.Tanh(), ember.nn.Linear(4, 2))
    model.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy()) for k, v in reference.state_dict().items()})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fsdp = FSDP(model)
    x = torch.randn(5, 3)
    reference(x).square().sum().backward()
    fsdp(ember.from_numpy(x.numpy())).square().sum().backward()
    expected = torch.cat([p.grad.reshape(-1) for p in reference.parameters()]).numpy()
    (flat,) = fsdp.parameters()
    assert flat.grad.numpy() == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("option, value", [("use_orig_params", True), ("mixed_precision", object()),
                                           ("sharding_strategy", ShardingStrategy.HYBRID_SHARD)])
def test_left_out_options_are_one_clear_error(world, option, value):
    with pytest.raises(NotImplementedError, match=f"ember leaves out {option}"):
        FSDP(ember.nn.Linear(2, 2), **{option: value})


def test_fsdp_needs_a_process_group():
    assert not dist.is_initialized()
    with pytest.raises(RuntimeError, match="Default process group has not been initialized"):
        FSDP(ember.nn.Linear(2, 2))
