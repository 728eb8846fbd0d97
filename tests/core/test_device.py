"""Tests for ember/device.py and ember/cuda.py: device parsing against torch.device,
and, through the test-only ``fake`` backend (plugins/fake_device.py), dispatch,
transfers, gradients across ``.to``, the device-mixing error and per-backend kernels."""

import importlib.util
import pathlib
import pickle

import numpy as np
import pytest
import torch

import ember
from ember.autograd import gradcheck
from ember.testing import make_tensor


def _load_fake_device():
    path = pathlib.Path(__file__).parent / "plugins" / "fake_device.py"
    spec = importlib.util.spec_from_file_location("ember_test_fake_device", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


fake_device = _load_fake_device()


@pytest.fixture
def fake():
    ember.plugins.register(fake_device)
    fake_device.reset_stats()
    yield fake_device
    ember.plugins.unregister(fake_device)


# --- ember.device against torch.device ----------------------------------------------

@pytest.mark.parametrize("args", [("cpu",), ("cuda",), ("cuda:1",), ("cpu", 0), ("cuda", 3), ("meta",),
                                  ("privateuseone",)])
def test_device_parsing_matches_torch(args):
    expected = torch.device(*args)
    got = ember.device(*args)
    assert (got.type, got.index, str(got), repr(got)) == (expected.type, expected.index, str(expected),
                                                           repr(expected))


@pytest.mark.parametrize("args", [("cuda:-1",), ("cuda", -1), ("cuda:0", 1), ("cpu:x",), (" cpu",), ("cuda:01",),
                                  ("cpu", "a"), ("cuda:",)])
def test_bad_devices_raise_like_torch(args):
    with pytest.raises(Exception) as expected:
        torch.device(*args)
    with pytest.raises(expected.type) as got:
        ember.device(*args)
    if expected.type is RuntimeError:
        assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("make", [lambda lib: lib.ones(2, device="gpu"), lambda lib: lib.zeros(1).to("gpu")])
def test_a_device_type_torch_does_not_know_gets_torchs_message(make):
    with pytest.raises(RuntimeError) as expected:
        make(torch)
    with pytest.raises(RuntimeError) as actual:
        make(ember)
    assert str(actual.value).startswith(str(expected.value))  # then: no ember plugin registers it either


def test_devices_are_interned_equal_hashable_and_picklable():
    assert ember.device("cuda:1") is ember.device("cuda", 1) is ember.device(ember.device("cuda:1"))
    assert ember.device("cpu") != ember.device("cpu", 0)
    assert ember.device("cpu") != "cpu" and (torch.device("cpu") == "cpu") is False
    assert len({ember.device("cuda", 0), ember.device("cuda:0")}) == 1
    assert pickle.loads(pickle.dumps(ember.device("cuda:2"))) is ember.device("cuda:2")


def test_the_default_device_is_cpu_served_by_ember_numpy():
    t = ember.ones(2)
    assert t.device is ember.device("cpu")
    assert t.device.backend.plugin == "numpy" and t.device.backend.xp is np


# --- ember.cuda ---------------------------------------------------------------------

def test_cuda_is_not_available_here_like_torch():
    assert ember.cuda.is_available() is torch.cuda.is_available() is False
    assert ember.cuda.device_count() == torch.cuda.device_count() == 0
    with pytest.raises(RuntimeError, match=r"\(ember-cupy\)|no cuda device is available"):
        ember.cuda.synchronize()
    with ember.plugins.registry.without("cupy"), pytest.raises(RuntimeError, match=r"plugins/cupy' \(ember-cupy\)"):
        ember.cuda.synchronize()


def test_cuda_reads_a_registered_cuda_backend():
    import types

    from ember.device import Backend
    from ember.plugins import hookimpl

    synced = []
    backend = Backend("cuda", np, to_host=lambda a: a, from_host=lambda a, index=None: a,
                      synchronize=synced.append, device_count=lambda: 2)
    plugin = types.ModuleType("fakecuda")
    plugin.ember_register_backends = hookimpl(lambda register: register(backend))
    with ember.plugins.registry.without("cupy"):  # the installed cuda backend, if any
        _check_cuda_reads(backend, plugin, synced)


def _check_cuda_reads(backend, plugin, synced):
    ember.plugins.register(plugin)
    try:
        assert ember.cuda.is_available() and ember.cuda.device_count() == 2
        ember.cuda.synchronize()
        ember.cuda.synchronize(1)
        ember.cuda.synchronize("cuda:0")
        assert synced == [None, 1, 0]
        with pytest.raises(ValueError, match="Expected a cuda device"):
            ember.cuda.synchronize("cpu")
    finally:
        ember.plugins.unregister(plugin)
    assert not ember.cuda.is_available()


# --- a second device: the fake backend --------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3), (3, 2)])
def test_to_fake_and_back_keeps_values_dtype_and_shape(fake, dtype, shape):
    x = ember.from_numpy(make_tensor(shape, dtype))
    on_fake = x.to("fake")
    assert on_fake.device == ember.device("fake") and on_fake.dtype == x.dtype and on_fake.shape == x.shape
    back = on_fake.cpu()
    assert back.device == ember.device("cpu")
    np.testing.assert_array_equal(back.numpy(), x.numpy())
    assert fake.STATS["from_host"] == 1 and fake.STATS["to_host"] == 1


def test_factories_and_ops_run_on_the_fake_device(fake):
    a = ember.arange(6, device="fake").reshape(2, 3)
    b = ember.ones(3, device="fake")
    out = (a + b).exp().sum(0)
    assert out.device == ember.device("fake")
    np.testing.assert_allclose(out.cpu().numpy(), np.exp(np.arange(6).reshape(2, 3) + 1.0).sum(0), rtol=1e-6)
    with pytest.raises(TypeError, match="can't convert fake device type tensor to numpy"):
        out.numpy()


def test_a_fake_backend_kernel_override_is_used_only_on_fake(fake):
    x = ember.tensor([1.0, 2.0])
    assert (x * x).tolist() == [1.0, 4.0] and fake.STATS["mul"] == 0
    y = x.to("fake")
    assert (y * y).cpu().tolist() == [1.0, 4.0] and fake.STATS["mul"] == 1
    assert (y + y).cpu().tolist() == [2.0, 4.0] and fake.STATS["mul"] == 1


@pytest.mark.parametrize("order", ["cpu_first", "fake_first"])
def test_mixing_devices_is_an_error_like_torch(fake, order):
    cpu, on_fake = ember.ones(2), ember.ones(2, device="fake")
    first, second = (cpu, on_fake) if order == "cpu_first" else (on_fake, cpu)
    names = ("cpu", "fake") if order == "cpu_first" else ("fake", "cpu")
    message = (f"Expected all tensors to be on the same device, but found at least two devices, "
               f"{names[0]} and {names[1]}!")
    with pytest.raises(RuntimeError, match=message):
        first * second
    with pytest.raises(RuntimeError, match=message):
        ember.cat([first, second])


def test_gradients_flow_across_to(fake):
    x = ember.from_numpy(make_tensor((3, 2), "float64")).requires_grad_()
    y = x.to("fake")
    assert y.grad_fn.name() == "ToCopyBackward0"
    (y * y).exp().sum().backward()
    assert x.grad.device == ember.device("cpu")
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy() * np.exp(x.detach().numpy() ** 2))
    assert gradcheck(lambda a: (a.to("fake") * a.to("fake")).sin().to("cpu"), (x,))


def test_a_missing_device_backend_names_what_to_install(fake):
    with ember.plugins.registry.without("cupy"), pytest.raises(
            RuntimeError, match="no ember backend is installed for device type 'cuda'.*ember-cupy"):
        ember.ones(1).to("cuda")
