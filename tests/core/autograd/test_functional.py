"""ember.autograd.functional against torch.autograd.functional: the same functions at the
same points give the same jacobians, hessians and products, nested and shaped as torch
nests them, with torch's errors."""

import numpy as np
import pytest
import torch

import ember

rng = np.random.default_rng(0)
X = rng.standard_normal((3,))
Y = rng.standard_normal((2, 3))
W = rng.standard_normal((3, 4))


def two_in_two_out(lib):
    w = lib.tensor(W)

    def f(x, y):
        return (x.sin() * y.sum(), (y @ w).tanh() + x.sum())
    return f


def one_in_one_out(lib):
    w = lib.tensor(W)
    return lambda x: (x.exp() @ w).cos()


def scalar_two_in(lib):
    return lambda x, y: ((x.unsqueeze(0) * y) ** 3).sum() + (x * x).prod()


def scalar_one_in(lib):
    return lambda x: (x.exp() * x.sin()).sum() ** 2


def independent_of_y(lib):
    return lambda x, y: (x ** 2).sum()


def _inputs(lib, which):
    x, y = lib.tensor(X), lib.tensor(Y)
    return {"one": x, "two": (x, y)}[which]


def _compare(mine, theirs):
    """Nested tuples of tensors, compared leaf by leaf (structure included)."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(mine, ember.Tensor)
        assert mine.shape == tuple(theirs.shape)
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-12, atol=1e-12)
        return
    assert isinstance(mine, tuple) and len(mine) == len(theirs)
    for m, t in zip(mine, theirs):
        _compare(m, t)


@pytest.mark.parametrize("make, which", [(two_in_two_out, "two"), (one_in_one_out, "one")])
def test_jacobian_matches_torch(make, which):
    _compare(ember.autograd.functional.jacobian(make(ember), _inputs(ember, which)),
             torch.autograd.functional.jacobian(make(torch), _inputs(torch, which)))


@pytest.mark.parametrize("make, which", [(scalar_two_in, "two"), (scalar_one_in, "one"), (independent_of_y, "two")])
def test_hessian_matches_torch(make, which):
    _compare(ember.autograd.functional.hessian(make(ember), _inputs(ember, which)),
             torch.autograd.functional.hessian(make(torch), _inputs(torch, which)))


def _v_like(lib, shapes):
    values = [rng.standard_normal(s) for s in shapes]
    return tuple(lib.tensor(v) for v in values), tuple(torch.tensor(v) for v in values)


@pytest.mark.parametrize("product", ["vjp", "jvp"])
@pytest.mark.parametrize("make, which", [(two_in_two_out, "two"), (one_in_one_out, "one")])
def test_vjp_and_jvp_match_torch(product, make, which):
    outputs = make(torch)(*(_inputs(torch, which) if which == "two" else (_inputs(torch, which),)))
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    refs = outputs if product == "vjp" else (_inputs(torch, which) if which == "two" else (_inputs(torch, which),))
    mine_v, torch_v = _v_like(ember, [tuple(r.shape) for r in refs])
    if len(refs) == 1:
        mine_v, torch_v = mine_v[0], torch_v[0]
    _compare(getattr(ember.autograd.functional, product)(make(ember), _inputs(ember, which), mine_v),
             getattr(torch.autograd.functional, product)(make(torch), _inputs(torch, which), torch_v))


@pytest.mark.parametrize("product", ["vhp", "hvp"])
@pytest.mark.parametrize("make, which", [(scalar_two_in, "two"), (scalar_one_in, "one"), (independent_of_y, "two")])
def test_vhp_and_hvp_match_torch(product, make, which):
    shapes = [(3,), (2, 3)] if which == "two" else [(3,)]
    mine_v, torch_v = _v_like(ember, shapes)
    if which == "one":
        mine_v, torch_v = mine_v[0], torch_v[0]
    _compare(getattr(ember.autograd.functional, product)(make(ember), _inputs(ember, which), mine_v),
             getattr(torch.autograd.functional, product)(make(torch), _inputs(torch, which), torch_v))


def test_create_graph_lets_the_result_be_differentiated_again():
    def grad_of_jacobian_trace(lib):
        x = lib.tensor(X, requires_grad=True)
        jac = lib.autograd.functional.jacobian(one_in_one_out(lib), x, create_graph=True)
        (g,) = lib.autograd.grad(jac.sum(), x)
        return g
    np.testing.assert_allclose(grad_of_jacobian_trace(ember).numpy(), grad_of_jacobian_trace(torch).numpy(),
                               rtol=1e-12)


def test_results_are_detached_and_inputs_untouched():
    x = ember.tensor(X, requires_grad=True)
    jac = ember.autograd.functional.jacobian(one_in_one_out(ember), x)
    assert not jac.requires_grad and x.grad is None


def test_a_single_element_point_needs_no_v():
    point = 1.5
    mine = ember.autograd.functional.jvp(lambda x: x ** 3, ember.tensor(point))
    theirs = torch.autograd.functional.jvp(lambda x: x ** 3, torch.tensor(point))
    _compare(mine, theirs)


def _same_error(call, exc=RuntimeError):
    with pytest.raises(exc) as theirs:
        call(torch)
    with pytest.raises(exc) as mine:
        call(ember)
    assert str(mine.value) == str(theirs.value).replace("torch.Size", "ember.Size")


@pytest.mark.parametrize("call", [
    lambda lib: lib.autograd.functional.jacobian(independent_of_y(lib), _inputs(lib, "two"), strict=True),
    lambda lib: lib.autograd.functional.vjp(one_in_one_out(lib), _inputs(lib, "one")),
    lambda lib: lib.autograd.functional.vjp(one_in_one_out(lib), _inputs(lib, "one"), lib.ones(5)),
    lambda lib: lib.autograd.functional.jvp(two_in_two_out(lib), _inputs(lib, "two"), (lib.ones(3),)),
    lambda lib: lib.autograd.functional.hessian(one_in_one_out(lib), _inputs(lib, "one")),
    lambda lib: lib.autograd.functional.vjp(lambda x: x.detach(), _inputs(lib, "one"), lib.ones(3), strict=True),
], ids=["strict-independent", "v-none", "v-shape", "v-length", "hessian-not-scalar", "strict-no-grad"])
def test_errors_are_torchs(call):
    _same_error(call)


def test_bad_inputs_are_a_type_error_as_in_torch():
    _same_error(lambda lib: lib.autograd.functional.jacobian(lambda x: x, [1.0]), TypeError)


@pytest.mark.parametrize("kind", ["one", "two"])
def test_forward_mode_jacobian_matches_torch(kind):
    # (torch's vmapped forward mode refuses one_in_one_out's vector @ matrix: its tangent has a batch dim too many)
    f = {"one": lambda lib: lambda x: (lib.tensor(W).T @ x.exp()).cos(), "two": two_in_two_out}[kind]
    mine = ember.autograd.functional.jacobian(f(ember), _inputs(ember, kind), vectorize=True, strategy="forward-mode")
    theirs = torch.autograd.functional.jacobian(f(torch), _inputs(torch, kind), vectorize=True,
                                                strategy="forward-mode")
    flat = [mine] if kind == "one" else [t for row in mine for t in row]
    expected = [theirs] if kind == "one" else [t for row in theirs for t in row]
    for a, b in zip(flat, expected):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("options, exc", [({}, NotImplementedError),
                                          ({"vectorize": True, "strict": True}, RuntimeError),
                                          ({"vectorize": True, "create_graph": True}, NotImplementedError)])
def test_forward_mode_jacobian_refuses_as_torch(options, exc):
    _same_error(lambda lib: lib.autograd.functional.jacobian(one_in_one_out(lib), _inputs(lib, "one"),
                                                             strategy="forward-mode", **options), exc)
