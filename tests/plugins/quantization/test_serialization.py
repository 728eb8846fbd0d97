"""Quantized tensors in checkpoints (core/src/ember/serialization/quantized.py) both ways with torch."""

import ember_quantization as eq
import numpy as np
import pytest
import torch
from quantization_parity import DTYPES

import ember
from ember.serialization import CheckpointError

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def tensors():
    x = ember.tensor(np.random.default_rng(0).standard_normal((3, 4)).astype("float32"))
    return {"per_tensor": eq.quantize_per_tensor(x, 0.05, 3, eq.quint8),
            "int8": eq.quantize_per_tensor(x, 0.02, -4, eq.qint8),
            "int32": eq.quantize_per_tensor(x, 0.001, 7, eq.qint32),
            "per_channel": eq.quantize_per_channel(x, ember.tensor([0.1, 0.2, 0.3]), ember.tensor([0, 1, 2]), 0,
                                                   eq.qint8),
            "dtype": eq.qint8, "float": x}


def test_ember_quantized_tensors_load_in_torch(tmp_path):
    ours = tensors()
    ember.save(ours, tmp_path / "q.pt")
    theirs = torch.load(tmp_path / "q.pt", weights_only=True)
    for key in ("per_tensor", "int8", "int32", "per_channel"):
        assert DTYPES[theirs[key].dtype] is ours[key].dtype
        np.testing.assert_array_equal(theirs[key].int_repr().numpy(), ours[key].int_repr().numpy())
        np.testing.assert_array_equal(theirs[key].dequantize().numpy(), ours[key].dequantize().numpy())
    assert theirs["per_tensor"].q_scale() == 0.05 and theirs["per_tensor"].q_zero_point() == 3
    assert theirs["per_channel"].q_per_channel_axis() == 0 and theirs["dtype"] is torch.qint8


def test_torch_quantized_tensors_load_in_ember(tmp_path):
    x = torch.tensor(np.random.default_rng(1).standard_normal((2, 5)).astype("float32"))
    theirs = {"a": torch.quantize_per_tensor(x, 0.1, 9, torch.quint8),
              "b": torch.quantize_per_channel(x, torch.tensor([0.1, 0.05], dtype=torch.float64),
                                              torch.tensor([1, -2]), 0, torch.qint8)}
    torch.save(theirs, tmp_path / "t.pt")
    ours = ember.load(tmp_path / "t.pt")
    for key in theirs:
        assert isinstance(ours[key], eq.QTensor)
        np.testing.assert_array_equal(ours[key].int_repr().numpy(), theirs[key].int_repr().numpy())
        np.testing.assert_array_equal(ours[key].dequantize().numpy(), theirs[key].dequantize().numpy())
    np.testing.assert_array_equal(ours["b"].q_per_channel_zero_points().numpy(), [1, -2])


@pytest.mark.parametrize("params, message", [
    (("per_channel_affine", [0.1, 0.1], [0, 0], 5), "do not fit a tensor of size"),
    (("per_channel_affine", [0.1], [0], 0), "do not fit a tensor of size"),
    (("per_tensor_affine", "0.1", 0), "must be \\(qscheme, float, int\\)"),
    (("nonsense", 0.1, 0), "must start with a torch qscheme"),
])
def test_bad_quantizer_params_are_refused(params, message):
    from ember.serialization import quantized

    scheme = quantized.QSchemeMarker(params[0]) if params[0] != "nonsense" else "nonsense"
    rest = tuple(ember.tensor(p) if isinstance(p, list) else p for p in params[1:])
    with pytest.raises(CheckpointError, match=message):
        quantized._quantizer((scheme, *rest), (2, 3))


def test_a_plain_storage_cannot_become_a_quantized_tensor():
    from ember.serialization import torch_globals

    with pytest.raises(CheckpointError, match="_rebuild_qtensor needs a quantized storage"):
        torch_globals.rebuild_qtensor(None, 0, (2,), (1,), None, False, None)
