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
    ("ember.optim.optimizer", ["Optimizer", "required"]),
    ("ember.nn.attention", ["SDPBackend", "sdpa_kernel"]),
    ("ember.ao.quantization", ["quantize_dynamic", "prepare", "convert", "QuantStub", "DeQuantStub",
                               "get_default_qconfig", "MinMaxObserver", "fuse_modules", "prepare_qat"]),
    ("ember.quantization", ["quantize_dynamic", "QConfig"]),
    ("ember.ao.nn.quantized", ["Linear", "Conv2d", "QFunctional"]),
    ("ember.ao.nn.quantized.dynamic", ["Linear"]),
    ("ember", ["quantize_per_tensor", "quantize_per_channel", "dequantize", "qint8", "quint8", "qint32"]),
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


def test_sdpa_kernel_records_the_backends_as_torch_and_attention_is_unchanged():
    import numpy as np
    import torch
    from torch.nn.attention import SDPBackend as TorchBackend
    from torch.nn.attention import sdpa_kernel as torch_kernel

    from ember.nn.attention import SDPBackend, enabled_backends, sdpa_kernel

    assert {k: int(v) for k, v in SDPBackend.__members__.items()} == \
        {k: int(v) for k, v in TorchBackend.__members__.items()}
    q = np.random.default_rng(0).standard_normal((1, 2, 3, 4)).astype(np.float32)
    with torch_kernel([TorchBackend.MATH]):
        expected = torch.nn.functional.scaled_dot_product_attention(*[torch.tensor(q)] * 3).numpy()
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]):
        assert enabled_backends() == [SDPBackend.MATH, SDPBackend.FLASH_ATTENTION]
        got = ember.nn.functional.scaled_dot_product_attention(*[ember.tensor(q)] * 3).numpy()
    assert len(enabled_backends()) == 5
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
    with pytest.raises(AssertionError, match="Backend must be an instance of SDPBackend"):
        with sdpa_kernel("math"):
            pass
