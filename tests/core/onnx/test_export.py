"""ember.onnx.export: the zoo's networks as ONNX models that pass onnx.checker's full
check and give ember's outputs in onnxruntime, dynamic batch included.

PyTorch counterpart: test/onnx/test_pytorch_onnx_onnxruntime.py (v2.13).
"""

import io

import numpy as np
import onnx
import onnxruntime
import pytest

import ember
import ember.onnx
from ember import nn

ZOO = [
    ("resnet18", lambda b: (ember.randn(b, 3, 64, 64),), ["images"]),
    ("resnet8_cifar", lambda b: (ember.randn(b, 3, 32, 32),), ["x"]),
    ("transformer_seq2seq_tiny", lambda b: (ember.randint(0, 10, (b, 5)), ember.randint(0, 10, (b, 4))),
     ["src", "tgt_in"]),
    ("gpt_nano", lambda b: (ember.randint(0, 10, (b, 6)),), ["idx"]),
    ("yolo_nano", lambda b: (ember.randn(b, 3, 64, 64),), ["images"]),
]


def _session(proto):
    return onnxruntime.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])


def _flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


@pytest.mark.parametrize("name, make_inputs, input_names", ZOO, ids=[z[0] for z in ZOO])
def test_zoo_models_run_in_onnxruntime_with_a_dynamic_batch(name, make_inputs, input_names):
    ember.manual_seed(0)
    model = ember.zoo.create_model(name).eval()
    buffer = io.BytesIO()
    proto = ember.onnx.export(model, make_inputs(2), buffer, input_names=input_names,
                              dynamic_axes={n: {0: "batch"} for n in input_names})
    onnx.checker.check_model(onnx.load_from_string(buffer.getvalue()), full_check=True)
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    session = _session(proto)
    for batch in (2, 3, 1):
        inputs = make_inputs(batch)
        with ember.no_grad():
            expected = _flat(model(*inputs))
        got = session.run(None, {n: x.numpy() for n, x in zip(input_names, inputs)})
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert g.shape == tuple(e.shape)
            np.testing.assert_allclose(g, e.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("opset", [14, 17, 18, 19])
def test_opset_versions(opset):
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                          nn.Linear(4, 2), nn.LayerNorm(2)).eval()
    x = ember.randn(2, 3, 8, 8)
    proto = ember.onnx.export(model, x, io.BytesIO(), opset_version=opset)
    assert proto.opset_import[0].version == opset
    (got,) = _session(proto).run(None, {"input": x.numpy()})
    np.testing.assert_allclose(got, model(x).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_names_and_a_file_path(tmp_path):
    model = nn.Linear(3, 2).eval()
    path = tmp_path / "linear.onnx"
    ember.onnx.export(model, ember.randn(4, 3), str(path), input_names=["features"], output_names=["scores"])
    loaded = onnx.load(str(path))
    assert [i.name for i in loaded.graph.input] == ["features"]
    assert [o.name for o in loaded.graph.output] == ["scores"]
    x = ember.randn(4, 3)
    (got,) = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(
        None, {"features": x.numpy()})
    np.testing.assert_allclose(got, model(x).detach().numpy(), rtol=1e-6)


def test_a_training_model_is_exported_in_eval_mode_and_left_training():
    model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5), nn.BatchNorm1d(3))
    x = ember.randn(4, 3)
    proto = ember.onnx.export(model, x, io.BytesIO())
    assert model.training
    (got,) = _session(proto).run(None, {"input": x.numpy()})
    model.eval()
    np.testing.assert_allclose(got, model(x).detach().numpy(), rtol=1e-5, atol=1e-6)


class _ZerosFromTheBatch(nn.Module):
    def forward(self, x):
        return x + ember.zeros(x.shape[0], 1)


def test_a_constant_made_from_the_batch_size_cannot_be_dynamic():
    x = ember.randn(2, 3)
    ember.onnx.export(_ZerosFromTheBatch(), x, io.BytesIO())  # fixed batch: fine
    with pytest.raises(ember.onnx.OnnxExporterError, match="changes shape with dynamic axis 0"):
        ember.onnx.export(_ZerosFromTheBatch(), x, io.BytesIO(), dynamic_axes={"x": [0]})


def test_an_op_without_a_conversion_is_named():
    with pytest.raises(ember.onnx.OnnxExporterError, match=r"cannot export node .*aten::cumsum"):
        ember.onnx.export(lambda x: x.cumsum(0), ember.randn(3), io.BytesIO())


def test_bad_arguments():
    with pytest.raises(ValueError, match="opset versions 14 to 19"):
        ember.onnx.export(nn.Linear(2, 2), ember.randn(1, 2), io.BytesIO(), opset_version=9)
    with pytest.raises(ValueError, match="input_names has 2 names for 1 inputs"):
        ember.onnx.export(nn.Linear(2, 2), ember.randn(1, 2), io.BytesIO(), input_names=["a", "b"])


@pytest.mark.parametrize("opset", [14, 18])
@pytest.mark.parametrize("case", ["max", "min", "to_float64", "to_int32", "to_same", "select", "index_int",
                                  "unsqueeze"])
def test_reductions_casts_and_index_views_agree_with_onnxruntime(case, opset):
    """``x.max()``/``x.min()`` (aten::max_all/min_all: ReduceMax/ReduceMin over every axis),
    ``x.to(dtype)`` (aten::_to_copy: Cast), ``select`` and the basic index views recorded
    as select or unsqueeze (aten::_basic_index.*), as torchvision's batched_nms uses them."""
    function = {"max": lambda x: x.max() * x, "min": lambda x: x.min() + x,
                "to_float64": lambda x: x.to(ember.float64), "to_int32": lambda x: (x * 10).to(ember.int32),
                "to_same": lambda x: x.to(ember.float32) + 1, "select": lambda x: x.select(1, 2) * 2,
                "index_int": lambda x: x[1] * 2,
                "unsqueeze": lambda x: x[:, None] + x[None]}[case]
    x = ember.tensor(np.random.default_rng(3).standard_normal((4, 5)).astype(np.float32))
    proto = ember.onnx.export(function, (x,), io.BytesIO(), opset_version=opset)
    onnx.checker.check_model(proto, full_check=True)
    (got,) = _session(proto).run(None, {proto.graph.input[0].name: x.numpy()})
    want = function(x).numpy()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
