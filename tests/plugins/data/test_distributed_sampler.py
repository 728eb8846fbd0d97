"""Tests for ember_data/distributed.py with ember.distributed: the default process group
gives ``num_replicas`` and ``rank`` (torch's behaviour), ahead of the environment.
(Index-for-index parity with torch's sampler is in test_seeded_samplers.py and
test_sampler.py.)"""

import pytest
import torch.utils.data as tud

import ember.distributed as dist
from ember_data import DistributedSampler


@pytest.fixture
def world(monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "1")
    monkeypatch.setenv("RANK", "0")
    dist.init_process_group("mpi")
    yield
    dist.destroy_process_group()


def test_the_process_group_gives_replicas_and_rank(world, monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "5")  # read by init only: the group wins afterwards
    ours = DistributedSampler(list(range(9)), seed=4)
    theirs = tud.DistributedSampler(list(range(9)), num_replicas=1, rank=0, seed=4)
    assert (ours.num_replicas, ours.rank) == (1, 0)
    assert list(ours) == list(theirs)


def test_without_a_group_or_environment_the_error_says_what_to_do(monkeypatch):
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    with pytest.raises(RuntimeError, match="pass them, call ember.distributed.init_process_group, or set WORLD_SIZE"):
        DistributedSampler(list(range(3)))
