"""Tests for ember/distributed/backend.py: the backend registry and its hook."""

import datetime

import pytest
from plugin_helpers import make_plugin

import ember
import ember.distributed as dist
from ember.distributed.backend import CommBackend
from ember.distributed.work import completed_work


class EchoBackend(CommBackend):
    """A one-rank backend whose all_reduce doubles (so a test sees it was used)."""

    name = "echo"

    def __init__(self, timeout):
        self.timeout = timeout

    def rank(self):
        return 0

    def size(self):
        return 1

    def allreduce(self, array, op, blocking=False):
        array *= 2
        return completed_work("all_reduce", 0)


def test_ember_register_comm_backends(use_plugin):
    use_plugin(make_plugin("hookspec_comm", ember_register_comm_backends=lambda register: register(
        EchoBackend, name="echo", devices=("echodev",))))
    from ember.plugins import registry

    entry = registry.catalogue("comm_backends")["echo"]
    assert entry.obj is EchoBackend and entry.plugin == "hookspec_comm"
    assert entry.extra == {"devices": ("echodev",)}
    dist.init_process_group("echo", timeout=datetime.timedelta(seconds=7))
    try:
        assert dist.get_backend() == "echo"
        assert dist.group.WORLD._backend.timeout == 7
        t = ember.tensor([1.0, 2.0])
        dist.all_reduce(t)
        assert t.tolist() == [2.0, 4.0]
        with pytest.raises(NotImplementedError, match="'echo' communication backend does not implement broadcast"):
            dist.broadcast(t, src=0)
    finally:
        dist.destroy_process_group()


def test_a_device_type_picks_the_backend_that_serves_it(use_plugin):
    use_plugin(make_plugin("hookspec_comm2", ember_register_comm_backends=lambda register: register(
        EchoBackend, name="echo2", devices=("echodev",))))
    dist.init_process_group("echodev")
    try:
        assert dist.get_backend() == "echo2"
    finally:
        dist.destroy_process_group()


def test_gloo_and_none_pick_the_cpu_backend(world):
    assert dist.get_backend() == "mpi"
    dist.destroy_process_group()
    dist.init_process_group("gloo")
    assert dist.get_backend() == "mpi"


def test_an_unknown_backend_names_what_is_installed():
    with pytest.raises(dist.DistError, match=r"no ember communication backend named 'nope' is installed "
                                              r"\(installed: .*mpi"):
        dist.init_process_group("nope")
    assert not dist.is_initialized()


def test_register_backend_in_process():
    dist.Backend.register_backend("echo3", EchoBackend)
    try:
        dist.init_process_group("ECHO3")
        assert dist.get_backend() == "echo3"
        dist.destroy_process_group()
    finally:
        ember.plugins.unregister(name="comm_backend_echo3")


def test_backend_names_are_lower_case():
    assert dist.Backend("MPI") == "mpi" == dist.Backend.MPI
    with pytest.raises(ValueError, match="Backend name must be a string"):
        dist.Backend(3)
