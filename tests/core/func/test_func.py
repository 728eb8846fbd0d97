"""ember.func against torch.func: the same programs (per-sample gradients with
functional_call + vmap + grad, jacobians, hessians, products over pytrees) give the same
numbers and structures, and the same errors."""

import numpy as np
import pytest
import torch

import ember

rng = np.random.default_rng(0)
X = rng.standard_normal((5, 3)).astype(np.float32)
Y = rng.standard_normal((5, 2)).astype(np.float32)


def _compare(mine, theirs):
    if isinstance(theirs, torch.Tensor):
        assert isinstance(mine, ember.Tensor) and mine.shape == tuple(theirs.shape)
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-6, atol=1e-7)
    elif isinstance(theirs, dict):
        assert isinstance(mine, dict) and list(mine) == list(theirs)
        for k in theirs:
            _compare(mine[k], theirs[k])
    else:
        assert type(mine) is type(theirs) and len(mine) == len(theirs)
        for m, t in zip(mine, theirs):
            _compare(m, t)


def _model(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))


def _per_sample_grads(lib):
    model = _model(lib)
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, x, y):
        out = lib.func.functional_call(model, p, (x.unsqueeze(0),))
        return lib.nn.functional.mse_loss(out, y.unsqueeze(0))
    return lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, lib.tensor(X), lib.tensor(Y))


def test_per_sample_gradients_match_torch():
    _compare(_per_sample_grads(ember), _per_sample_grads(torch))


def test_per_sample_gradients_equal_one_backward_per_sample():
    grads = _per_sample_grads(ember)
    model = _model(ember)
    for i in range(len(X)):
        model.zero_grad()
        ember.nn.functional.mse_loss(model(ember.tensor(X[i:i + 1])), ember.tensor(Y[i:i + 1])).backward()
        for name, p in model.named_parameters():
            np.testing.assert_allclose(grads[name][i].numpy(), p.grad.numpy(), rtol=1e-6)


def f_two(lib):
    return lambda x, y: (x.sin() * y.sum(), {"t": (x.unsqueeze(1) * y).tanh()})


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_jacobians_match_torch_in_structure_and_values(transform, argnums):
    args = (rng.standard_normal(3), rng.standard_normal(2))
    _compare(getattr(ember.func, transform)(f_two(ember), argnums)(*map(ember.tensor, args)),
             getattr(torch.func, transform)(f_two(torch), argnums)(*map(torch.tensor, args)))


def test_hessian_and_nested_grad_match_torch():
    x = rng.standard_normal(3)
    f = {lib: (lambda x, lib=lib: (x.exp() * x.cos()).sum() ** 2) for lib in (ember, torch)}
    _compare(ember.func.hessian(f[ember])(ember.tensor(x)), torch.func.hessian(f[torch])(torch.tensor(x)))
    _compare(ember.func.grad(ember.func.grad(lambda x: x.sin() * x ** 3))(ember.tensor(1.3)),
             torch.func.grad(torch.func.grad(lambda x: x.sin() * x ** 3))(torch.tensor(1.3)))


def test_vjp_and_jvp_over_pytrees_match_torch():
    primal = (rng.standard_normal(3), rng.standard_normal(2))
    cot = (rng.standard_normal(3), {"t": rng.standard_normal((3, 2))})
    tan = (rng.standard_normal(3), rng.standard_normal(2))
    out_e, fn_e = ember.func.vjp(f_two(ember), *map(ember.tensor, primal))
    out_t, fn_t = torch.func.vjp(f_two(torch), *map(torch.tensor, primal))
    _compare(out_e, out_t)
    to = {ember: ember.tensor, torch: torch.tensor}
    _compare(fn_e((to[ember](cot[0]), {"t": to[ember](cot[1]["t"])})),
             fn_t((to[torch](cot[0]), {"t": to[torch](cot[1]["t"])})))
    _compare(ember.func.jvp(f_two(ember), tuple(map(ember.tensor, primal)), tuple(map(ember.tensor, tan))),
             torch.func.jvp(f_two(torch), tuple(map(torch.tensor, primal)), tuple(map(torch.tensor, tan))))


def test_grad_has_aux_argnums_and_requires_grad_follow_torch():
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        g = lib.func.grad(lambda x: (x ** 3).sum())(x)
        assert g.requires_grad  # differentiable again, as its input requires grad
        assert not lib.func.grad(lambda x: (x ** 3).sum())(x.detach()).requires_grad
    _compare(ember.func.grad(lambda x, y: ((x * y).sum(), y), argnums=(0, 1), has_aux=True)(
        ember.ones(2), ember.tensor([3.0, 4.0])),
        torch.func.grad(lambda x, y: ((x * y).sum(), y), argnums=(0, 1), has_aux=True)(
        torch.ones(2), torch.tensor([3.0, 4.0])))


@pytest.mark.parametrize("in_dims, out_dims", [(0, 0), (1, 0), ((0, None), 1), ((1, 0), -1)])
def test_vmap_dims_match_torch(in_dims, out_dims):
    a, b = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))

    def f(lib):
        return lambda x, y: (x.unsqueeze(-1) * y.sum() + 1).exp()
    _compare(ember.func.vmap(f(ember), in_dims, out_dims)(ember.tensor(a), ember.tensor(b)),
             torch.func.vmap(f(torch), in_dims, out_dims)(torch.tensor(a), torch.tensor(b)))


def test_nested_vmap_matches_torch():
    a = rng.standard_normal((2, 3, 4))
    f = {lib: lib.func.vmap(lib.func.vmap(lambda v: v.softmax(0))) for lib in (ember, torch)}
    _compare(f[ember](ember.tensor(a)), f[torch](torch.tensor(a)))


def test_randomness_modes():
    with pytest.raises(RuntimeError, match="called random operation while in randomness error mode"):
        ember.func.vmap(lambda x: x + ember.rand(2))(ember.ones(3, 2))
    same = ember.func.vmap(lambda x: x + ember.rand(2), randomness="same")(ember.zeros(3, 2))
    assert (same == same[0]).all()
    different = ember.func.vmap(lambda x: x + ember.rand(2), randomness="different")(ember.zeros(3, 2))
    assert not (different == different[0]).all()


def _same_error(call, exc):
    with pytest.raises(exc) as theirs:
        call(torch)
    with pytest.raises(exc) as mine:
        call(ember)
    assert str(mine.value) == str(theirs.value)


@pytest.mark.parametrize("call, exc", [
    (lambda lib: lib.func.vmap(lambda x, y: x + y)(lib.ones(3), lib.ones(4)), ValueError),
    (lambda lib: lib.func.vmap(lambda x: x, in_dims=None)(lib.ones(3)), ValueError),
    (lambda lib: lib.func.grad(lambda x: x * 2)(lib.ones(3)), RuntimeError),
    (lambda lib: lib.func.grad(lambda x: 2)(lib.ones(3)), RuntimeError),
    (lambda lib: lib.func.grad(lambda x: x.sum())(3.0), ValueError),
], ids=["vmap-sizes", "vmap-in-dims", "grad-not-scalar", "grad-not-tensor", "grad-not-tensor-input"])
def test_errors_are_torchs(call, exc):
    _same_error(call, exc)


def test_functional_call_swaps_parameters_and_buffers_and_restores_them():
    for lib in (ember, torch):
        bn = lib.nn.BatchNorm1d(2)
        stats = {"running_mean": lib.ones(2), "running_var": lib.full((2,), 4.0)}
        bn.eval()
        out = lib.func.functional_call(bn, stats, lib.tensor([[3.0, 1.0]]))
        np.testing.assert_allclose(out.detach().numpy(), [[1.0, 0.0]], atol=1e-3)
        assert (bn.running_mean == 0).all()  # the module's own state is back
        raiser = _Raiser(lib)
        with pytest.raises(ZeroDivisionError):
            lib.func.functional_call(raiser, {"weight": lib.zeros(1)}, ())
        assert raiser.weight.tolist() == [1.0]
    _same_error(lambda lib: lib.func.functional_call(lib.nn.Linear(2, 2), {"weight": lib.ones(2, 2), "x": lib.ones(1)},
                                                     (lib.ones(2),), strict=True), RuntimeError)


class _Raiser:
    def __new__(cls, lib):
        class Raiser(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.weight = lib.nn.Parameter(lib.ones(1))

            def forward(self):
                raise ZeroDivisionError("raised inside the call")
        return Raiser()


def test_functional_call_ties_weights_as_torch():
    for lib in (ember, torch):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Embedding(3, 2), lib.nn.Linear(2, 3, bias=False))
        model[1].weight = model[0].weight
        out = lib.func.functional_call(model, {"0.weight": lib.ones(3, 2)}, (lib.tensor([1]),))
        assert out.tolist() == [[2.0, 2.0, 2.0]]


def _ensemble_outputs(lib):
    lib.manual_seed(0)
    models = [lib.nn.Linear(3, 2) for _ in range(4)]
    params, buffers = lib.func.stack_module_state(models)
    assert all(p.requires_grad and p.is_leaf for p in params.values())

    def run(p, b, x):
        return lib.func.functional_call(models[0], (p, b), (x,))
    return lib.func.vmap(run, in_dims=(0, 0, None))(params, buffers, lib.tensor(X))


def test_an_ensemble_through_stack_module_state_matches_torch():
    _compare(_ensemble_outputs(ember), _ensemble_outputs(torch))


def test_grad_with_batched_grad_outputs_matches_torch():
    results = []
    for lib in (ember, torch):
        x = lib.tensor(X[0], requires_grad=True)
        y = x.sin() * x.sum()
        results.append(lib.autograd.grad(y, x, lib.eye(3), is_grads_batched=True))
    _compare(*results)
