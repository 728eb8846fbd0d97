"""Samplers against torch.utils.data's: exact where no randomness is involved, and
order-independent properties plus determinism for the shuffling ones (whose exact,
seeded equality with torch is shown in test_seeded_samplers.py)."""

import collections

import pytest
import torch
import torch.utils.data as tud

import ember
from ember.data import (
    BatchSampler,
    DistributedSampler,
    RandomSampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)


def _gen(seed):
    return ember.Generator().manual_seed(seed)


@pytest.mark.parametrize("n", [0, 1, 7])
def test_sequential_sampler_is_exactly_torchs(n):
    data = list(range(n))
    assert list(SequentialSampler(data)) == list(tud.SequentialSampler(data))
    assert len(SequentialSampler(data)) == len(tud.SequentialSampler(data))


@pytest.mark.parametrize("n, batch_size, drop_last", [(10, 3, False), (10, 3, True), (9, 3, True), (2, 5, False),
                                                      (2, 5, True), (0, 2, False)])
def test_batch_sampler_is_exactly_torchs(n, batch_size, drop_last):
    ours = BatchSampler(SequentialSampler(range(n)), batch_size, drop_last)
    theirs = tud.BatchSampler(tud.SequentialSampler(range(n)), batch_size, drop_last)
    assert list(ours) == list(theirs)
    assert len(ours) == len(theirs)


def test_batch_sampler_argument_errors_match_torch():
    for args in [(0, False), (2.0, False), (True, False), (2, 1)]:
        with pytest.raises(ValueError) as theirs:
            tud.BatchSampler(range(3), *args)
        with pytest.raises(ValueError) as ours:
            BatchSampler(range(3), *args)
        assert str(ours.value) == str(theirs.value)


def test_random_sampler_permutes_and_repeats_with_a_generator():
    data = range(50)
    order = list(RandomSampler(data, generator=_gen(0)))
    assert sorted(order) == list(range(50)) and order != list(range(50))
    assert list(RandomSampler(data, generator=_gen(0))) == order
    assert list(RandomSampler(data, generator=_gen(1))) != order
    ember.manual_seed(5)
    first = list(RandomSampler(data))
    ember.manual_seed(5)
    assert list(RandomSampler(data)) == first


@pytest.mark.parametrize("replacement, num_samples", [(False, None), (False, 23), (False, 5), (True, None),
                                                      (True, 40)])
def test_random_sampler_lengths_and_coverage_match_torch(replacement, num_samples):
    data = range(10)
    ours = list(RandomSampler(data, replacement, num_samples, generator=_gen(0)))
    theirs = list(tud.RandomSampler(data, replacement, num_samples, generator=torch.Generator().manual_seed(0)))
    assert len(ours) == len(theirs) == len(RandomSampler(data, replacement, num_samples))
    assert all(0 <= i < 10 for i in ours)
    if not replacement:  # whole permutations chained: each key's count differs by at most one
        counts = collections.Counter(ours)
        assert max(counts.values()) - min(counts.get(i, 0) for i in range(10)) <= 1
        assert sorted(collections.Counter(ours).values()) == sorted(collections.Counter(theirs).values())


def test_random_sampler_errors_match_torch():
    for kwargs, error in [({"replacement": 1}, TypeError), ({"num_samples": 0}, ValueError),
                          ({"num_samples": 2.5}, ValueError)]:
        with pytest.raises(error) as theirs:
            tud.RandomSampler(range(3), **kwargs)
        with pytest.raises(error) as ours:
            RandomSampler(range(3), **kwargs)
        assert str(ours.value) == str(theirs.value)


def test_subset_random_sampler():
    indices = [3, 9, 4, 12]
    ours = list(SubsetRandomSampler(indices, generator=_gen(0)))
    assert sorted(ours) == sorted(indices) and len(SubsetRandomSampler(indices)) == 4
    assert list(SubsetRandomSampler(indices, generator=_gen(0))) == ours


def test_weighted_random_sampler_follows_the_weights():
    weights = [0.0, 1.0, 3.0, 0.0]
    drawn = list(WeightedRandomSampler(weights, 4000, generator=_gen(0)))
    counts = collections.Counter(drawn)
    assert set(counts) == {1, 2}
    assert abs(counts[2] / 4000 - 0.75) < 0.03
    without = list(WeightedRandomSampler(ember.tensor([1.0, 1.0, 5.0]), 3, replacement=False, generator=_gen(1)))
    assert sorted(without) == [0, 1, 2]
    assert list(WeightedRandomSampler(weights, 10, generator=_gen(3))) == \
        list(WeightedRandomSampler(weights, 10, generator=_gen(3)))


def test_weighted_random_sampler_errors_match_torch():
    for args, kwargs in [(([1.0], 0), {}), (([1.0], 1), {"replacement": 1}), (([[1.0]], 1), {})]:
        with pytest.raises(ValueError) as theirs:
            tud.WeightedRandomSampler(*args, **kwargs)
        with pytest.raises(ValueError) as ours:
            WeightedRandomSampler(*args, **kwargs)
        assert str(ours.value) == str(theirs.value)
    for weights, n, replacement in [([1.0, 0.0], 3, False), ([0.0, 0.0], 1, True), ([-1.0, 1.0], 1, True),
                                    ([float("nan"), 1.0], 1, True)]:
        with pytest.raises(RuntimeError) as theirs:
            list(tud.WeightedRandomSampler(weights, n, replacement=replacement))
        with pytest.raises(RuntimeError) as ours:
            list(WeightedRandomSampler(weights, n, replacement=replacement))
        assert str(ours.value) == str(theirs.value)
    # without replacement, zero-weight keys come last once the others are used up (like torch)
    theirs = list(tud.WeightedRandomSampler([1.0, 0.0, 2.0], 3, replacement=False))
    ours = list(WeightedRandomSampler([1.0, 0.0, 2.0], 3, replacement=False, generator=_gen(0)))
    assert theirs[2] == ours[2] == 1 and sorted(ours) == [0, 1, 2]


CASES = [(n, replicas, drop_last) for n in (0, 1, 5, 10, 11, 13) for replicas in (1, 2, 3, 4)
         for drop_last in (False, True) if not (n == 0 and not drop_last)]


@pytest.mark.parametrize("n, replicas, drop_last", CASES)
def test_distributed_sampler_without_shuffle_is_exactly_torchs(n, replicas, drop_last):
    data = list(range(n))
    for rank in range(replicas):
        ours = DistributedSampler(data, replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = tud.DistributedSampler(data, replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(ours) == list(theirs)
        assert len(ours) == len(theirs) and ours.total_size == theirs.total_size


@pytest.mark.parametrize("n, replicas, drop_last", [(10, 3, False), (10, 3, True), (2, 4, False), (12, 4, False)])
def test_distributed_sampler_shuffled_partitions_like_torch(n, replicas, drop_last):
    def shares(cls, epoch):
        out = []
        for rank in range(replicas):
            sampler = cls(list(range(n)), replicas, rank, shuffle=True, seed=1, drop_last=drop_last)
            sampler.set_epoch(epoch)
            out.append(list(sampler))
        return out

    ours, theirs = shares(DistributedSampler, 0), shares(tud.DistributedSampler, 0)
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    flat, torch_flat = sum(ours, []), sum(theirs, [])
    # the same multiset structure: how many keys appear once, twice, ...
    assert sorted(collections.Counter(flat).values()) == sorted(collections.Counter(torch_flat).values())
    if not drop_last:
        assert set(flat) == set(range(n))
    assert shares(DistributedSampler, 0) == ours  # same seed and epoch: same shares on every replica
    assert shares(DistributedSampler, 1) != ours or n <= 2


def test_distributed_sampler_rank_errors():
    with pytest.raises(ValueError) as theirs:
        tud.DistributedSampler(range(4), 2, 2)
    with pytest.raises(ValueError) as ours:
        DistributedSampler(range(4), 2, 2)
    assert str(ours.value) == str(theirs.value)


def test_distributed_sampler_reads_world_size_and_rank_from_the_environment(monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "3")
    monkeypatch.setenv("RANK", "1")
    sampler = DistributedSampler(list(range(7)), shuffle=False)
    assert (sampler.num_replicas, sampler.rank, list(sampler)) == (3, 1, [1, 4, 0])
    monkeypatch.delenv("WORLD_SIZE")
    with pytest.raises(RuntimeError, match="WORLD_SIZE"):
        DistributedSampler(list(range(7)))


def test_samplers_are_in_the_data_catalogue():
    from ember.plugins import registry

    kinds = {name: entry.extra.get("kind") for name, entry in registry.catalogue("data").items()}
    for name in ("SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
                 "BatchSampler", "DistributedSampler"):
        assert kinds[name] == "sampler"
        assert getattr(ember.data, name).__name__ == name
