"""LayerNorm, GroupNorm, RMSNorm and LocalResponseNorm against torch with copied
parameters: outputs, input and parameter gradients in float32 and float64,
non-contiguous inputs, options, reprs, state dicts and errors.

Tests for plugins/norm/src/ember_norm/{layernorm,groupnorm,rmsnorm,lrn}.py (PyTorch
counterpart: torch/nn/modules/normalization.py, v2.13).
"""

import pytest
import torch

import ember
from tests.plugins.norm.helpers import assert_close, make_pair, random_input, step, to_ember

CASES = [
    ("LayerNorm", (5,), {}, (2, 3, 5)),
    ("LayerNorm", ((3, 5),), {}, (2, 3, 5)),
    ("LayerNorm", ([5],), dict(bias=False), (4, 5)),
    ("LayerNorm", (5,), dict(elementwise_affine=False, eps=1e-3), (2, 5)),
    ("LayerNorm", ((2, 3, 4),), {}, (2, 3, 4)),
    ("GroupNorm", (3, 6), {}, (2, 6, 4, 5)),
    ("GroupNorm", (1, 6), {}, (2, 6, 4)),
    ("GroupNorm", (6, 6), dict(bias=False), (2, 6, 3)),
    ("GroupNorm", (2, 4), dict(affine=False), (3, 4)),
    ("RMSNorm", (5,), {}, (2, 3, 5)),
    ("RMSNorm", ((3, 5),), dict(eps=1e-3), (2, 3, 5)),
    ("RMSNorm", (5,), dict(elementwise_affine=False), (4, 5)),
    ("LocalResponseNorm", (2,), {}, (2, 5, 4)),
    ("LocalResponseNorm", (3,), dict(alpha=0.5, beta=0.6, k=2.0), (2, 6, 3, 3)),
    ("LocalResponseNorm", (4,), dict(alpha=0.1), (2, 5, 2, 2, 3)),
]


def case_id(case):
    name, args, kwargs, shape = case
    return f"{name}{args}{kwargs}-{'x'.join(map(str, shape))}"


@pytest.mark.usefixtures("cpu_kernels")  # installed and NumPy kernels (conftest.py)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_against_torch(case, dtype):
    name, args, kwargs, shape = case
    torch_m, ember_m = make_pair(name, *args, dtype=dtype, **kwargs)
    step(torch_m, ember_m, random_input(shape, dtype), dtype)
    torch_m.eval()
    ember_m.eval()
    step(torch_m, ember_m, random_input(shape, dtype, seed=2), dtype, seed=2)


# torch's local_response_norm calls .view on a transposed 5-d input and fails; ember does not.
@pytest.mark.parametrize("case", [c for c in CASES if not (c[0] == "LocalResponseNorm" and len(c[3]) > 4)],
                         ids=case_id)
def test_noncontiguous_input(case):
    name, args, kwargs, shape = case
    torch_m, ember_m = make_pair(name, *args, dtype="float64", **kwargs)
    step(torch_m, ember_m, random_input(shape, "float64"), "float64", noncontiguous=True)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_repr_and_state_dict(case):
    name, args, kwargs, _ = case
    t = getattr(torch.nn, name)(*args, **kwargs)
    e = getattr(ember.nn, name)(*args, **kwargs)
    assert repr(e) == repr(t)
    assert list(e.state_dict()) == list(t.state_dict())


@pytest.mark.parametrize("case", [c for c in CASES if c[0] != "LocalResponseNorm"], ids=case_id)
def test_load_torch_state_dict(case):
    name, args, kwargs, shape = case
    t = getattr(torch.nn, name)(*args, **kwargs)
    with torch.no_grad():
        for p in t.parameters():
            p.uniform_(-1, 1)
    e = getattr(ember.nn, name)(*args, **kwargs)
    e.load_state_dict({k: to_ember(v) for k, v in t.state_dict().items()})
    x = random_input(shape, "float32")
    assert_close(e(ember.tensor(x)), t(torch.from_numpy(x)), "float32", "output")


def test_rms_norm_eps_none_uses_dtype_epsilon():
    # Tiny inputs make eps dominate: float32's and float64's machine epsilons differ.
    for dtype in ("float32", "float64"):
        x = random_input((2, 4), dtype, scale=1e-5, shift=0.0)
        t = torch.nn.RMSNorm(4, dtype=getattr(torch, dtype))
        e = ember.nn.RMSNorm(4, dtype=getattr(ember, dtype))
        assert_close(e(ember.tensor(x)), t(torch.from_numpy(x)), dtype, "output")


def test_group_norm_divisibility_errors():
    with pytest.raises(ValueError) as expected:
        torch.nn.GroupNorm(4, 6)
    with pytest.raises(ValueError) as actual:
        ember.nn.GroupNorm(4, 6)
    assert str(actual.value) == str(expected.value)


@pytest.mark.parametrize("name, args, shape", [("LayerNorm", (4,), (0, 4)), ("GroupNorm", (2, 4), (0, 4, 3)),
                                               ("RMSNorm", (4,), (0, 4))])
@pytest.mark.usefixtures("cpu_kernels")
def test_empty_batch(name, args, shape):
    torch_m, ember_m = make_pair(name, *args, dtype="float64")
    step(torch_m, ember_m, random_input(shape, "float64"), "float64")
