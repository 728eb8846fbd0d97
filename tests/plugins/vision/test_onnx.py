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


def _boxes_with_ties(rng, n, classes):
    """Clustered boxes, scores drawn from a few values (ties within and across classes),
    and some boxes repeated exactly, with the same score, in another class."""
    centres = rng.uniform(0, 40, size=(5, 2))[rng.integers(0, 5, size=n)] + rng.normal(0, 2, size=(n, 2))
    sizes = rng.uniform(4, 12, size=(n, 2))
    boxes = np.concatenate([centres - sizes / 2, centres + sizes / 2], 1)
    scores = rng.integers(1, 6, size=n) / 5
    idxs = rng.integers(0, classes, size=n)
    twins = rng.choice(n, size=2 * (n // 8), replace=False)
    boxes[twins[1::2]], scores[twins[1::2]] = boxes[twins[::2]], scores[twins[::2]]
    idxs[twins[1::2]] = (idxs[twins[::2]] + 1) % classes
    return (ember.tensor(boxes, dtype=ember.float32), ember.tensor(scores, dtype=ember.float32),
            ember.tensor(idxs, dtype=ember.int64))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("threshold", [0.3, 0.6])
def test_batched_nms_agrees_with_onnxruntime(threshold, seed):
    """torchvision's trick: each class's boxes offset by class * (largest coordinate + 1),
    so that no two classes overlap, then one NonMaxSuppression; with ties in the scores,
    across classes too, onnxruntime keeps the same boxes in the same order."""
    boxes, scores, idxs = _boxes_with_ties(np.random.default_rng(seed), 60, 4)
    proto, (got,) = _run(lambda b, s, i: ops.batched_nms(b, s, i, threshold), (boxes, scores, idxs))
    assert {"NonMaxSuppression", "ReduceMax"} <= {n.op_type for n in proto.graph.node}
    want = ops.batched_nms(boxes, scores, idxs, threshold)
    assert got.dtype == np.int64 and got.tolist() == want.tolist()
    assert len(set(scores[want].tolist())) < len(want)  # ties among the kept boxes
    kept_twins = [(i, j) for i in want.tolist() for j in want.tolist()
                  if i < j and boxes[i].tolist() == boxes[j].tolist()]
    assert kept_twins  # a box repeated in another class survives in both
