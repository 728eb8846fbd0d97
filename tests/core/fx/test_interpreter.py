"""ember.fx.Interpreter, Transformer and passes.ShapeProp against eager runs.

PyTorch counterpart: test/test_fx.py (interpreter and transformer tests) (v2.13).
"""

import numpy as np

import ember
import ember.fx as fx
from ember import nn
from ember.fx.passes import ShapeProp


def _model():
    ember.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 4 * 4, 5)).eval()


def test_interpreter_gives_the_module_result():
    model = _model()
    gm = fx.symbolic_trace(model)
    x = ember.randn(2, 3, 6, 6)
    np.testing.assert_array_equal(fx.Interpreter(gm).run(x).detach().numpy(), model(x).detach().numpy())


class _CountCalls(fx.Interpreter):
    def __init__(self, module):
        super().__init__(module)
        self.seen = []

    def call_module(self, target, args, kwargs):
        self.seen.append(target)
        return super().call_module(target, args, kwargs)


def test_interpreter_methods_see_each_node():
    gm = fx.symbolic_trace(_model())
    interpreter = _CountCalls(gm)
    interpreter.run(ember.randn(1, 3, 6, 6))
    assert interpreter.seen == ["0", "1", "2", "3"]


class _ReluToSigmoid(fx.Transformer):
    def call_module(self, target, args, kwargs):
        if isinstance(self.fetch_attr(target), nn.ReLU):
            return ember.sigmoid(args[0])
        return super().call_module(target, args, kwargs)


def test_transformer_rewrites_into_a_new_module():
    model = _model()
    new = _ReluToSigmoid(fx.symbolic_trace(model)).transform()
    assert "sigmoid = ember.sigmoid(_0)" in new.code
    x = ember.randn(2, 3, 6, 6)
    expected = model[3](model[2](ember.sigmoid(model[0](x))))
    np.testing.assert_allclose(new(x).detach().numpy(), expected.detach().numpy(), rtol=1e-6)


def test_shape_prop_records_what_eager_produces():
    model = _model()
    gm = fx.symbolic_trace(model)
    x = ember.randn(2, 3, 6, 6)
    ShapeProp(gm).propagate(x)
    shapes = {n.name: n.meta["tensor_meta"].shape for n in gm.graph.nodes if "tensor_meta" in n.meta}
    assert shapes == {"input_1": (2, 3, 6, 6), "_0": (2, 4, 4, 4), "_1": (2, 4, 4, 4), "_2": (2, 64),
                      "_3": tuple(model(x).shape), "output": (2, 5)}
    assert all(n.meta["tensor_meta"].dtype == ember.float32 for n in gm.graph.nodes if "tensor_meta" in n.meta)
