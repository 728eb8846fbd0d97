"""Tests for ember/distributed/distributed_c10d.py: init, ranks, groups, in one process."""

import datetime

import pytest

import ember.distributed as dist


def test_a_world_of_one(world):
    assert dist.is_available() and dist.is_initialized()
    assert (dist.get_rank(), dist.get_world_size(), dist.get_backend()) == (0, 1, "mpi")
    assert dist.get_process_group_ranks(world) == [0] and dist.get_global_rank(world, 0) == 0
    assert dist.get_group_rank(world, 0) == 0


def test_init_twice_and_bad_timeout(world):
    with pytest.raises(ValueError, match="initialize the default process group twice"):
        dist.init_process_group("mpi")
    dist.destroy_process_group()
    assert not dist.is_initialized() and dist.group.WORLD is None
    with pytest.raises(TypeError, match="timeout argument to be of type datetime.timedelta"):
        dist.init_process_group("mpi", timeout=5)


def test_a_rank_or_world_size_the_backend_disagrees_with_is_an_error(monkeypatch):
    with pytest.raises(dist.DistError, match=r"world_size is 2, but the 'mpi' backend started this process as "
                                              r"rank 0 of 1: start the script with `ember run"):
        dist.init_process_group("mpi", world_size=2, rank=0)
    monkeypatch.setenv("RANK", "1")
    with pytest.raises(dist.DistError, match="the environment variable RANK is 1"):
        dist.init_process_group("mpi")
    assert not dist.is_initialized()


def test_new_group(world):
    group = dist.new_group([0], timeout=datetime.timedelta(seconds=3))
    assert dist.get_rank(group) == 0 and dist.get_world_size(group) == 1 and group._timeout == 3
    with pytest.raises(ValueError, match="rank 1 is out of range for a world of size 1"):
        dist.new_group([0, 1])
    with pytest.raises(ValueError, match="Group rank 2 is not part of group"):
        dist.get_global_rank(group, 2)
    dist.destroy_process_group(group)
    with pytest.raises(TypeError, match="group must be an ember.distributed.ProcessGroup"):
        dist.get_rank("world")
