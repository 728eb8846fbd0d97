"""Tests for ember/distributed/fsdp/wrap.py: the auto-wrap policies answer as torch's do
for the same modules, sizes and ``recurse`` flags, and ``_recursive_wrap`` picks the
units torch's does."""

import functools

import pytest
import torch
from torch.distributed.fsdp import wrap as torch_wrap

import ember
from ember.distributed.fsdp import wrap


def twins():
    """(ember module, torch module) pairs of the kinds the policies look at."""
    return [(ember.nn.Linear(3, 4), torch.nn.Linear(3, 4)),
            (ember.nn.ModuleList([ember.nn.Linear(2, 2)]), torch.nn.ModuleList([torch.nn.Linear(2, 2)])),
            (ember.nn.MultiheadAttention(4, 2), torch.nn.MultiheadAttention(4, 2)),
            (ember.nn.Sequential(ember.nn.ReLU()), torch.nn.Sequential(torch.nn.ReLU()))]


@pytest.mark.parametrize("recurse", [True, False])
@pytest.mark.parametrize("numel", [0, 99, 100, 10**9])
def test_size_based_policy_is_torchs(recurse, numel):
    for ours, theirs in twins():
        expected = torch_wrap.size_based_auto_wrap_policy(theirs, recurse, numel, min_num_params=100)
        assert wrap.size_based_auto_wrap_policy(ours, recurse, numel, min_num_params=100) == expected
    # the defaults: 1e8 parameters
    assert wrap.size_based_auto_wrap_policy(ember.nn.Linear(2, 2), False, numel) == (numel >= 10**8)


@pytest.mark.parametrize("recurse", [True, False])
def test_module_transformer_and_lambda_policies_are_torchs(recurse):
    for ours, theirs in twins():
        assert (wrap.ModuleWrapPolicy({ember.nn.Linear})(ours, recurse, 5)
                == torch_wrap.ModuleWrapPolicy({torch.nn.Linear})(theirs, recurse, 5))
        assert (wrap.transformer_auto_wrap_policy(ours, recurse, 5, transformer_layer_cls={ember.nn.ModuleList})
                == torch_wrap.transformer_auto_wrap_policy(theirs, recurse, 5,
                                                           transformer_layer_cls={torch.nn.ModuleList}))
        assert (wrap.lambda_auto_wrap_policy(ours, recurse, 5, lambda_fn=lambda m: len(list(m.children())) > 0)
                == torch_wrap.lambda_auto_wrap_policy(theirs, recurse, 5,
                                                      lambda_fn=lambda m: len(list(m.children())) > 0))
    assert wrap.always_wrap_policy() is torch_wrap.always_wrap_policy() is True


def tree(nn):
    return nn.Sequential(nn.Linear(10, 10), nn.Sequential(nn.Linear(10, 3), nn.ReLU(), nn.Linear(3, 3)),
                         nn.ModuleList([nn.Linear(10, 20), nn.Linear(20, 1)]))


class Marker(torch.nn.Module):
    def __init__(self, module):
        super().__init__()
        self.inner = module


class EmberMarker(ember.nn.Module):
    def __init__(self, module):
        super().__init__()
        self.inner = module


@pytest.mark.parametrize("min_num_params", [1, 20, 50, 150, 1000])
def test_recursive_wrap_picks_torchs_units(min_num_params):
    def units(model, marker):
        return [name for name, m in model.named_modules() if isinstance(m, marker)]

    theirs = tree(torch.nn)
    policy = functools.partial(torch_wrap.size_based_auto_wrap_policy, min_num_params=min_num_params)
    torch_wrap._recursive_wrap(theirs, policy, Marker, ignored_modules=set(), ignored_params=set(),
                               only_wrap_children=True)
    ours = tree(ember.nn)
    ember_policy = functools.partial(wrap.size_based_auto_wrap_policy, min_num_params=min_num_params)
    wrap._recursive_wrap(ours, ember_policy, EmberMarker, only_wrap_children=True)
    assert units(ours, EmberMarker) == units(theirs, Marker)
