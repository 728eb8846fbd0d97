"""BatchNorm1d/2d/3d against torch with copied parameters and buffers: outputs, input
and parameter gradients, running statistics over several steps (momentum 0.1, None,
0.0), eval mode, affine/bias/track_running_stats off, state dicts and errors.

Tests for plugins/norm/src/ember_norm/batchnorm.py (PyTorch counterpart:
torch/nn/modules/batchnorm.py, v2.13).
"""

import numpy as np
import pytest
import torch

import ember
from tests.plugins.norm.helpers import assert_close, assert_same_state, make_pair, random_input, step, to_ember

SHAPES = [("BatchNorm1d", (4, 3)), ("BatchNorm1d", (2, 3, 5)), ("BatchNorm2d", (2, 3, 4, 5)),
          ("BatchNorm3d", (2, 3, 2, 3, 4))]


def shape_id(case):
    return f"{case[0]}-{'x'.join(map(str, case[1]))}"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("momentum", [0.1, None, 0.0])
@pytest.mark.parametrize("case", SHAPES, ids=shape_id)
def test_training_steps_then_eval(case, momentum, dtype):
    name, shape = case
    torch_bn, ember_bn = make_pair(name, 3, momentum=momentum, dtype=dtype)
    for i in range(3):
        step(torch_bn, ember_bn, random_input(shape, dtype, seed=i, shift=i), dtype, seed=i)
        assert ember_bn.num_batches_tracked.item() == i + 1
    torch_bn.eval()
    ember_bn.eval()
    step(torch_bn, ember_bn, random_input(shape, dtype, seed=7), dtype, seed=7)
    assert ember_bn.num_batches_tracked.item() == 3  # eval does not count batches


@pytest.mark.parametrize("case", SHAPES, ids=shape_id)
def test_noncontiguous_input(case):
    name, shape = case
    torch_bn, ember_bn = make_pair(name, 3, dtype="float64")
    step(torch_bn, ember_bn, random_input(shape, "float64"), "float64", noncontiguous=True)
    torch_bn.eval()
    ember_bn.eval()
    step(torch_bn, ember_bn, random_input(shape, "float64", seed=3), "float64", noncontiguous=True)


@pytest.mark.parametrize("options", [dict(affine=False), dict(bias=False), dict(track_running_stats=False),
                                     dict(affine=False, track_running_stats=False)], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_options(options, dtype):
    torch_bn, ember_bn = make_pair("BatchNorm2d", 3, dtype=dtype, **options)
    assert [n for n, _ in ember_bn.named_parameters()] == [n for n, _ in torch_bn.named_parameters()]
    assert [n for n, _ in ember_bn.named_buffers()] == [n for n, _ in torch_bn.named_buffers()]
    assert (ember_bn.weight is None) == (torch_bn.weight is None)
    assert (ember_bn.bias is None) == (torch_bn.bias is None)
    assert (ember_bn.running_mean is None) == (torch_bn.running_mean is None)
    for i in range(2):
        step(torch_bn, ember_bn, random_input((2, 3, 3, 4), dtype, seed=i), dtype, seed=i)
    torch_bn.eval()
    ember_bn.eval()  # without running stats, eval still normalizes with the batch's
    step(torch_bn, ember_bn, random_input((2, 3, 3, 4), dtype, seed=5), dtype, seed=5)


def test_running_var_is_unbiased_and_output_uses_biased():
    x = ember.tensor([[1.0], [3.0]])  # mean 2, biased var 1, unbiased var 2
    bn = ember.nn.BatchNorm1d(1, momentum=1.0, eps=0.0)
    out = bn(x)
    assert out.tolist() == [[-1.0], [1.0]]
    assert bn.running_mean.tolist() == [2.0]
    assert bn.running_var.tolist() == [2.0]


def test_cumulative_average_when_momentum_is_none():
    bn = ember.nn.BatchNorm1d(1, momentum=None)
    batches = [[[0.0], [2.0]], [[4.0], [6.0]], [[8.0], [12.0]]]
    for b in batches:
        bn(ember.tensor(b))
    expected = np.mean([np.mean(b) for b in batches])
    np.testing.assert_allclose(bn.running_mean.item(), expected, rtol=1e-6)


def test_defaults_repr_and_state_dict_keys():
    for name in ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d"):
        for kwargs in (dict(), dict(momentum=None, eps=1e-3), dict(affine=False), dict(bias=False),
                       dict(track_running_stats=False)):
            t = getattr(torch.nn, name)(64, **kwargs)
            e = getattr(ember.nn, name)(64, **kwargs)
            assert repr(e) == repr(t)
            assert list(e.state_dict()) == list(t.state_dict())
            for key, value in t.state_dict().items():
                if value.is_floating_point():
                    assert_close(e.state_dict()[key], value, "float32", key)
                else:
                    assert e.state_dict()[key].item() == value.item()
    e = ember.nn.BatchNorm2d(64)
    assert e.num_batches_tracked.dtype == ember.int64 and e.num_batches_tracked.shape == ()
    assert type(e)._version == torch.nn.BatchNorm2d._version == 2
    assert len(e.state_dict()) == 5


def test_load_torch_state_dict_then_eval_matches():
    torch_bn = torch.nn.BatchNorm2d(4)
    for i in range(3):  # non-trivial running stats and a count of 3
        torch_bn(torch.randn(2, 4, 3, 3) * (i + 1) + i)
    with torch.no_grad():
        torch_bn.weight.uniform_(0.5, 1.5)
        torch_bn.bias.uniform_(-1, 1)
    ember_bn = ember.nn.BatchNorm2d(4)
    result = ember_bn.load_state_dict({k: to_ember(v) for k, v in torch_bn.state_dict().items()})
    assert list(result.missing_keys) == [] and list(result.unexpected_keys) == []
    assert ember_bn.num_batches_tracked.item() == 3
    torch_bn.eval()
    ember_bn.eval()
    x = random_input((2, 4, 3, 3), "float32")
    assert_close(ember_bn(ember.tensor(x)), torch_bn(torch.from_numpy(x)), "float32", "eval output")
    assert_same_state(torch_bn, ember_bn, "float32")


def test_old_checkpoint_without_num_batches_tracked_loads():
    ember_bn = ember.nn.BatchNorm1d(2)
    state = {k: to_ember(v) for k, v in torch.nn.BatchNorm1d(2).state_dict().items() if k != "num_batches_tracked"}
    # A version-1 checkpoint: num_batches_tracked did not exist yet, so it is not missing.
    state = ember_state_with_metadata(state, {"": {"version": 1}})
    result = ember_bn.load_state_dict(state)
    assert list(result.missing_keys) == []
    assert ember_bn.num_batches_tracked.item() == 0


def ember_state_with_metadata(state, metadata):
    from collections import OrderedDict

    out = OrderedDict(state)
    out._metadata = metadata
    return out


@pytest.mark.parametrize("name, bad_shape", [("BatchNorm1d", (2, 3, 4, 5)), ("BatchNorm1d", (3,)),
                                             ("BatchNorm2d", (2, 3, 4)), ("BatchNorm3d", (2, 3, 4, 5))])
def test_wrong_input_dims(name, bad_shape):
    with pytest.raises(ValueError) as expected:
        getattr(torch.nn, name)(3)(torch.zeros(bad_shape))
    with pytest.raises(ValueError) as actual:
        getattr(ember.nn, name)(3)(ember.zeros(bad_shape))
    assert str(actual.value) == str(expected.value)


@pytest.mark.parametrize("train", [True, False])
def test_wrong_channel_count(train):
    t, e = torch.nn.BatchNorm2d(4).train(train), ember.nn.BatchNorm2d(4).train(train)
    with pytest.raises(RuntimeError) as expected:
        t(torch.zeros(2, 3, 2, 2))
    with pytest.raises(RuntimeError) as actual:
        e(ember.zeros(2, 3, 2, 2))
    assert str(actual.value) == str(expected.value)


def test_one_value_per_channel_in_training():
    with pytest.raises(ValueError) as expected:
        torch.nn.BatchNorm1d(3)(torch.zeros(1, 3))
    with pytest.raises(ValueError) as actual:
        ember.nn.BatchNorm1d(3)(ember.zeros(1, 3))
    assert str(actual.value) == str(expected.value).replace("torch.", "ember.")
    ember.nn.BatchNorm1d(3).eval()(ember.zeros(1, 3))  # eval needs no batch statistics


def test_in_place_relu_after_batch_norm():
    # ResNet's relu(inplace=True) after BN must not break BN's backward (NOTE in ops/batch_norm.py).
    x = random_input((2, 3, 4, 4), "float32")
    t_in, e_in = torch.from_numpy(x).requires_grad_(), ember.tensor(x).requires_grad_()
    torch_bn, ember_bn = make_pair("BatchNorm2d", 3)
    torch.relu_(torch_bn(t_in)).sum().backward()
    ember_bn(e_in).relu_().sum().backward()
    assert_close(e_in.grad, t_in.grad, "float32", "input grad")
    assert_close(ember_bn.weight.grad, torch_bn.weight.grad, "float32", "weight grad")


def test_state_dict_metadata_version_and_nested_prefixes():
    torch_seq = torch.nn.Sequential(torch.nn.BatchNorm1d(4), torch.nn.LayerNorm(4))
    for _ in range(2):
        torch_seq(torch.randn(5, 4) * 3 + 1)
    ember_seq = ember.nn.Sequential(ember.nn.BatchNorm1d(4), ember.nn.LayerNorm(4))
    assert ember_seq.state_dict()._metadata["0"] == torch_seq.state_dict()._metadata["0"] == {"version": 2}
    ember_seq.load_state_dict({k: to_ember(v) for k, v in torch_seq.state_dict().items()})
    torch_seq.eval()
    ember_seq.eval()
    x = random_input((3, 4), "float32")
    assert_close(ember_seq(ember.tensor(x)), torch_seq(torch.from_numpy(x)), "float32", "output")
    # ... and back: torch loads the ember state dict.
    fresh = torch.nn.Sequential(torch.nn.BatchNorm1d(4), torch.nn.LayerNorm(4)).eval()
    fresh.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in ember_seq.state_dict().items()})
    assert_close(ember_seq(ember.tensor(x)), fresh(torch.from_numpy(x)), "float32", "output after round trip")


def test_double_keeps_num_batches_tracked_int64():
    bn = ember.nn.BatchNorm2d(3).double()
    assert bn.num_batches_tracked.dtype == ember.int64
    assert bn.running_mean.dtype == bn.weight.dtype == ember.float64
    torch_bn = torch.nn.BatchNorm2d(3).double()
    x = random_input((2, 3, 2, 2), "float64")
    assert_close(bn(ember.tensor(x)), torch_bn(torch.from_numpy(x)), "float64", "output")
    assert_same_state(torch_bn, bn, "float64")


def test_empty_batch_leaves_running_stats_alone():
    torch_bn, ember_bn = make_pair("BatchNorm1d", 3, dtype="float64")
    step(torch_bn, ember_bn, np.zeros((0, 3, 4)), "float64")
    assert ember_bn.num_batches_tracked.item() == torch_bn.num_batches_tracked.item() == 1

