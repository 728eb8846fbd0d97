"""ember.utils.checkpoint against torch.utils.checkpoint: the same outputs and gradients
(inputs and parameters), dropout's mask replayed, both use_reentrant variants, keyword
arguments, tuples, checkpoint_sequential, and torch's warnings and errors."""

import warnings

import numpy as np
import pytest
import torch

import ember


def _model(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Dropout(0.3), lib.nn.Linear(8, 8),
                             lib.nn.ReLU(), lib.nn.Linear(8, 3))


def _data():
    return np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)


def _step(lib, run, x_requires_grad=True):
    model = _model(lib)
    lib.manual_seed(1)
    x = lib.tensor(_data(), requires_grad=x_requires_grad)
    y = run(lib, model, x)
    (y * y).sum().backward()
    grads = [None if x.grad is None else x.grad.numpy()] + [p.grad.numpy() for p in model.parameters()]
    return y.detach().numpy(), grads


def _same(run, x_requires_grad=True):
    (ty, tg), (ey, eg) = (_step(lib, run, x_requires_grad) for lib in (torch, ember))
    np.testing.assert_allclose(ey, ty, rtol=1e-5, atol=1e-6)
    for e, t in zip(eg, tg):
        assert (e is None) == (t is None)
        if t is not None:
            np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_a_checkpointed_model_gives_torchs_outputs_and_gradients(use_reentrant):
    _same(lambda lib, m, x: lib.utils.checkpoint.checkpoint(m, x, use_reentrant=use_reentrant))


def test_without_reentrance_parameters_get_gradients_though_the_input_needs_none():
    _same(lambda lib, m, x: lib.utils.checkpoint.checkpoint(m, x, use_reentrant=False), x_requires_grad=False)


def test_with_reentrance_an_input_needing_no_gradient_leaves_nothing_to_differentiate():
    for lib in (torch, ember):
        model, x = _model(lib), lib.tensor(_data())
        with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
            y = lib.utils.checkpoint.checkpoint(model, x, use_reentrant=True)
        assert not y.requires_grad
        with pytest.raises(RuntimeError, match="does not require grad"):
            y.sum().backward()


def test_segments_of_a_sequential():
    _same(lambda lib, m, x: lib.utils.checkpoint.checkpoint_sequential(m, 3, x, use_reentrant=False))
    _same(lambda lib, m, x: lib.utils.checkpoint.checkpoint_sequential(m, 2, x, use_reentrant=True))


def test_keyword_arguments_and_tuple_outputs_without_reentrance():
    def run(lib, model, x):
        def segment(a, scale=1.0):
            h = model(a)
            return h * scale, h.sum()

        first, total = lib.utils.checkpoint.checkpoint(segment, x, scale=3.0, use_reentrant=False)
        return first + total

    _same(run)


def test_nested_checkpoints():
    def run(lib, model, x):
        inner = lambda h: lib.utils.checkpoint.checkpoint(model[3:], h, use_reentrant=False)  # noqa: E731
        return lib.utils.checkpoint.checkpoint(lambda a: inner(model[:3](a)), x, use_reentrant=False)

    _same(run)


def test_the_default_warns_and_is_reentrant_and_bad_arguments_raise():
    for lib in (torch, ember):
        x = lib.ones(2, requires_grad=True)
        with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
            lib.utils.checkpoint.checkpoint(lambda a: a * 2, x)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
                lib.utils.checkpoint.checkpoint(lambda a, scale: a * scale, x, scale=2.0, use_reentrant=True)


def test_nothing_inside_the_segment_is_kept_for_backward():
    # Under checkpoint the segment's ops record no nodes: the output's node is the one
    # checkpoint node, whose inputs are the segment's input and the parameters.
    model, x = _model(ember), ember.tensor(_data(), requires_grad=True)
    y = ember.utils.checkpoint.checkpoint(model, x, use_reentrant=False)
    assert type(y.grad_fn).__name__ == "CheckpointFunctionBackward"
    assert len(y.grad_fn.next_functions) == 1 + 1 + len(list(model.parameters()))
