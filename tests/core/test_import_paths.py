"""The module paths PyTorch programs import from exist in ember under the same names."""

import importlib

import pytest

import ember


@pytest.mark.parametrize("path,names", [
    ("ember.utils.data.dataloader", ["DataLoader", "default_collate"]),
    ("ember.utils.data.sampler", ["Sampler", "RandomSampler", "SequentialSampler", "BatchSampler"]),
    ("ember.utils.data.dataset", ["Dataset", "TensorDataset", "Subset", "random_split"]),
    ("ember.utils.data.distributed", ["DistributedSampler"]),
    ("ember.nn.modules.rnn", ["RNN", "LSTM", "GRU", "LSTMCell"]),
    ("ember.nn.modules.activation", ["ReLU", "MultiheadAttention"]),
    ("ember.nn.modules.batchnorm", ["BatchNorm1d", "BatchNorm2d"]),
    ("ember.nn.modules.normalization", ["LayerNorm", "GroupNorm"]),
    ("ember.nn.modules.loss", ["CrossEntropyLoss", "MSELoss"]),
    ("ember.nn.modules.pixelshuffle", ["PixelShuffle", "PixelUnshuffle"]),
    ("ember.nn.utils.rnn", ["pack_padded_sequence", "PackedSequence"]),
])
def test_module_paths(path, names):
    module = importlib.import_module(path)
    for name in names:
        assert getattr(module, name) is not None


def test_same_objects_through_every_path():
    from ember.utils.data.dataloader import DataLoader

    assert DataLoader is ember.utils.data.DataLoader is ember.data.DataLoader
    from ember.nn.modules.batchnorm import BatchNorm2d

    assert BatchNorm2d is ember.nn.BatchNorm2d


def test_missing_names_raise_import_errors():
    with pytest.raises(ImportError):
        exec("from ember.utils.data.sampler import NoSuchSampler", {})
    with pytest.raises(ImportError):
        exec("from ember.nn.modules.loss import NoSuchLoss", {})
