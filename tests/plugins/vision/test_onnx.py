"""roi_align and nms exported by ember.onnx.export (RoiAlign at opset 16+, NonMaxSuppression)
and run by onnxruntime: the same values and indices as ember's kernels."""

import io

import numpy as np
import onnxruntime
import pytest

import ember
import ember.onnx
from ember_vision import ops


def _run(fn, inputs, opset=17):
    buffer = io.BytesIO()
    proto = ember.onnx.export(fn, inputs, buffer, opset_version=opset)
    session = onnxruntime.InferenceSession(buffer.getvalue(), providers=["CPUExecutionProvider"])
    feed = {i.name: x.numpy() for i, x in zip(proto.graph.input, inputs)}
    return proto, session.run(None, feed)


@pytest.mark.parametrize("aligned", [False, True])
@pytest.mark.parametrize("sampling_ratio", [-1, 2])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_roi_align_agrees_with_onnxruntime(aligned, sampling_ratio, dtype):
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.normal(size=(2, 3, 10, 12)), dtype=getattr(ember, dtype))
    corners = rng.uniform(-4, 22, size=(7, 2))
    rois = np.concatenate([rng.integers(0, 2, size=(7, 1)), corners, corners + rng.uniform(0.3, 12, size=(7, 2))], 1)
    rois = ember.tensor(rois, dtype=getattr(ember, dtype))
    fn = lambda t, r: ops.roi_align(t, r, (3, 4), 0.5, sampling_ratio, aligned)  # noqa: E731
    proto, (got,) = _run(fn, (x, rois))
    assert "RoiAlign" in {n.op_type for n in proto.graph.node}
    np.testing.assert_allclose(got, fn(x, rois).numpy(), rtol=1e-5, atol=1e-5)


def test_roi_align_needs_opset_16():
    x, rois = ember.randn(1, 1, 4, 4), ember.tensor([[0.0, 0, 0, 2, 2]])
    with pytest.raises(ember.onnx.OnnxExporterError, match="needs opset 16 or later"):
        ember.onnx.export(lambda t, r: ops.roi_align(t, r, 2), (x, rois), io.BytesIO(), opset_version=14)


@pytest.mark.parametrize("threshold", [0.3, 0.6])
def test_nms_agrees_with_onnxruntime(threshold):
    rng = np.random.default_rng(1)
    centres = rng.uniform(0, 40, size=(6, 2))[rng.integers(0, 6, size=50)] + rng.normal(0, 2, size=(50, 2))
    sizes = rng.uniform(4, 12, size=(50, 2))
    boxes = ember.tensor(np.concatenate([centres - sizes / 2, centres + sizes / 2], 1), dtype=ember.float32)
    scores = ember.tensor(rng.permutation(50) / 50, dtype=ember.float32)  # distinct scores
    proto, (got,) = _run(lambda b, s: ops.nms(b, s, threshold), (boxes, scores))
    assert "NonMaxSuppression" in {n.op_type for n in proto.graph.node}
    assert got.tolist() == ops.nms(boxes, scores, threshold).tolist()
