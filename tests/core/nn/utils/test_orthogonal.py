"""``parametrizations.orthogonal`` (ember/nn/utils/parametrizations.py) against torch: the
default map per shape, each map with and without trivialization, the state-dict keys
(``parametrizations.weight.original``, ``...0.base``), the weight and the state after a
few SGD steps from the same seed, assignment, and torch's errors."""

import numpy as np
import pytest
import torch

import ember


def _state(module):
    return {k: v.detach().numpy() for k, v in module.state_dict().items()}


def _pair(shape, **kwargs):
    """torch's and ember's Linear with the same weights, made orthogonal after the same seed."""
    out = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        layer = lib.nn.Linear(shape[1], shape[0]).double()
        lib.manual_seed(1)  # the draw that completes a non-square base
        lib.nn.utils.parametrizations.orthogonal(layer, **kwargs)
        out.append(layer)
    return out


def _train(lib, layer, x, steps=3):
    opt = lib.optim.SGD(layer.parameters(), lr=0.1)
    for _ in range(steps):
        opt.zero_grad()
        layer(x).square().sum().backward()
        opt.step()


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
@pytest.mark.parametrize("orthogonal_map", [None, "matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("use_trivialization", [True, False])
def test_orthogonal_trains_as_torchs(shape, orthogonal_map, use_trivialization):
    theirs, ours = _pair(shape, orthogonal_map=orthogonal_map, use_trivialization=use_trivialization)
    expected_map = theirs.parametrizations.weight[0].orthogonal_map.name
    assert ours.parametrizations.weight[0].orthogonal_map == expected_map
    assert list(ours.state_dict()) == list(theirs.state_dict())
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(), atol=1e-10)
    x = np.random.default_rng(0).standard_normal((7, shape[1]))
    _train(torch, theirs, torch.from_numpy(x))
    _train(ember, ours, ember.from_numpy(x))
    expected = _state(theirs)
    for key, value in _state(ours).items():
        np.testing.assert_allclose(value, expected[key], atol=1e-10, err_msg=key)
    q = ours.weight.detach()
    gram = q.T @ q if shape[0] >= shape[1] else q @ q.T
    np.testing.assert_allclose(gram.numpy(), np.eye(min(shape)), atol=1e-10)  # still orthogonal


def test_float32_batch_of_matrices_and_gradient_as_torchs():
    weights = np.random.default_rng(1).standard_normal((2, 4, 3)).astype(np.float32)
    grads = []
    for lib in (torch, ember):
        module = lib.nn.Module()
        module.weight = lib.nn.Parameter(lib.tensor(weights))
        lib.manual_seed(2)
        lib.nn.utils.parametrizations.orthogonal(module)
        (module.weight * lib.tensor(weights)).sum().backward()
        grads.append((module.weight.detach().numpy(), module.parametrizations.weight.original.grad.numpy()))
    np.testing.assert_allclose(grads[1][0], grads[0][0], atol=1e-5)
    np.testing.assert_allclose(grads[1][1], grads[0][1], atol=1e-5)


def test_assigning_an_orthogonal_matrix_keeps_it_as_torch():
    theirs, ours = _pair((4, 4))
    q = np.linalg.qr(np.random.default_rng(3).standard_normal((4, 4)))[0]
    with torch.no_grad():
        theirs.weight = torch.from_numpy(q)
    with ember.no_grad():
        ours.weight = ember.from_numpy(q.copy())
    np.testing.assert_allclose(ours.weight.detach().numpy(), q, atol=1e-10)
    for key, value in _state(ours).items():
        np.testing.assert_allclose(value, _state(theirs)[key], atol=1e-10, err_msg=key)


def test_loading_torchs_state_dict():
    theirs, _ = _pair((5, 3))
    _train(torch, theirs, torch.randn(6, 3, dtype=torch.float64))
    ember.manual_seed(0)
    ours = ember.nn.utils.parametrizations.orthogonal(ember.nn.Linear(3, 5).double())
    ours.load_state_dict({k: ember.from_numpy(v.copy()) for k, v in _state(theirs).items()})
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(), atol=1e-12)


@pytest.mark.parametrize("make, kwargs", [
    (lambda lib: lib.nn.Linear(3, 3), {"orthogonal_map": "qr"}),
    (lambda lib: lib.nn.Linear(3, 3), {"name": "nope"}),
    (lambda lib: lib.nn.BatchNorm1d(3), {}),
])
def test_errors_as_torchs(make, kwargs):
    with pytest.raises(ValueError) as theirs:
        torch.nn.utils.parametrizations.orthogonal(make(torch), **kwargs)
    with pytest.raises(ValueError) as ours:
        ember.nn.utils.parametrizations.orthogonal(make(ember), **kwargs)
    assert str(ours.value) == str(theirs.value)


def test_matrix_exp_without_trivialization_refuses_assignment_as_torch():
    theirs, ours = _pair((4, 4), use_trivialization=False)
    for lib, layer in ((torch, theirs), (ember, ours)):
        with pytest.raises(NotImplementedError, match="when use_trivialization=False"):
            layer.weight = lib.eye(4, dtype=lib.float64)
