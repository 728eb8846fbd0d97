"""ember.compile on the zoo and on what it cannot capture (clear fallback).

PyTorch counterpart: test/dynamo/test_modules.py, test/inductor/test_torchinductor.py (v2.13).
"""

import numpy as np
import pytest

import ember
from ember import nn

ZOO = [
    ("resnet8_cifar", lambda: (ember.randn(2, 3, 32, 32),)),
    ("transformer_seq2seq_tiny", lambda: (ember.randint(0, 10, (2, 5)), ember.randint(0, 10, (2, 4)))),
    ("gpt_nano", lambda: (ember.randint(0, 10, (2, 6)),)),
    ("yolo_nano", lambda: (ember.randn(1, 3, 64, 64),)),
    ("char_lstm_small", lambda: (ember.randint(0, 20, (2, 7)),)),
]


def _flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


@pytest.mark.parametrize("name, make_inputs", ZOO, ids=[z[0] for z in ZOO])
@pytest.mark.parametrize("algorithm", ["auto", "eager", "im2col", "winograd_2x2", "winograd_4x4"])
def test_zoo_models_compile_to_the_eager_result(name, make_inputs, algorithm):
    ember.manual_seed(0)
    model = ember.zoo.create_model(name).eval()
    compiled = ember.compile(model, conv_algorithm=algorithm)
    inputs = make_inputs()
    with ember.no_grad():
        expected = model(*inputs)
    for _ in range(2):  # the second call reuses the program and its buffers
        got = compiled(*inputs)
        for a, b in zip(_flat(got), _flat(expected), strict=True):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=2e-5)
    assert compiled.fallback_reason is None and len(compiled.programs) == 1


def test_each_input_signature_gets_its_own_program():
    model = nn.Sequential(nn.Linear(3, 2), nn.ReLU()).eval()
    compiled = ember.compile(model)
    for batch in (1, 4, 1):
        x = ember.randn(batch, 3)
        np.testing.assert_allclose(compiled(x).numpy(), model(x).detach().numpy(), rtol=1e-6)
    assert len(compiled.programs) == 2


def test_outputs_carry_no_autograd_history():
    model = nn.Linear(3, 2).eval()
    out = ember.compile(model)(ember.randn(2, 3))
    assert out.grad_fn is None and not out.requires_grad


def test_training_mode_falls_back_with_a_clear_message():
    model = nn.Sequential(nn.Linear(3, 2), nn.Dropout(0.5))
    compiled = ember.compile(model)
    with pytest.warns(RuntimeWarning, match="training mode .* call module.eval"):
        out = compiled(ember.randn(2, 3))
    assert out.shape == (2, 2) and compiled.fallback_reason is not None


class _WritesThroughAView(nn.Module):
    def forward(self, x):
        y = x * 1
        y[0].mul_(0)
        return y + 1


def test_what_cannot_be_captured_runs_eagerly_with_the_reason():
    model = _WritesThroughAView().eval()
    compiled = ember.compile(model)
    x = ember.randn(3, 2)
    with pytest.warns(RuntimeWarning, match="cannot compile _WritesThroughAView .*modified in place"):
        out = compiled(x)
    np.testing.assert_array_equal(out.numpy(), model(x).numpy())


def test_compile_wants_a_module():
    with pytest.raises(TypeError, match="expects an ember.nn.Module"):
        ember.compile(lambda x: x)
