"""deform_conv2d as one node: in an ``ember.jit.trace`` graph (the op), in an fx graph
(the ``DeformConv2d`` leaf module), and in an ONNX export (one ``DeformConv``, opset 19)
that onnxruntime runs to ember's outputs.

Tests for plugins/vision/src/ember_vision/ops/deform_conv2d_onnx.py and the op's trace
(PyTorch counterpart: torchvision/ops/_register_onnx_ops.py, torchvision 0.28).
"""

import io

import numpy as np
import onnxruntime
import pytest

import ember
import ember.onnx
from ember_vision.ops import DeformConv2d


class DeformableBlock(ember.nn.Module):
    """The usual DCNv2 block: a plain convolution predicts offsets and mask."""

    def __init__(self, use_mask, groups=2, offset_groups=2):
        super().__init__()
        self.use_mask = use_mask
        self.offset = ember.nn.Conv2d(4, offset_groups * 2 * 9, 3, padding=1, stride=2)
        self.mask = ember.nn.Conv2d(4, offset_groups * 9, 3, padding=1, stride=2)
        self.dcn = DeformConv2d(4, 6, 3, padding=1, stride=2, dilation=1, groups=groups)

    def forward(self, x):
        offset = self.offset(x) * 4  # reaching well outside the 7x6 image
        return self.dcn(x, offset, self.mask(x).sigmoid() if self.use_mask else None)


def _count(names, wanted):
    return sum(1 for n in names if n == wanted)


def test_one_node_in_a_jit_trace():
    model = DeformableBlock(True)
    x = ember.randn(2, 4, 7, 6)
    traced = ember.jit.trace(model, (x,))
    targets = [getattr(n.target, "qualname", None) for n in traced.graph.nodes if n.op == "call_function"]
    assert _count(targets, "torchvision::deform_conv2d") == 1
    np.testing.assert_array_equal(traced(x).detach().numpy(), model(x).detach().numpy())


def test_a_saved_trace_loads_and_runs_the_op():
    model = DeformableBlock(True)
    x = ember.randn(1, 4, 7, 6)
    buffer = io.BytesIO()
    ember.jit.save(ember.jit.trace(model, (x,)), buffer)
    buffer.seek(0)
    loaded = ember.jit.load(buffer)
    np.testing.assert_array_equal(loaded(x).detach().numpy(), model(x).detach().numpy())


def test_one_node_in_an_fx_trace():
    graph_module = ember.fx.symbolic_trace(DeformableBlock(False))
    modules = [n.target for n in graph_module.graph.nodes if n.op == "call_module"]
    assert modules.count("dcn") == 1


@pytest.mark.parametrize("use_mask", [False, True], ids=["dcn", "mask"])
def test_onnx_deform_conv_runs_in_onnxruntime(use_mask):
    ember.manual_seed(0)
    model = DeformableBlock(use_mask).eval()
    x = ember.randn(3, 4, 7, 6)
    proto = ember.onnx.export(model, x, io.BytesIO(), opset_version=19, dynamic_axes={"x": {0: "batch"}})
    nodes = [n for n in proto.graph.node if n.op_type == "DeformConv"]
    assert len(nodes) == 1 and len(nodes[0].input) == (5 if use_mask else 4)
    session = onnxruntime.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    for batch in (3, 1):
        xb = x[:batch]
        (got,) = session.run(None, {"x": xb.numpy()})
        np.testing.assert_allclose(got, model(xb).detach().numpy(), rtol=1e-5, atol=1e-5)


def test_onnx_before_opset_19_names_the_opset():
    with pytest.raises(ember.onnx.OnnxExporterError, match="needs opset 19 or later"):
        ember.onnx.export(DeformableBlock(False), ember.randn(1, 4, 7, 6), io.BytesIO(), opset_version=18)
