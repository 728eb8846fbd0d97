"""InstanceNorm1d/2d/3d against torch with copied parameters and buffers: outputs,
gradients, running statistics, unbatched inputs, options and errors.

Tests for plugins/norm/src/ember_norm/instancenorm.py (PyTorch counterpart:
torch/nn/modules/instancenorm.py, v2.13).
"""

import pytest
import torch

import ember
from tests.plugins.norm.helpers import make_pair, random_input, step

SHAPES = [("InstanceNorm1d", (2, 3, 5)), ("InstanceNorm1d", (3, 5)), ("InstanceNorm2d", (2, 3, 4, 5)),
          ("InstanceNorm2d", (3, 4, 5)), ("InstanceNorm3d", (2, 3, 2, 3, 4))]
OPTIONS = [dict(), dict(affine=True), dict(affine=True, bias=False), dict(track_running_stats=True),
           dict(affine=True, track_running_stats=True, momentum=None)]


@pytest.mark.usefixtures("cpu_kernels")  # installed and NumPy kernels (conftest.py)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("options", OPTIONS, ids=str)
@pytest.mark.parametrize("case", SHAPES, ids=lambda c: f"{c[0]}-{'x'.join(map(str, c[1]))}")
def test_train_steps_then_eval(case, options, dtype):
    name, shape = case
    torch_in, ember_in = make_pair(name, 3, dtype=dtype, **options)
    for i in range(2):
        step(torch_in, ember_in, random_input(shape, dtype, seed=i, shift=i), dtype, seed=i)
    torch_in.eval()
    ember_in.eval()
    step(torch_in, ember_in, random_input(shape, dtype, seed=4), dtype, seed=4)


def test_noncontiguous_input():
    torch_in, ember_in = make_pair("InstanceNorm2d", 3, affine=True, track_running_stats=True, dtype="float64")
    step(torch_in, ember_in, random_input((2, 3, 4, 5), "float64"), "float64", noncontiguous=True)


def test_repr_and_state_dict_keys():
    for kwargs in (dict(), dict(affine=True), dict(track_running_stats=True), dict(affine=True, bias=False)):
        t, e = torch.nn.InstanceNorm2d(3, **kwargs), ember.nn.InstanceNorm2d(3, **kwargs)
        assert repr(e) == repr(t)
        assert list(e.state_dict()) == list(t.state_dict())


@pytest.mark.parametrize("name, shape", [("InstanceNorm1d", (2, 3, 4, 5)), ("InstanceNorm2d", (2, 3)),
                                         ("InstanceNorm3d", (2, 3, 4))])
def test_wrong_input_dims(name, shape):
    with pytest.raises(ValueError) as expected:
        getattr(torch.nn, name)(3)(torch.zeros(shape))
    with pytest.raises(ValueError) as actual:
        getattr(ember.nn, name)(3)(ember.zeros(shape))
    assert str(actual.value) == str(expected.value)


def test_channel_mismatch_errors_with_affine_and_warns_without():
    with pytest.raises(ValueError) as expected:
        torch.nn.InstanceNorm1d(3, affine=True)(torch.zeros(2, 4, 5))
    with pytest.raises(ValueError) as actual:
        ember.nn.InstanceNorm1d(3, affine=True)(ember.zeros(2, 4, 5))
    assert str(actual.value) == str(expected.value)
    with pytest.warns(UserWarning, match="does not match num_features"):
        ember.nn.InstanceNorm1d(3)(ember.randn(2, 4, 5))


def test_one_spatial_element_in_training():
    with pytest.raises(ValueError) as expected:
        torch.nn.InstanceNorm1d(3)(torch.zeros(2, 3, 1))
    with pytest.raises(ValueError) as actual:
        ember.nn.InstanceNorm1d(3)(ember.zeros(2, 3, 1))
    assert str(actual.value) == str(expected.value).replace("torch.", "ember.")
