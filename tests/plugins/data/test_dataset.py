"""Dataset combinators against torch.utils.data's on the same data."""

import pytest
import torch
import torch.utils.data as tud

import ember
from ember.data import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)


def _rows(dataset):
    return [tuple(x.tolist() if hasattr(x, "tolist") else x for x in row) if isinstance(row, tuple) else row
            for row in (dataset[i] for i in range(len(dataset)))]


def test_tensor_dataset_matches_torch():
    x, y = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [0, 1, 0]
    ours = TensorDataset(ember.tensor(x), ember.tensor(y))
    theirs = tud.TensorDataset(torch.tensor(x), torch.tensor(y))
    assert _rows(ours) == _rows(theirs) and len(ours) == len(theirs)
    assert [t.tolist() for t in ours[1:]] == [t.tolist() for t in theirs[1:]]
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(ember.zeros(2), ember.zeros(3))


def test_concat_dataset_matches_torch():
    parts = [list(range(3)), list(range(10, 12)), [], list(range(20, 24))]
    ours, theirs = ConcatDataset(parts), tud.ConcatDataset(parts)
    assert len(ours) == len(theirs) and ours.cumulative_sizes == theirs.cumulative_sizes
    assert [ours[i] for i in range(-len(ours), len(ours))] == [theirs[i] for i in range(-len(theirs), len(theirs))]
    for bad in (-10, 9):
        with pytest.raises((ValueError, IndexError)) as theirs_error:
            theirs[bad]
        with pytest.raises(theirs_error.type):
            ours[bad]
    assert len(Dataset.__add__(TensorDataset(ember.zeros(2)), TensorDataset(ember.zeros(3)))) == 5


class Count(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


class TorchCount(tud.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


def test_chain_dataset_matches_torch():
    ours = ChainDataset([Count(2), Count(3)])
    theirs = tud.ChainDataset([TorchCount(2), TorchCount(3)])
    assert list(ours) == list(theirs) and len(ours) == len(theirs)
    assert list(Count(2) + Count(1)) == [0, 1, 0]
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        list(ChainDataset([[1, 2]]))
    with pytest.raises(AssertionError, match="ConcatDataset does not support IterableDataset"):
        ConcatDataset([Count(2)])


def test_stack_dataset_matches_torch():
    a, b = list(range(4)), list("abcd")
    assert _rows(StackDataset(a, b)) == _rows(tud.StackDataset(a, b))
    assert StackDataset(x=a, y=b)[2] == tud.StackDataset(x=a, y=b)[2] == {"x": 2, "y": "c"}
    for args, kwargs in [((a, b[:2]), {}), ((a,), {"y": b}), ((), {})]:
        with pytest.raises(ValueError) as theirs:
            tud.StackDataset(*args, **kwargs)
        with pytest.raises(ValueError) as ours:
            StackDataset(*args, **kwargs)
        assert str(ours.value) == str(theirs.value)


def test_subset_matches_torch():
    data = [10 * i for i in range(8)]
    ours, theirs = Subset(data, [5, 1, 7]), tud.Subset(data, [5, 1, 7])
    assert _rows(ours) == _rows(theirs) and len(ours) == 3
    assert ours.__getitems__([0, 2]) == [50, 70]


@pytest.mark.filterwarnings("ignore:Length of split at index")
@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.5, 0.5], [0.34, 0.33, 0.33], [0.1, 0.2, 0.3, 0.4],
                                     [1.0, 0.0]])
def test_random_split_sizes_match_torch_and_cover_the_dataset(lengths):
    data = list(range(10))
    with pytest.warns(UserWarning) if 0.0 in lengths else _nothing():
        ours = random_split(data, lengths, generator=ember.Generator().manual_seed(0))
    theirs = tud.random_split(data, lengths, generator=torch.Generator().manual_seed(0))
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    flat = [x for s in ours for x in s]
    assert sorted(flat) == data
    again = random_split(data, lengths, generator=ember.Generator().manual_seed(0))
    assert [list(s) for s in again] == [list(s) for s in ours]


def test_random_split_errors_match_torch():
    for lengths in ([3, 3], [1.2, -0.2]):
        with pytest.raises(ValueError) as theirs:
            tud.random_split(list(range(10)), lengths)
        with pytest.raises(ValueError) as ours:
            random_split(list(range(10)), lengths)
        assert str(ours.value) == str(theirs.value)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
