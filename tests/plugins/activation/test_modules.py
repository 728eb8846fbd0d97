"""Every activation module against torch.nn: outputs, input gradients, PReLU's
parameter gradients and state dict, constructor attributes, reprs, in-place modules,
and the names resolving through the plugin (``ember.nn.GELU``, ``ember.nn.functional.gelu``).

Tests for plugins/activation/src/ember_activation/modules/ and the plugin's hooks in
ember_activation/__init__.py (PyTorch counterpart: torch/nn/modules/activation.py, v2.13).
"""

import numpy as np
import pytest
import torch

import ember
import ember_activation
import ember_activation.functional
import ember_activation.modules
from ember.testing import assert_close, assert_parity, make_tensor

# (class name, positional args, keyword args)
MODULES = [
    ("ReLU", (), {}), ("ReLU", (), {"inplace": True}), ("ReLU6", (), {}), ("ReLU6", (True,), {}),
    ("LeakyReLU", (), {}), ("LeakyReLU", (0.2, True), {}), ("PReLU", (), {}), ("PReLU", (3,), {"init": 0.1}),
    ("ELU", (), {}), ("ELU", (0.5,), {"inplace": True}), ("SELU", (), {}), ("SELU", (True,), {}),
    ("CELU", (), {}), ("CELU", (2.0, True), {}), ("GELU", (), {}), ("GELU", ("tanh",), {}),
    ("SiLU", (), {}), ("SiLU", (True,), {}), ("Mish", (), {}), ("Mish", (), {"inplace": True}),
    ("Hardswish", (), {}), ("Hardswish", (True,), {}), ("Hardsigmoid", (), {}), ("Hardsigmoid", (True,), {}),
    ("Hardtanh", (), {}), ("Hardtanh", (-2, 3, True), {}), ("Hardtanh", (-0.5,), {"max_val": 0.25}),
    ("Sigmoid", (), {}), ("Tanh", (), {}), ("Softplus", (), {}), ("Softplus", (2, 10), {}),
    ("Softsign", (), {}), ("Tanhshrink", (), {}), ("Threshold", (0.1, 20), {}),
    ("Threshold", (0.5, -1.0, True), {}), ("GLU", (), {}), ("GLU", (1,), {}), ("Softmax", (1,), {}),
    ("Softmax", (), {"dim": -1}), ("LogSoftmax", (2,), {}), ("Softmin", (0,), {}), ("Softmax2d", (), {}),
    ("Hardshrink", (), {}), ("Hardshrink", (1.5,), {}), ("Softshrink", (), {}), ("Softshrink", (0.3,), {}),
    ("LogSigmoid", (), {}),
]


def case_id(case):
    name, args, kwargs = case
    return name + "".join(f"-{a}" for a in args) + "".join(f"-{k}={v}" for k, v in kwargs.items())


def build(lib, case, dtype=None):
    name, args, kwargs = case
    module = getattr(lib.nn, name)(*args, **kwargs)
    return module.to(dtype) if dtype is not None else module


def run_module(case):
    # In-place modules must not rewrite a leaf: feed them a non-leaf copy.
    def run(lib, x):
        return build(lib, case)(x * 1.0)
    return run


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", MODULES, ids=case_id)
def test_module_matches_torch(case, dtype):
    def run(lib, x):
        return build(lib, case, getattr(lib, dtype))(x * 1.0)

    assert_parity(run, make_tensor((2, 4, 3, 2), dtype, low=-5, high=5))


@pytest.mark.parametrize("case", MODULES, ids=case_id)
def test_module_on_noncontiguous_input(case):
    assert_parity(run_module(case), make_tensor((2, 4, 2, 4), "float32", seed=9), noncontiguous=True)


@pytest.mark.parametrize("case", MODULES, ids=case_id)
def test_repr_matches_torch(case):
    assert repr(build(ember, case)) == repr(build(torch, case))


@pytest.mark.parametrize("case", MODULES, ids=case_id)
def test_attributes_match_torch(case):
    ours, theirs = build(ember, case), build(torch, case)
    for attr in ("inplace", "negative_slope", "alpha", "approximate", "min_val", "max_val", "beta", "threshold",
                 "value", "dim", "lambd", "num_parameters", "init"):
        if hasattr(theirs, attr):
            assert getattr(ours, attr) == getattr(theirs, attr), attr
            assert type(getattr(ours, attr)) is type(getattr(theirs, attr)), attr


INPLACE_MODULES = [c for c in MODULES if c[2].get("inplace") or any(a is True for a in c[1])]


@pytest.mark.parametrize("case", INPLACE_MODULES, ids=case_id)
def test_inplace_module_returns_its_input_and_refuses_leaves(case):
    x = ember.randn(3, 4) * 1.0
    assert build(ember, case)(x) is x
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        build(torch, case)(torch.randn(3, 4, requires_grad=True))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        build(ember, case)(ember.randn(3, 4, requires_grad=True))


# --- PReLU's parameter ----------------------------------------------------------


@pytest.mark.parametrize("num_parameters", [1, 4])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_prelu_parameter_gradient_matches_torch(num_parameters, dtype):
    x = make_tensor((3, 4, 5), dtype, seed=4)
    weight = make_tensor((num_parameters,), dtype, low=-0.5, high=0.5, seed=6)
    ours = ember.nn.PReLU(num_parameters, dtype=getattr(ember, dtype))
    theirs = torch.nn.PReLU(num_parameters, dtype=getattr(torch, dtype))
    with ember.no_grad():
        ours.weight.copy_(ember.tensor(weight))
    with torch.no_grad():
        theirs.weight.copy_(torch.from_numpy(weight))
    ours_x = ember.tensor(x, requires_grad=True)
    theirs_x = torch.from_numpy(x).requires_grad_()
    seed = make_tensor((3, 4, 5), dtype, seed=8)
    ours_y, theirs_y = ours(ours_x), theirs(theirs_x)
    assert_close(ours_y, theirs_y)
    ours_y.backward(ember.tensor(seed))
    theirs_y.backward(torch.from_numpy(seed))
    assert_close(ours.weight.grad, theirs.weight.grad)
    assert_close(ours_x.grad, theirs_x.grad)


def test_prelu_parameter_default_init_dtype_and_state_dict():
    ours, theirs = ember.nn.PReLU(3, init=0.1), torch.nn.PReLU(3, init=0.1)
    assert_close(ours.weight.detach(), theirs.weight.detach())
    assert isinstance(ours.weight, ember.nn.Parameter) and ours.weight.requires_grad
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert ember.nn.PReLU(dtype=ember.float64).weight.dtype == ember.float64
    loaded = ember.nn.PReLU(3)
    loaded.load_state_dict({"weight": ember.tensor([0.5, -0.5, 1.0])})
    np.testing.assert_array_equal(loaded.weight.detach().numpy(), np.array([0.5, -0.5, 1.0], dtype="float32"))
    loaded.reset_parameters()
    np.testing.assert_allclose(loaded.weight.detach().numpy(), [0.25] * 3)


# --- constructor checks and warnings ---------------------------------------------


def test_hardtanh_rejects_empty_range_like_torch():
    with pytest.raises(AssertionError) as expected:
        torch.nn.Hardtanh(1, 0)
    with pytest.raises(AssertionError) as actual:
        ember.nn.Hardtanh(1, 0)
    assert str(actual.value) == str(expected.value)


@pytest.mark.parametrize("keyword", ["min_value", "max_value"])
def test_hardtanh_deprecated_keywords_warn_and_apply(keyword):
    value = -3.0 if keyword == "min_value" else 3.0
    with pytest.warns(FutureWarning, match=f"`{keyword}` is deprecated"):
        theirs = torch.nn.Hardtanh(**{keyword: value})
    with pytest.warns(FutureWarning, match=f"`{keyword}` is deprecated"):
        ours = ember.nn.Hardtanh(**{keyword: value})
    assert (ours.min_val, ours.max_val) == (theirs.min_val, theirs.max_val)


@pytest.mark.parametrize("name", ["Softmax", "LogSoftmax", "Softmin"])
def test_softmax_modules_without_dim_warn(name):
    x = make_tensor((2, 3), "float32")
    with pytest.warns(UserWarning, match="Implicit dimension choice"):
        ours = getattr(ember.nn, name)()(ember.tensor(x))
    with pytest.warns(UserWarning, match="Implicit dimension choice"):
        theirs = getattr(torch.nn, name)()(torch.from_numpy(x))
    assert_close(ours, theirs)


@pytest.mark.parametrize("shape", [(3, 4), (2, 2, 2, 2, 2)], ids=str)
def test_softmax2d_rejects_other_ranks_like_torch(shape):
    with pytest.raises(ValueError) as expected:
        torch.nn.Softmax2d()(torch.ones(shape))
    with pytest.raises(ValueError) as actual:
        ember.nn.Softmax2d()(ember.ones(shape))
    assert str(actual.value) == str(expected.value)


def test_modules_work_inside_sequential_like_torch():
    x = make_tensor((4, 6), "float32")

    def run(lib, x):
        net = [lib.nn.GELU(), lib.nn.Hardtanh(-0.5, 0.5), lib.nn.SiLU(), lib.nn.Softmax(dim=1)]
        for layer in net:
            x = layer(x)
        return x

    assert_parity(run, x)


# --- resolution through the plugin ----------------------------------------------


@pytest.mark.parametrize("name", ember_activation.modules.__all__)
def test_module_names_resolve_through_the_plugin(name):
    cls = getattr(ember.nn, name)
    assert cls is getattr(ember_activation.modules, name)
    assert issubclass(cls, ember.nn.Module)
    assert ember.plugins.registry.catalogue("modules")[name].plugin == "activation"
    assert name in dir(ember.nn)


@pytest.mark.parametrize("name", [n for n in ember_activation.functional.__all__ if n != "relu"])
def test_functional_names_resolve_through_the_plugin(name):
    fn = getattr(ember.nn.functional, name)
    assert fn is getattr(ember_activation.functional, name)
    assert ember.plugins.registry.catalogue("functionals")[name].plugin == "activation"
    assert callable(getattr(torch.nn.functional, name))  # the same name exists in torch


def test_relu_is_the_core_form_with_the_same_behaviour():
    # ember.nn.functional.relu is the core's own (no plugin needed); the plugin's is the
    # same op with the same signature.
    assert ember.plugins.registry.catalogue("functionals")["relu"].plugin == "activation"
    x = ember.tensor([-1.0, 2.0])
    np.testing.assert_array_equal(ember.nn.functional.relu(x).numpy(), ember_activation.functional.relu(x).numpy())


def test_create_builds_modules_by_name():
    module = ember.nn.create("GELU", approximate="tanh")
    assert isinstance(module, ember_activation.modules.GELU) and module.approximate == "tanh"
    assert repr(ember.nn.create("LeakyReLU", negative_slope=0.3)) == repr(torch.nn.LeakyReLU(negative_slope=0.3))


def test_every_first_party_activation_name_is_provided():
    from ember.plugins.forwarding import PROVIDED_BY

    for catalogue in ("modules", "functionals"):
        expected = {name for name, dist in PROVIDED_BY[catalogue].items() if dist == "ember-activation"}
        registered = {key for key, entry in ember.plugins.registry.catalogue(catalogue).items()
                      if entry.plugin == "activation"}
        assert expected <= registered, expected - registered


def test_plugin_module_imports_nothing_heavy(tmp_path):
    # Importing the entry point must not import the op files, modules, or torch.
    import subprocess
    import sys

    code = ("import sys, ember_activation; heavy = [m for m in sys.modules if m.startswith('ember_activation.') "
            "or m == 'torch']; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    assert ember_activation.__version__ == "0.1.0"


def test_distribution_declares_the_entry_point():
    from importlib.metadata import distribution

    points = [ep for ep in distribution("ember-activation").entry_points if ep.group == "ember"]
    assert [(ep.name, ep.value) for ep in points] == [("activation", "ember_activation")]
    assert any(req.startswith("ember-core") for req in distribution("ember-activation").requires)


def test_disabled_plugin_names_its_distribution():
    import os
    import subprocess
    import sys

    code = ("import ember\n"
            "for get in (lambda: ember.nn.GELU, lambda: ember.nn.functional.gelu):\n"
            "    try:\n        get()\n    except AttributeError as e:\n        print(e)\n")
    env = dict(os.environ, EMBER_DISABLE_PLUGINS="activation")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 2 and all("ember-activation" in line for line in lines), out.stdout
