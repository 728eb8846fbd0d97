"""Tracing and exporting int8 models (ember/onnx/symbolic_quantized.py, ember.jit.trace of the
ember-quantization plugin's ops): the traced graph, the ember-jit file and the ONNX model
follow the input, and onnxruntime agrees with ember's quantized model on new inputs.

PyTorch counterpart: test/onnx/test_pytorch_onnx_onnxruntime.py's quantized cases (v2.13),
which compare onnxruntime with the quantized torch model.
"""

import io

import ember_quantization as eq
import numpy as np
import onnxruntime
import pytest
from ember_quantization.nn.quantized import DeQuantize, Linear, Quantize

import ember
from ember.zoo.quantizable import quantize_static


def _static_resnet():
    ember.manual_seed(0)
    model = ember.zoo.create_model("resnet8_cifar").eval()
    return quantize_static(model, [(ember.randn(8, 3, 32, 32), None) for _ in range(2)])


def _dynamic_mlp():
    ember.manual_seed(0)
    model = ember.nn.Sequential(ember.nn.Linear(12, 32), ember.nn.ReLU(), ember.nn.Linear(32, 5)).eval()
    return eq.quantize_dynamic(model)


def _onnxruntime(model, example, fresh):
    buffer = io.BytesIO()
    proto = ember.onnx.export(model, (example,), buffer, input_names=["x"], dynamic_axes={"x": {0: "batch"}})
    session = onnxruntime.InferenceSession(buffer.getvalue(), providers=["CPUExecutionProvider"])
    return proto, session.run(None, {"x": fresh.numpy()})[0]


def test_a_traced_static_int8_model_follows_its_input_and_its_ember_jit_file_too():
    model = _static_resnet()
    example, fresh = ember.randn(2, 3, 32, 32), ember.randn(2, 3, 32, 32)  # a trace keeps the batch size
    traced = ember.jit.trace(model, (example,))
    targets = {n.target.qualname for n in traced.graph.nodes if n.op == "call_function"}
    assert {"quantized::quantize_per_tensor", "quantized::conv2d", "quantized::add", "quantized::linear"} <= targets
    want = model(fresh).numpy()
    assert not np.array_equal(want, model(example).numpy())  # the inputs give different outputs
    np.testing.assert_array_equal(traced(fresh).numpy(), want)
    buffer = io.BytesIO()
    ember.jit.save(traced, buffer)
    buffer.seek(0)
    np.testing.assert_array_equal(ember.jit.load(buffer)(fresh).numpy(), want)


def test_onnxruntime_runs_a_static_int8_resnet_on_integer_ops_within_one_step():
    model = _static_resnet()
    fresh = ember.randn(5, 3, 32, 32)
    proto, got = _onnxruntime(model, ember.randn(2, 3, 32, 32), fresh)
    ops = {n.op_type for n in proto.graph.node}
    assert {"QuantizeLinear", "DequantizeLinear", "ConvInteger", "MatMulInteger"} <= ops
    want = model(fresh).numpy()
    steps = np.abs(got - want) / model.fc.scale  # the output is the int8 classifier's, dequantized
    assert steps.max() <= 1 + 1e-5 and (steps < 1e-5).mean() >= 0.95


def test_onnxruntime_runs_a_dynamic_int8_model_within_one_input_step():
    model = _dynamic_mlp()
    fresh = ember.randn(7, 12) * 3
    proto, got = _onnxruntime(model, ember.randn(2, 12), fresh)
    assert "MatMulInteger" in {n.op_type for n in proto.graph.node}
    want = model(fresh).numpy()
    # one step of the first layer's input scale, through the largest row of the first weight; exact in practice
    x = fresh.numpy()
    step = (max(x.max(), 0) - min(x.min(), 0)) / 127
    bound = step * np.abs(model[0].weight().dequantize().numpy()).sum(1).max()
    np.testing.assert_allclose(got, want, rtol=0, atol=bound)
    assert np.mean(np.abs(got - want) <= 1e-6) >= 0.95


def test_a_quantized_model_that_returns_a_quantized_tensor_is_refused_by_the_trace():
    model = ember.nn.Sequential(Quantize(0.1, 128, eq.quint8), Linear(4, 3))
    with pytest.raises(ember.jit.TracingError, match="returns a quantized tensor.*DeQuantStub"):
        ember.jit.trace(model, (ember.randn(2, 4),))


def test_a_weight_with_zero_points_that_leave_int8_is_refused_by_name():
    qlinear = Linear(4, 3)
    weight = eq.quantize_per_tensor(ember.full((3, 4), -20.0), 0.1, 20, eq.qint8)  # integers -128, zero point 20
    qlinear.set_weight_bias(weight, ember.zeros(3))
    model = ember.nn.Sequential(Quantize(0.1, 128, eq.quint8), qlinear, DeQuantize())
    with pytest.raises(ember.onnx.OnnxExporterError, match="non-zero zero points"):
        ember.onnx.export(model, (ember.randn(2, 4),), io.BytesIO())
