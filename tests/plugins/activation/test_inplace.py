"""The in-place activations (``inplace=True`` and the ``relu_``-style forms) against
torch: values, the returned object, gradients through the rewritten tensor, and
PyTorch's refusals (a leaf that requires grad, a view of one, a saved tensor changed).

Tests for ember_activation's ``run_inplace`` (plugins/activation/src/ember_activation/
_pointwise.py) and the functional forms (PyTorch counterpart: torch/nn/functional.py, v2.13).
"""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_parity, make_tensor

# (name, kwargs) of the functional forms that take inplace=.
WITH_INPLACE = [
    ("relu", {}), ("relu6", {}), ("leaky_relu", {"negative_slope": 0.1}), ("elu", {"alpha": 0.5}), ("selu", {}),
    ("celu", {"alpha": 2.0}), ("silu", {}), ("mish", {}), ("hardswish", {}), ("hardsigmoid", {}),
    ("hardtanh", {"min_val": -0.5, "max_val": 2.0}), ("threshold", {"threshold": 0.2, "value": -1.0}),
]
# The trailing-underscore forms.
UNDERSCORE = [
    ("relu_", {}), ("leaky_relu_", {"negative_slope": 0.3}), ("elu_", {}), ("selu_", {}), ("celu_", {"alpha": 0.5}),
    ("hardtanh_", {}), ("threshold_", {"threshold": 0.5, "value": 3.0}),
]


def _ids(case):
    return case[0]


def inplace_call(lib, case, x):
    name, kwargs = case
    fn = getattr(lib.nn.functional, name)
    return fn(x, **kwargs) if name.endswith("_") else fn(x, inplace=True, **kwargs)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", WITH_INPLACE + UNDERSCORE, ids=_ids)
def test_inplace_on_a_non_leaf_matches_torch(case, dtype):
    # x * 1.5 is a non-leaf: rewriting it is allowed and the gradient flows to x.
    def run(lib, x):
        y = x * 1.5
        out = inplace_call(lib, case, y)
        assert out is y
        return y

    assert_parity(run, make_tensor((3, 5), dtype, low=-4, high=4))


@pytest.mark.parametrize("case", WITH_INPLACE + UNDERSCORE, ids=_ids)
def test_inplace_matches_the_out_of_place_form(case):
    name, kwargs = case
    x = make_tensor((4, 6), "float64", low=-4, high=4)
    out_of_place = getattr(ember.nn.functional, name.rstrip("_"))(ember.tensor(x), **kwargs)
    target = ember.tensor(x)
    version = target._version
    inplace_call(ember, case, target)
    np.testing.assert_array_equal(target.numpy(), out_of_place.numpy())
    assert target._version == version + 1


@pytest.mark.parametrize("case", WITH_INPLACE + UNDERSCORE, ids=_ids)
def test_inplace_on_a_leaf_that_requires_grad_is_refused(case):
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        inplace_call(torch, case, torch.ones(3, requires_grad=True))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        inplace_call(ember, case, ember.ones(3, requires_grad=True))


@pytest.mark.parametrize("case", WITH_INPLACE[:4] + UNDERSCORE[:2], ids=_ids)
def test_inplace_on_a_view_of_a_leaf_is_refused(case):
    with pytest.raises(RuntimeError, match="view of a leaf Variable"):
        inplace_call(torch, case, torch.ones(2, 3, requires_grad=True)[0])
    with pytest.raises(RuntimeError, match="view of a leaf Variable"):
        inplace_call(ember, case, ember.ones(2, 3, requires_grad=True)[0])


@pytest.mark.parametrize("case", WITH_INPLACE + UNDERSCORE, ids=_ids)
def test_inplace_on_a_leaf_under_no_grad_is_allowed(case):
    x = make_tensor((5,), "float32", low=-4, high=4)
    ours, theirs = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    with ember.no_grad():
        inplace_call(ember, case, ours)
    with torch.no_grad():
        inplace_call(torch, case, theirs)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1.3e-6, atol=1e-5)
    assert ours.grad_fn is None and ours.requires_grad


@pytest.mark.parametrize("case", WITH_INPLACE + UNDERSCORE, ids=_ids)
def test_inplace_on_a_view_of_a_non_leaf_rebases_the_base(case):
    # Rewriting a slice of y makes y's history go through the activation (CopySlices).
    def run(lib, x):
        y = x * 2.0
        inplace_call(lib, case, y[:, 1:3])
        return y

    assert_parity(run, make_tensor((3, 4), "float64", low=-3, high=3))


@pytest.mark.parametrize("case", [("relu", {}), ("silu", {}), ("elu", {}), ("hardtanh_", {})], ids=_ids)
def test_changing_a_saved_tensor_is_detected(case):
    # y * y saved y; rewriting y afterwards makes that backward wrong, so it must raise.
    for lib in (torch, ember):
        x = lib.ones(3, requires_grad=True)
        y = x * 1.0
        z = y * y
        inplace_call(lib, case, y)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()


def test_inplace_keeps_the_old_value_for_its_own_backward():
    # silu_'s backward needs the input before it was overwritten (PyTorch's original_self).
    def run(lib, x):
        y = x + 0.0
        lib.nn.functional.silu(y, inplace=True)
        lib.nn.functional.elu(y, alpha=0.3, inplace=True)
        return y * 2

    assert_parity(run, make_tensor((7,), "float64", low=-3, high=3))
