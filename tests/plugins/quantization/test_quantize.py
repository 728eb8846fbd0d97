"""Tests for the eager-mode workflows (quantize.py, fuse.py, fake_quantize.py) against torch.ao.quantization."""

import ember_quantization as eq
import numpy as np
import pytest
import torch
import torch.ao.quantization as tq
from ember_quantization import observer
from quantization_parity import state_dict_from_torch

import ember

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")
torch.backends.quantized.engine = "x86"


def copy_weights(ours, theirs):
    ours.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})


def batch(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")


def make_net(lib, stubs):
    """QuantStub -> conv-bn-relu -> strided grouped conv -> flatten -> linear-relu -> linear -> DeQuantStub."""
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.quant, self.dequant = stubs.QuantStub(), stubs.DeQuantStub()
            self.conv, self.bn, self.relu = lib.nn.Conv2d(3, 8, 3, padding=1), lib.nn.BatchNorm2d(8), lib.nn.ReLU()
            self.conv2 = lib.nn.Conv2d(8, 8, 3, stride=2, groups=2)
            self.fc1, self.relu1, self.fc2 = lib.nn.Linear(32, 16), lib.nn.ReLU(), lib.nn.Linear(16, 5)

        def forward(self, x):
            x = self.conv2(self.relu(self.bn(self.conv(self.quant(x)))))
            return self.dequant(self.fc2(self.relu1(self.fc1(x.flatten(1)))))
    return Net()


def net_pair():
    torch.manual_seed(0)
    theirs, ours = make_net(torch, tq), make_net(ember, eq)
    with torch.no_grad():
        theirs.bn.running_mean.uniform_(-0.5, 0.5)
        theirs.bn.running_var.uniform_(0.5, 2)
        theirs.bn.weight.uniform_(0.5, 1.5)
    copy_weights(ours, theirs)
    return ours.eval(), theirs.eval()


FUSE = [["conv", "bn", "relu"], ["fc1", "relu1"]]


def test_fuse_modules_folds_batchnorm_like_torch():
    ours, theirs = net_pair()
    our_fused, their_fused = eq.fuse_modules(ours, FUSE), tq.fuse_modules(theirs, FUSE)
    assert type(our_fused.conv).__name__ == "ConvReLU2d" and type(our_fused.bn).__name__ == "Identity"
    np.testing.assert_allclose(our_fused.conv[0].weight.detach().numpy(), their_fused.conv[0].weight.detach().numpy(),
                               rtol=1e-6, atol=1e-7)
    x = batch((2, 3, 6, 6), 0)
    np.testing.assert_allclose(our_fused(ember.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-5)


def test_fusing_in_training_mode_is_refused():
    ours, _ = net_pair()
    with pytest.raises(AssertionError, match="Fusion only for eval"):
        eq.fuse_modules(ours.train(), [["conv", "bn"]])


def static_pair():
    ours, theirs = net_pair()
    theirs.qconfig, ours.qconfig = tq.get_default_qconfig("x86"), eq.get_default_qconfig("x86")
    our_prepared, their_prepared = eq.prepare(eq.fuse_modules(ours, FUSE)), tq.prepare(tq.fuse_modules(theirs, FUSE))
    for seed in range(3):
        our_prepared(ember.tensor(batch((8, 3, 6, 6), seed)))
        their_prepared(torch.tensor(batch((8, 3, 6, 6), seed)))
    return eq.convert(our_prepared), tq.convert(their_prepared)


def test_static_quantization_gives_torchs_qparams_and_outputs_within_one_step():
    ours, theirs = static_pair()
    for name in ("conv", "conv2", "fc1", "fc2"):
        assert getattr(ours, name).scale == pytest.approx(getattr(theirs, name).scale, rel=1e-6)
        assert getattr(ours, name).zero_point == getattr(theirs, name).zero_point
    assert type(ours.fc1).__name__ == "Linear" and ours.fc1._relu
    x = batch((4, 3, 6, 6), 10)
    step = theirs.fc2.scale
    np.testing.assert_allclose(ours(ember.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy(), rtol=0,
                               atol=step * 1.01)


def test_a_statically_quantized_torch_state_dict_loads_and_gives_torchs_outputs():
    ours, theirs = static_pair()
    ours.load_state_dict(state_dict_from_torch(theirs))
    x = batch((4, 3, 6, 6), 11)
    np.testing.assert_allclose(ours(ember.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy(), rtol=0,
                               atol=theirs.fc2.scale * 1.01)
    assert list(ours.state_dict()) == list(theirs.state_dict())


@pytest.mark.parametrize("shape", [(5, 12), (2, 3, 12), (1, 12)])
def test_quantize_dynamic_matches_torch_and_loads_its_state_dict(shape):
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(12, 24), torch.nn.ReLU(), torch.nn.Linear(24, 6))
    ours = ember.nn.Sequential(ember.nn.Linear(12, 24), ember.nn.ReLU(), ember.nn.Linear(24, 6))
    copy_weights(ours, theirs)
    their_q = tq.quantize_dynamic(theirs, {torch.nn.Linear}, dtype=torch.qint8)
    our_q = eq.quantize_dynamic(ours, {ember.nn.Linear}, dtype=eq.qint8)
    x = batch(shape, 3) * 2
    expected = their_q(torch.tensor(x)).detach().numpy()
    np.testing.assert_allclose(our_q(ember.tensor(x)).numpy(), expected, rtol=1e-5, atol=1e-6)
    fresh = eq.quantize_dynamic(ours, {ember.nn.Linear})
    fresh.load_state_dict(state_dict_from_torch(their_q))
    np.testing.assert_allclose(fresh(ember.tensor(x)).numpy(), expected, rtol=1e-5, atol=1e-6)
    assert isinstance(ours[0], ember.nn.Linear)  # not in place by default


def test_quantize_dynamic_refuses_other_dtypes():
    with pytest.raises(ValueError, match="qint8 only"):
        eq.quantize_dynamic(ember.nn.Linear(2, 2), {ember.nn.Linear}, dtype="float16")


@pytest.mark.parametrize("per_channel", [False, True])
def test_fake_quantize_forward_and_straight_through_gradient_match_torch(per_channel):
    x = batch((4, 6), 0) * 3
    ours, theirs = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    if per_channel:
        scale, zero_point = np.linspace(0.01, 0.05, 6).astype("float32"), np.arange(6, dtype="int32") * 20
        our_y = eq.fake_quantize_per_channel_affine(ours, ember.tensor(scale), ember.tensor(zero_point), 1, 0, 255)
        their_y = torch.fake_quantize_per_channel_affine(theirs, torch.tensor(scale), torch.tensor(zero_point), 1,
                                                         0, 255)
    else:
        our_y = eq.fake_quantize_per_tensor_affine(ours, 0.02, 7, -128, 127)
        their_y = torch.fake_quantize_per_tensor_affine(theirs, 0.02, 7, -128, 127)
    np.testing.assert_array_equal(our_y.detach().numpy(), their_y.detach().numpy())
    upstream = batch((4, 6), 1)
    (our_y * ember.tensor(upstream)).sum().backward()
    (their_y * torch.tensor(upstream)).sum().backward()
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())
    assert 0 < (ours.grad.numpy() == 0).sum() < ours.grad.numel()  # some clamped, some passed


def test_prepare_qat_trains_like_torch():
    torch.manual_seed(1)
    theirs = torch.nn.Sequential(tq.QuantStub(), torch.nn.Conv2d(2, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                                 torch.nn.Linear(4 * 4 * 4, 3), tq.DeQuantStub())
    ours = ember.nn.Sequential(eq.QuantStub(), ember.nn.Conv2d(2, 4, 3), ember.nn.ReLU(), ember.nn.Flatten(),
                               ember.nn.Linear(4 * 4 * 4, 3), eq.DeQuantStub())
    copy_weights(ours, theirs)
    theirs.qconfig, ours.qconfig = tq.get_default_qat_qconfig("x86", version=0), eq.get_default_qat_qconfig("x86")
    their_qat, our_qat = tq.prepare_qat(theirs.train()), eq.prepare_qat(ours.train())
    for seed in range(2):
        x = batch((5, 2, 6, 6), seed)
        our_out, their_out = our_qat(ember.tensor(x)), their_qat(torch.tensor(x))
        np.testing.assert_allclose(our_out.detach().numpy(), their_out.detach().numpy(), rtol=1e-5, atol=1e-6)
        our_out.square().sum().backward()
        their_out.square().sum().backward()
    np.testing.assert_allclose(our_qat[4].weight.grad.numpy(), their_qat[4].weight.grad.numpy(), rtol=1e-4,
                               atol=1e-5)
    np.testing.assert_allclose(our_qat[1].weight.grad.numpy(), their_qat[1].weight.grad.numpy(), rtol=1e-4,
                               atol=1e-5)
    our_int8, their_int8 = eq.convert(our_qat.eval()), tq.convert(their_qat.eval())
    x = batch((3, 2, 6, 6), 5)
    np.testing.assert_allclose(our_int8(ember.tensor(x)).numpy(), their_int8(torch.tensor(x)).numpy(), rtol=0,
                               atol=their_int8[4].scale * 1.01)


def test_qconfig_refuses_observer_instances_like_torch():
    with pytest.raises(ValueError, match="please pass observer class instead"):
        eq.QConfig(activation=observer.MinMaxObserver(), weight=observer.default_weight_observer)


def test_a_qat_state_dict_with_per_channel_qparams_loads_into_a_fresh_prepared_model_as_in_torch():
    """Per-channel weight fake-quantizers start with one scale and hold one per channel after a
    forward; loading resizes them first, as torch's FakeQuantize does."""
    def prepared(lib, q):
        model = lib.nn.Sequential(lib.nn.Conv2d(2, 3, 3))
        model.qconfig = q.get_default_qat_qconfig("x86")
        return q.prepare_qat(model.train())

    ours, theirs = prepared(ember, eq), prepared(torch, tq)
    x = np.random.default_rng(0).standard_normal((1, 2, 5, 5)).astype("float32")
    ours(ember.tensor(x))
    theirs(torch.tensor(x))
    fresh_ours, fresh_theirs = prepared(ember, eq), prepared(torch, tq)
    fresh_ours.load_state_dict(ours.state_dict())
    fresh_theirs.load_state_dict(theirs.state_dict())
    assert tuple(fresh_ours[0].weight_fake_quant.scale.shape) == tuple(fresh_theirs[0].weight_fake_quant.scale.shape)
    np.testing.assert_array_equal(fresh_ours[0].weight_fake_quant.scale.numpy(),
                                  ours[0].weight_fake_quant.scale.numpy())
