"""Shuffling samplers draw PyTorch's numbers: after the same seed, ember's samplers,
``random_split`` and a shuffled DataLoader give torch.utils.data's order exactly
(ember_data's sampler.py, distributed.py, dataset.py, dataloader.py on ember's
Mersenne Twister, ember/generator.py)."""

import pytest
import torch
import torch.utils.data as tud

import ember
from ember.data import (
    DataLoader,
    DistributedSampler,
    RandomSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
    random_split,
)


@pytest.mark.parametrize("n, replicas, drop_last", [(10, 3, False), (10, 3, True), (2, 4, False), (1000, 4, False),
                                                    (17, 2, True)])
@pytest.mark.parametrize("seed", [0, 1, 1234])
def test_distributed_sampler_shuffles_exactly_like_torch(n, replicas, drop_last, seed):
    for epoch in (0, 1, 5):
        for rank in range(replicas):
            ours = DistributedSampler(list(range(n)), replicas, rank, shuffle=True, seed=seed, drop_last=drop_last)
            theirs = tud.DistributedSampler(list(range(n)), replicas, rank, shuffle=True, seed=seed,
                                            drop_last=drop_last)
            ours.set_epoch(epoch)
            theirs.set_epoch(epoch)
            assert list(ours) == list(theirs)


@pytest.mark.parametrize("kwargs", [{}, {"replacement": True}, {"num_samples": 23}, {"replacement": True,
                                                                                      "num_samples": 70}])
def test_random_sampler_draws_torchs_order(kwargs):
    data = list(range(10))
    ember.manual_seed(3)
    torch.manual_seed(3)
    assert list(RandomSampler(data, **kwargs)) == list(tud.RandomSampler(data, **kwargs))
    ours = RandomSampler(data, generator=ember.Generator().manual_seed(9), **kwargs)
    theirs = tud.RandomSampler(data, generator=torch.Generator().manual_seed(9), **kwargs)
    assert list(ours) == list(theirs) and list(ours) == list(theirs)  # two epochs


def test_a_huge_sampler_with_replacement_draws_lazily_like_torch():
    import itertools

    ours = RandomSampler(range(7), replacement=True, num_samples=10 ** 10, generator=ember.Generator().manual_seed(1))
    theirs = tud.RandomSampler(range(7), replacement=True, num_samples=10 ** 10,
                               generator=torch.Generator().manual_seed(1))
    assert len(ours) == 10 ** 10
    assert list(itertools.islice(ours, 100)) == list(itertools.islice(theirs, 100))


def test_subset_and_weighted_samplers_draw_torchs_order():
    ember.manual_seed(5)
    torch.manual_seed(5)
    assert list(SubsetRandomSampler([3, 1, 4, 1, 5, 9])) == list(tud.SubsetRandomSampler([3, 1, 4, 1, 5, 9]))
    weights = [0.1, 0.0, 2.0, 1.0, 0.5]
    for replacement, n in [(True, 12), (False, 3)]:
        assert list(WeightedRandomSampler(weights, n, replacement)) == \
            list(tud.WeightedRandomSampler(weights, n, replacement))


def test_random_split_matches_torch():
    ours = random_split(range(10), [3, 7], generator=ember.Generator().manual_seed(42))
    theirs = tud.random_split(range(10), [3, 7], generator=torch.Generator().manual_seed(42))
    assert [list(s) for s in ours] == [list(s) for s in theirs]


def test_a_shuffled_loader_gives_torchs_batches_after_the_same_seed():
    data = list(range(25))
    ember.manual_seed(0)
    torch.manual_seed(0)
    ours = [batch.tolist() for _ in range(2) for batch in DataLoader(data, batch_size=4, shuffle=True)]
    theirs = [batch.tolist() for _ in range(2) for batch in tud.DataLoader(data, batch_size=4, shuffle=True)]
    assert ours == theirs
    assert ember.randn(3).tolist() == torch.randn(3).tolist()  # and the streams are still in step
