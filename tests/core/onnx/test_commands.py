"""``ember export``: a zoo model with a checkpoint's weights, written as ONNX or ember-jit.

PyTorch counterpart: none (the CLI is ember's own).
"""

import numpy as np
import onnxruntime
import pytest

import ember
from ember.cli import main


def _checkpoint(tmp_path):
    ember.manual_seed(3)
    model = ember.zoo.create_model("resnet8_cifar").eval()
    path = tmp_path / "weights.pt"
    ember.save(model.state_dict(), path)
    return model, path


def assert_onnxruntime_agrees(path, model, x):
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {"x": x.numpy()})
    np.testing.assert_allclose(got, model(x).detach().numpy(), rtol=1e-4, atol=1e-5)


def test_export_onnx_with_weights(tmp_path, capsys):
    model, weights = _checkpoint(tmp_path)
    out = tmp_path / "resnet8.onnx"
    assert main(["export", "resnet8_cifar", "--weights", str(weights), "--out", str(out), "--threads", "1"]) == 0
    assert "dynamic batch" in capsys.readouterr().out
    x = ember.randn(3, 3, 32, 32)
    assert_onnxruntime_agrees(out, model, x)


def test_export_ember_jit(tmp_path):
    model, weights = _checkpoint(tmp_path)
    out = tmp_path / "resnet8.ejit"
    assert main(["export", "resnet8_cifar", "--weights", str(weights), "--format", "ember-jit", "--out", str(out),
                 "--batch", "2", "--threads", "1"]) == 0
    x = ember.randn(2, 3, 32, 32)
    np.testing.assert_array_equal(ember.jit.load(out)(x).detach().numpy(), model(x).detach().numpy())


def test_a_model_that_cannot_be_dynamic_is_one_line(tmp_path, capsys):
    status = main(["export", "char_lstm_small", "--out", str(tmp_path / "lstm.onnx"), "--threads", "1"])
    assert status == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("ember export: ") and "--static" in err


def test_export_takes_the_input_shape_an_ember_train_checkpoint_records(tmp_path, capsys):
    # resnet8_cifar trained on the digits has 1 input channel and 8x8 images: the export
    # traces with that shape, not the model's default 3x32x32 (which its weights refuse).
    ember.manual_seed(3)
    model = ember.zoo.create_model("resnet8_cifar", num_classes=10, in_channels=1).eval()
    weights = tmp_path / "checkpoint.pt"
    overrides = {"num_classes": 10, "in_channels": 1}
    ember.save({"model": model.state_dict(), "model_name": "resnet8_cifar", "model_overrides": overrides,
                "data": {"model_overrides": overrides, "input_shape": [1, 8, 8], "name": "digits"}}, weights)
    out = tmp_path / "digits.onnx"
    assert main(["export", "resnet8_cifar", "--weights", str(weights), "--out", str(out), "--threads", "1"]) == 0
    assert "inputs x (1, 1, 8, 8)" in capsys.readouterr().out
    x = ember.randn(2, 1, 8, 8)
    assert_onnxruntime_agrees(out, model, x)


@pytest.mark.parametrize("compress", [["--quantize", "static"], ["--quantize", "dynamic"],
                                      ["--prune", "0.3", "--quantize", "static", "--finetune-epochs", "0"],
                                      ["--quantize", "qat", "--finetune-epochs", "1"]],
                         ids=["static", "dynamic", "prune+static", "qat"])
def test_a_compressed_int8_model_exports_to_onnx_and_ember_jit_that_follow_the_input(compress, tmp_path, capsys):
    # `ember compress --quantize ...` then `ember export`: both files compute what the int8
    # model computes on real digits, not a constant (onnxruntime within one output step).
    ember.manual_seed(0)
    overrides = {"num_classes": 10, "in_channels": 1}
    dense = tmp_path / "dense.pt"
    ember.save({"model_name": "resnet8_cifar", "model": ember.zoo.create_model("resnet8_cifar", **overrides)
                .state_dict(), "model_overrides": overrides, "data": {"name": "digits", "input_shape": [1, 8, 8]}},
               dense)
    assert main(["compress", "resnet8_cifar", "--weights", str(dense), "--data", "digits", *compress,
                 "--out", str(tmp_path / "c"), "--threads", "1"]) == 0
    weights = str(tmp_path / "c" / "compressed.pt")
    assert main(["export", "resnet8_cifar", "--weights", weights, "--out", str(tmp_path / "m.onnx"),
                 "--threads", "1"]) == 0
    assert main(["export", "resnet8_cifar", "--weights", weights, "--format", "ember-jit", "--batch", "4",
                 "--out", str(tmp_path / "m.ejit"), "--threads", "1"]) == 0
    capsys.readouterr()
    model = ember.zoo.create_model("resnet8_cifar", pretrained=weights).eval()
    digits = ember.data.load_dataset("digits", split="test")
    x = ember.stack([digits[i][0] for i in range(4)])
    want = model(x).numpy()
    assert np.abs(want[1:] - want[0]).max() > 0  # different digits, different outputs
    np.testing.assert_array_equal(ember.jit.load(tmp_path / "m.ejit")(x).numpy(), want)
    session = onnxruntime.InferenceSession(str(tmp_path / "m.onnx"), providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {"x": x.numpy()})
    step = model.fc.scale if hasattr(model.fc, "scale") else 1e-5  # the int8 classifier's output step
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=step * (1 + 1e-5))


def test_a_quantized_model_that_cannot_be_exported_is_one_line(tmp_path, capsys, monkeypatch):
    import ember_quantization as eq
    from ember_quantization.nn.quantized import Linear, Quantize

    def quantized_output(*args, **kwargs):  # a model ending in int8, without a DeQuantStub
        return ember.nn.Sequential(Quantize(0.1, 128, eq.quint8), Linear(32, 3))
    monkeypatch.setattr(ember.zoo, "create_model", lambda *a, **k: quantized_output())
    for fmt in ("onnx", "ember-jit"):
        assert main(["export", "resnet8_cifar", "--format", fmt, "--out", str(tmp_path / "m"), "--threads", "1"]) == 2
        err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("threads:")]
        assert len(err) == 1 and err[0].startswith("ember export: ") and "quantized tensor" in err[0]
