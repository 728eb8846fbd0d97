"""Fixtures of the ember.distributed tests: a world of one rank, through ember-mpi."""

import pytest

import ember.distributed as dist


@pytest.fixture
def world(monkeypatch):
    """The default process group of this single process (MPI's singleton world)."""
    for variable in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(variable, raising=False)
    dist.init_process_group("mpi")
    yield dist.group.WORLD
    if dist.is_initialized():
        dist.destroy_process_group()
