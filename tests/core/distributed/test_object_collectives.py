"""Tests for ember/distributed/object_collectives.py in one process: safe loading."""

import pytest

import ember
import ember.distributed as dist
from ember.serialization import CheckpointError


def test_objects_round_trip(world):
    objects = [{"epoch": 3, "loss": 0.25, "name": "x", "t": ember.arange(3)}, [1, (2, None)]]
    gathered = [None]
    dist.all_gather_object(gathered, objects[0])
    assert gathered[0]["t"].tolist() == [0, 1, 2] and gathered[0]["epoch"] == 3
    copy = list(objects)
    dist.broadcast_object_list(copy, src=0)
    assert copy[1] == [1, (2, None)]
    collected = [None]
    dist.gather_object("hello", collected, dst=0)
    assert collected == ["hello"]


def test_code_never_travels(world):
    class Sneaky:
        def __reduce__(self):
            return (print, ("ran",))

    with pytest.raises((CheckpointError, TypeError, ValueError)):
        dist.all_gather_object([None], Sneaky())


def test_list_sizes_are_checked(world):
    with pytest.raises(ValueError, match="object_list must have 1 items"):
        dist.all_gather_object([None, None], 1)
