"""ember.onnx.register_custom_op_symbolic: an op defined outside the core, written into
ONNX by a symbolic function registered for an opset, used by exports at that opset or
later, and removed again.

Tests for core/src/ember/onnx/registration.py (PyTorch counterpart:
torch/onnx/_internal/torchscript_exporter/utils.py ``register_custom_op_symbolic``, v2.13).
"""

import io

import numpy as np
import onnxruntime
import pytest

import ember
import ember.onnx
from ember import library


@library.custom_op("onnxtest::twice")
def twice(xp, x):
    return x + x


def _twice_symbolic(g, node):
    x = g.value(node.args[0])
    return g.op("Add", x, x)


def _twice_symbolic_17(g, node):
    return g.op("Mul", g.value(node.args[0]), g.scalar(2.0, node.args[0]))


@pytest.fixture
def registered():
    ember.onnx.register_custom_op_symbolic("onnxtest::twice", _twice_symbolic, 15)
    yield
    ember.onnx.unregister_custom_op_symbolic("onnxtest::twice", 15)
    ember.onnx.unregister_custom_op_symbolic("onnxtest::twice", 17)


def _export(opset):
    return ember.onnx.export(lambda x: twice(x).relu(), ember.randn(2, 3), io.BytesIO(), opset_version=opset)


def test_a_registered_symbolic_writes_the_op(registered):
    proto = _export(15)
    assert [n.op_type for n in proto.graph.node] == ["Add", "Relu", "Identity"]
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    session = onnxruntime.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {proto.graph.input[0].name: x})
    np.testing.assert_array_equal(got, twice(ember.tensor(x)).relu().numpy())


def test_the_latest_registration_not_after_the_export_opset_serves(registered):
    ember.onnx.register_custom_op_symbolic("onnxtest::twice", _twice_symbolic_17, 17)
    assert [n.op_type for n in _export(16).graph.node][0] == "Add"
    assert [n.op_type for n in _export(18).graph.node][0] == "Mul"


def test_an_earlier_opset_names_the_one_needed(registered):
    with pytest.raises(ember.onnx.OnnxExporterError, match="needs opset 15 or later"):
        _export(14)


def test_unregistered_again():
    with pytest.raises(ember.onnx.OnnxExporterError, match="which has no ONNX conversion"):
        _export(17)


def test_bad_names():
    with pytest.raises(ValueError, match="must match the format domain::name"):
        ember.onnx.register_custom_op_symbolic("twice", _twice_symbolic, 15)
    with pytest.raises(TypeError, match="must be callable"):
        ember.onnx.register_custom_op_symbolic("onnxtest::twice", None, 15)
