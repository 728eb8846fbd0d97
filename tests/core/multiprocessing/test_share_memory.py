"""Tensor.share_memory_ / Module.share_memory: a child process's in-place updates reach
the parent's tensors, under fork (inherited mapping) and spawn (attached by name, through
pickling); is_shared answers like torch's; unshared tensors still pickle by value."""

import pickle

import torch

import ember
import ember.multiprocessing as mp


def _add_ten(tensor):
    with ember.no_grad():
        tensor.add_(10)


def _train_step(model):
    with ember.no_grad():
        for p in model.parameters():
            p.mul_(2)


def test_is_shared_like_torch():
    for lib in (torch, ember):
        t = lib.ones(3)
        assert not t.is_shared()
        assert t.share_memory_() is t and t.is_shared()
        assert t.tolist() == [1.0, 1.0, 1.0]


def test_fork_child_updates_reach_the_parent():
    tensor = ember.arange(4.0).share_memory_()
    child = mp.get_context("fork").Process(target=_add_ten, args=(tensor,))
    child.start()
    child.join()
    assert child.exitcode == 0 and tensor.tolist() == [10.0, 11.0, 12.0, 13.0]


def test_spawn_child_attaches_by_name():
    model = ember.nn.Linear(3, 2).share_memory()
    before = [p.detach().clone() for p in model.parameters()]
    child = mp.get_context("spawn").Process(target=_train_step, args=(model,))
    child.start()
    child.join()
    assert child.exitcode == 0
    for p, old in zip(model.parameters(), before):
        assert ember.allclose(p, old * 2)
        assert p.is_shared() and p.requires_grad


def test_pickling_shares_only_shared_tensors():
    shared = ember.zeros(2).share_memory_()
    copy = pickle.loads(pickle.dumps(shared))
    copy.add_(5)
    assert shared.tolist() == [5.0, 5.0]
    plain = ember.zeros(2)
    other = pickle.loads(pickle.dumps(plain))
    other.add_(5)
    assert plain.tolist() == [0.0, 0.0]


def test_module_share_memory_covers_buffers():
    model = ember.nn.BatchNorm1d(3).share_memory()
    assert all(t.is_shared() for t in [*model.parameters(), *model.buffers()])
