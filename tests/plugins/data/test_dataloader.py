"""DataLoader semantics against torch.utils.data.DataLoader on the same datasets (main
process; workers are in test_workers.py, faults in test_faults.py)."""

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import ember
from ember.data import BatchSampler, DataLoader, Dataset, IterableDataset, SequentialSampler, TensorDataset


def _plain(batch):
    if isinstance(batch, (torch.Tensor, ember.Tensor)):
        return (batch.numpy().tolist(), str(batch.dtype).split(".")[-1])
    if isinstance(batch, dict):
        return {k: _plain(v) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return [_plain(b) for b in batch]
    return batch


class Samples(Dataset):
    """A map-style dataset whose samples mix types; works with either library."""

    def __len__(self):
        return 11

    def __getitem__(self, i):
        return {"image": np.full((2, 2), i, dtype=np.float32), "label": i % 3, "name": f"s{i}", "weight": i / 2}


class TorchSamples(tud.Dataset):
    __len__ = Samples.__len__
    __getitem__ = Samples.__getitem__


@pytest.mark.parametrize("kwargs", [{}, {"batch_size": 4}, {"batch_size": 4, "drop_last": True},
                                    {"batch_size": 11}, {"batch_size": 20}, {"batch_size": 20, "drop_last": True},
                                    {"batch_size": None}])
def test_sequential_batches_match_torch(kwargs):
    ours = DataLoader(Samples(), **kwargs)
    theirs = tud.DataLoader(TorchSamples(), **kwargs)
    assert [_plain(b) for b in ours] == [_plain(b) for b in theirs]
    assert len(ours) == len(theirs)


def test_batch_sampler_and_custom_collate_match_torch():
    batches = [[3, 1], [0], [10, 2, 5]]
    ours = DataLoader(Samples(), batch_sampler=batches, collate_fn=lambda b: [s["name"] for s in b])
    theirs = tud.DataLoader(TorchSamples(), batch_sampler=batches, collate_fn=lambda b: [s["name"] for s in b])
    assert list(ours) == list(theirs) == [["s3", "s1"], ["s0"], ["s10", "s2", "s5"]]
    sampler = BatchSampler(SequentialSampler(range(5)), 2, False)
    assert [_plain(b) for b in DataLoader(Samples(), sampler=[4, 0, 7], batch_size=2)] == \
        [_plain(b) for b in tud.DataLoader(TorchSamples(), sampler=[4, 0, 7], batch_size=2)]
    assert len(DataLoader(Samples(), batch_sampler=sampler)) == 3


def test_shuffle_is_a_permutation_reproducible_with_a_generator():
    data = TensorDataset(ember.arange(25))

    def order(seed, **kw):
        loader = DataLoader(data, batch_size=4, shuffle=True, generator=ember.Generator().manual_seed(seed), **kw)
        return [x for (b,) in loader for x in b.tolist()]

    first = order(0)
    assert sorted(first) == list(range(25)) and first != list(range(25))
    assert order(0) == first and order(1) != first
    loader = DataLoader(data, batch_size=4, shuffle=True, generator=ember.Generator().manual_seed(0))
    epoch1 = [x for (b,) in loader for x in b.tolist()]
    epoch2 = [x for (b,) in loader for x in b.tolist()]
    assert epoch1 != epoch2 and sorted(epoch2) == list(range(25))
    dropped = order(0, drop_last=True)
    assert len(dropped) == 24 == len(list(tud.DataLoader(range(25), batch_size=4, shuffle=True, drop_last=True))) * 4


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(np.arange(self.n, dtype=np.int64))

    def __len__(self):
        return self.n


class TorchStream(tud.IterableDataset):
    __init__ = Stream.__init__
    __iter__ = Stream.__iter__
    __len__ = Stream.__len__


@pytest.mark.parametrize("kwargs", [{"batch_size": 3}, {"batch_size": 3, "drop_last": True}, {"batch_size": None}])
def test_iterable_dataset_matches_torch(kwargs):
    ours, theirs = DataLoader(Stream(10), **kwargs), tud.DataLoader(TorchStream(10), **kwargs)
    assert [_plain(b) for b in ours] == [_plain(b) for b in theirs]
    assert len(ours) == len(theirs)


def _ctor_error(lib, dataset, **kwargs):
    loader = ember.data.DataLoader if lib == "ember" else tud.DataLoader
    with pytest.raises((ValueError, TypeError)) as info:
        loader(dataset, **kwargs)
    return type(info.value), str(info.value)


@pytest.mark.parametrize("kwargs", [
    {"num_workers": -1}, {"timeout": -1}, {"prefetch_factor": 2}, {"num_workers": 1, "prefetch_factor": -1},
    {"persistent_workers": True}, {"sampler": [0, 1], "shuffle": True},
    {"batch_sampler": [[0]], "batch_size": 2}, {"batch_sampler": [[0]], "shuffle": True},
    {"batch_sampler": [[0]], "sampler": [0]}, {"batch_sampler": [[0]], "drop_last": True},
    {"batch_size": None, "drop_last": True}, {"multiprocessing_context": "spawn"},
])
def test_invalid_constructor_arguments_match_torch(kwargs):
    assert _ctor_error("ember", list(range(4)), **kwargs) == _ctor_error("torch", list(range(4)), **kwargs)


@pytest.mark.parametrize("kwargs", [{"shuffle": True}, {"sampler": [0]}, {"batch_sampler": [[0]]}])
def test_invalid_iterable_dataset_arguments_match_torch(kwargs):
    ours = _ctor_error("ember", Stream(3), **kwargs)
    theirs = _ctor_error("torch", TorchStream(3), **kwargs)
    assert ours[0] == theirs[0]
    assert ours[1].split(", but got")[0] == theirs[1].split(", but got")[0]


def test_options_cannot_change_after_construction():
    loader = DataLoader(list(range(4)), batch_size=2)
    for name in ("batch_size", "sampler", "batch_sampler", "drop_last", "dataset", "persistent_workers"):
        with pytest.raises(ValueError, match=f"{name} attribute should not be set after DataLoader is initialized"):
            setattr(loader, name, None)
    loader.num_workers = 0  # others may change, as in torch


def test_single_process_errors_propagate_unwrapped():
    class Broken(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            raise IndexError("no such sample")

    with pytest.raises(IndexError, match="^no such sample$"):
        list(DataLoader(Broken()))


def test_len_of_an_iterable_dataset_without_len_raises_like_torch():
    class NoLen(IterableDataset):
        def __iter__(self):
            return iter(range(3))

    with pytest.raises(TypeError):
        len(DataLoader(NoLen(), batch_size=2))
    assert [b.tolist() for b in DataLoader(NoLen(), batch_size=2)] == [[0, 1], [2]]


def test_iterators_cannot_be_pickled():
    import pickle

    with pytest.raises(NotImplementedError, match="cannot be pickled"):
        pickle.dumps(iter(DataLoader(list(range(3)))))
