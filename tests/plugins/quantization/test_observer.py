"""Tests for ember_quantization/observer.py: the same scale and zero point as torch's observers."""

import numpy as np
import pytest
import torch
import torch.ao.quantization as tq
from ember_quantization import observer
from quantization_parity import ours

import ember

CASES = [
    ("MinMaxObserver", {}),
    ("MinMaxObserver", {"dtype": torch.qint8, "qscheme": torch.per_tensor_symmetric}),
    ("MinMaxObserver", {"reduce_range": True}),
    ("MinMaxObserver", {"dtype": torch.qint8}),
    ("MinMaxObserver", {"quant_min": 0, "quant_max": 127}),
    ("MinMaxObserver", {"dtype": torch.quint8, "qscheme": torch.per_tensor_symmetric}),
    ("MovingAverageMinMaxObserver", {}),
    ("MovingAverageMinMaxObserver", {"averaging_constant": 0.5, "dtype": torch.qint8}),
    ("PerChannelMinMaxObserver", {"ch_axis": 1}),
    ("PerChannelMinMaxObserver", {"dtype": torch.qint8, "qscheme": torch.per_channel_symmetric}),
    ("MovingAveragePerChannelMinMaxObserver", {"averaging_constant": 0.1}),
]


def batches(shift=0.3, count=3, shape=(4, 6)):
    rng = np.random.default_rng(0)
    return [rng.standard_normal(shape).astype("float32") * (i + 1) + i * shift for i in range(count)]


@pytest.mark.filterwarnings("ignore:Please use quant_min and quant_max")
@pytest.mark.parametrize("name, kwargs", CASES)
@pytest.mark.parametrize("shift", [0.3, 5.0, -5.0])
def test_observers_give_torchs_scale_and_zero_point(name, kwargs, shift):
    our_observer, their_observer = getattr(observer, name)(**ours(kwargs)), getattr(tq, name)(**kwargs)
    for x in batches(shift):
        our_observer(ember.tensor(x))
        their_observer(torch.tensor(x))
    (scale, zero_point), (torch_scale, torch_zero_point) = our_observer.calculate_qparams(), \
        their_observer.calculate_qparams()
    np.testing.assert_array_equal(scale.numpy(), torch_scale.numpy())
    np.testing.assert_array_equal(zero_point.numpy(), torch_zero_point.numpy())
    assert str(zero_point.dtype).split(".")[-1] == str(torch_zero_point.dtype).split(".")[-1]
    np.testing.assert_array_equal(our_observer.min_val.numpy(), their_observer.min_val.numpy())


@pytest.mark.parametrize("kwargs", [{}, {"reduce_range": True},
                                    {"dtype": torch.qint8, "qscheme": torch.per_tensor_symmetric}])
@pytest.mark.parametrize("shape", ["widening", "skewed", "constant_first"])
def test_histogram_observer_gives_torchs_scale_and_zero_point(kwargs, shape):
    from ember_quantization import HistogramObserver

    rng = np.random.default_rng(0)
    batches = [(rng.standard_normal((64, 50)) * (1 + i) + 0.5 * i).astype("float32") for i in range(3)]
    if shape == "skewed":
        batches = [np.abs(b) ** 1.5 for b in batches]
    if shape == "constant_first":
        batches[0] = np.full((4, 4), 0.25, dtype="float32")
    ours_, theirs = HistogramObserver(**ours(kwargs)), tq.HistogramObserver(**kwargs)
    for x in batches:
        ours_(ember.tensor(x))
        theirs(torch.tensor(x))
    # the re-binned histograms may differ by a count here and there (float summation order) ...
    np.testing.assert_allclose(ours_.histogram.numpy(), theirs.histogram.numpy(), atol=1.01)
    assert ours_.histogram.numpy().sum() == pytest.approx(theirs.histogram.numpy().sum(), rel=1e-6)
    # ... the chosen range, scale and zero point do not
    (scale, zero_point), (torch_scale, torch_zero_point) = ours_.calculate_qparams(), theirs.calculate_qparams()
    np.testing.assert_array_equal(scale.numpy(), torch_scale.numpy())
    np.testing.assert_array_equal(zero_point.numpy(), torch_zero_point.numpy())


def test_an_observer_is_an_identity_and_its_state_dict_has_torchs_keys():
    ours_, theirs = observer.MinMaxObserver(), tq.MinMaxObserver()
    x = ember.tensor(batches()[0])
    assert ours_(x) is x
    theirs(torch.tensor(batches()[0]))
    assert list(ours_.state_dict()) == list(theirs.state_dict())


def test_a_per_channel_observer_loads_torchs_state_dict():
    theirs = tq.PerChannelMinMaxObserver(dtype=torch.qint8, qscheme=torch.per_channel_symmetric)
    theirs(torch.tensor(batches()[0]))
    ours_ = observer.PerChannelMinMaxObserver(**ours({"dtype": torch.qint8, "qscheme": torch.per_channel_symmetric}))
    ours_.load_state_dict({k: ember.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    np.testing.assert_array_equal(ours_.calculate_qparams()[0].numpy(), theirs.calculate_qparams()[0].numpy())


def test_calculate_qparams_before_any_data_warns_and_returns_defaults_like_torch():
    with pytest.warns(UserWarning, match="must run observer before calling calculate_qparams"):
        scale, zero_point = observer.MinMaxObserver().calculate_qparams()
    assert scale.tolist() == [1.0] and zero_point.tolist() == [0]


def test_bad_configurations_raise_torchs_errors():
    with pytest.raises(NotImplementedError, match="only support per_tensor_symmetric"):
        observer.MinMaxObserver(qscheme=observer.per_channel_affine)
    with pytest.raises(AssertionError, match="must include 0"):
        observer.MinMaxObserver(quant_min=1, quant_max=10)
    with pytest.raises(NotImplementedError, match="Cannot reduce range for symmetric"):
        observer.MinMaxObserver(qscheme=observer.per_tensor_symmetric, reduce_range=True)
