"""Tests for ember/library.py: ``custom_op``, ``register_kernel``, ``register_autograd``
and ``schema``, checked against a NumPy reference and finite differences, on the cpu
and on the test-only ``fake`` device (fake_device.py)."""

import types

import fake_device
import numpy as np
import pytest

import ember
from ember import library
from ember.autograd import gradcheck, gradgradcheck
from ember.plugins import PluginError, hookimpl, registry
from ember.testing import make_tensor


def _softsign_backward(ctx, grad):
    (x,) = ctx.saved_inputs
    return (grad / (1 + x.abs()) ** 2,)


@library.custom_op("libtest::softsign", promote="int_to_float", save="inputs", backward=_softsign_backward)
def softsign(xp, x):
    return x / (1 + xp.abs(x))


@library.custom_op("libtest::scaled_sum", promote="default")
def scaled_sum(xp, x, y, *, alpha=1.0):
    return x + alpha * y


def _plugin(name, *ops):
    plugin = types.ModuleType(name)

    @hookimpl
    def ember_register_ops(register):
        for op in ops:
            register(op)

    plugin.ember_register_ops = ember_register_ops
    return plugin


@pytest.fixture(scope="module", autouse=True)
def libtest_plugin():
    plugin = _plugin("libtest", softsign, scaled_sum)
    ember.plugins.register(plugin)
    yield plugin
    ember.plugins.unregister(plugin)


@pytest.fixture
def fake():
    ember.plugins.register(fake_device)
    fake_device.reset_stats()
    yield fake_device
    ember.plugins.unregister(fake_device)


@pytest.mark.parametrize("name", ["noscope", "a::b::c", "ns::", "::op", "ns::1op", "ns::my-op", 3])
def test_custom_op_needs_a_qualified_name(name):
    with pytest.raises(ValueError, match="namespace::name"):
        library.custom_op(name)


def test_custom_op_rejects_the_aten_namespace_and_unknown_options():
    with pytest.raises(ValueError, match="'aten' namespace is reserved"):
        library.custom_op("aten::mine")
    with pytest.raises(ValueError, match="promote must be one of"):
        library.custom_op("ns::op", promote="float")
    with pytest.raises(ValueError, match="save must be one of"):
        library.custom_op("ns::op", save="grads")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3), (4, 3)])
def test_custom_op_forward_matches_numpy(dtype, shape):
    x = make_tensor(shape, dtype)
    out = softsign(ember.from_numpy(x))
    assert out.dtype == getattr(ember, dtype) and tuple(out.shape) == shape
    np.testing.assert_allclose(out.numpy(), x / (1 + np.abs(x)), rtol=1e-6)


def test_custom_op_promotes_integers_to_the_default_float():
    out = softsign(ember.tensor([1, -3]))
    assert out.dtype == ember.float32
    np.testing.assert_allclose(out.numpy(), [0.5, -0.75])


def test_custom_op_promotes_and_broadcasts_with_scalars_and_attributes():
    x = ember.tensor([[1], [2]], dtype=ember.int32)
    y = ember.tensor([0.5, 1.5], dtype=ember.float64)
    out = scaled_sum(x, y, alpha=2.0)
    assert out.dtype == ember.float64 and tuple(out.shape) == (2, 2)
    np.testing.assert_allclose(out.numpy(), np.array([[1], [2]]) + 2.0 * np.array([0.5, 1.5]))
    assert scaled_sum(x, 3, alpha=2).dtype == ember.int32  # the Python int stays weak


def test_register_autograd_gives_gradients_that_pass_gradcheck():
    x = ember.from_numpy(make_tensor((3, 2), "float64", exclude_zero=True)).requires_grad_()
    assert softsign(x).grad_fn.name() == "SoftsignBackward0"
    assert gradcheck(softsign, (x,))
    assert gradgradcheck(softsign, (x,))


def test_register_autograd_later_and_change_what_is_saved():
    @library.custom_op("libtest::cube", promote="int_to_float")
    def cube(xp, x):
        return x * x * x

    x = ember.tensor([1.0, 2.0], dtype=ember.float64, requires_grad=True)
    assert not cube(x).requires_grad  # no backward yet: not differentiable
    library.register_autograd(cube, lambda ctx, grad: (3 * grad * ctx.saved_inputs[0] ** 2,), save="inputs")
    assert gradcheck(cube, (x,))
    with pytest.raises(ValueError, match="save must be one of"):
        library.register_autograd(cube, lambda ctx, grad: (grad,), save="everything")


def test_register_kernel_replaces_the_generic_kernel_on_one_device(fake):
    calls = []

    @library.custom_op("libtest::negate", promote="default")
    def negate(xp, x):
        return -x

    @library.register_kernel(negate, "fake")
    def negate_fake(xp, x):
        calls.append(x.shape)
        return xp.negative(x)

    x = ember.tensor([1.0, -2.0])
    assert negate(x).tolist() == [-1.0, 2.0] and calls == []
    assert negate(x.to("fake")).cpu().tolist() == [-1.0, 2.0] and calls == [(2,)]
    library.register_kernel(negate, "fake", lambda xp, x: x)  # a second kernel replaces the first
    assert negate(x.to("fake")).cpu().tolist() == [1.0, -2.0] and calls == [(2,)]


def test_a_second_kernel_registration_replaces_the_first_as_in_torch():
    import torch

    @torch.library.custom_op("libtest_torch::plus", mutates_args=())
    def torch_plus(x: torch.Tensor) -> torch.Tensor:
        return x.clone()

    torch.library.register_kernel("libtest_torch::plus", "cpu", lambda x: x + 1)
    torch.library.register_kernel("libtest_torch::plus", "cpu", lambda x: x + 2)

    @library.custom_op("libtest::plus")
    def ember_plus(xp, x):
        return x.copy()

    library.register_kernel(ember_plus, "cpu", lambda xp, x: x + 1)
    library.register_kernel(ember_plus, "cpu", lambda xp, x: x + 2)
    assert ember_plus(ember.zeros(1)).tolist() == torch_plus(torch.zeros(1)).tolist() == [2.0]


def test_register_kernel_takes_several_device_types_and_a_qualified_name():
    @library.custom_op("libtest::ident")
    def ident(xp, x):
        return x.copy()

    ember.plugins.register(_plugin("libtest_ident", ident))
    try:
        kernel = library.register_kernel("libtest::ident", ["cpu", "fake"], lambda xp, x: x + 0)
        assert ident.kernels == {"cpu": kernel, "fake": kernel}
    finally:
        ember.plugins.unregister(name="libtest_ident")
    with pytest.raises(ValueError, match="no operator named 'libtest::nothing'"):
        library.register_kernel("libtest::nothing", "cpu")
    with pytest.raises(TypeError, match="expected an ember op"):
        library.register_kernel(42, "cpu")


def test_a_backend_override_and_an_op_kernel_for_one_device_clash(fake):
    @library.custom_op("libtest::clashing")
    def clashing(xp, x):
        return x

    library.register_kernel(clashing, "fake", lambda xp, x: x)
    backend = fake_device.make_backend()
    backend.name = "fake2"
    backend.kernels = {}
    fake2 = types.ModuleType("fake2")
    fake2.ember_register_backends = hookimpl(lambda register: register(backend, name="fake"))
    ember.plugins.unregister(fake_device)  # free the name "fake" for fake2
    try:
        backend.kernels["libtest::clashing"] = lambda xp, x: x
        ember.plugins.register(fake2)
        with pytest.raises(PluginError, match="kernel for 'libtest::clashing' on 'fake' is registered by both "
                                              "plugin 'fake2' .backend. and plugin 'libtest_clash' .op."):
            ember.plugins.register(_plugin("libtest_clash", clashing))
    finally:
        ember.plugins.unregister(fake2)
        ember.plugins.register(fake_device)


def test_opcheck_runs_an_op_on_every_device(fake):
    samples = [((ember.from_numpy(make_tensor(shape, "float32")),), {}) for shape in [(), (3,), (2, 3)]]
    assert ember.testing.opcheck(softsign, samples, reference=lambda x: x / (1 + np.abs(x)), devices=["fake"])
    wrong = lambda x: x  # noqa: E731
    with pytest.raises(AssertionError, match="values differ from the reference"):
        ember.testing.opcheck(softsign, samples[1:], reference=wrong)


def test_schema_is_read_from_the_kernel_signature():
    assert library.schema(softsign) == "libtest::softsign(x) -> Tensor"
    assert library.schema("libtest::scaled_sum") == "libtest::scaled_sum(x, y, *, alpha=1.0) -> Tensor"
    assert library.schema(ember.ops.aten.mul) == "aten::mul(a, b) -> Tensor"


def test_an_op_with_as_many_outputs_as_its_kernel_returns():
    @library.custom_op("libtest::parts", num_outputs=None)
    def parts(xp, x, *, count=1):
        return tuple(x + i for i in range(count))

    assert library.schema(parts) == "libtest::parts(x, *, count=1) -> (Tensor, ...)"
    assert [t.tolist() for t in parts(ember.tensor([1.0]), count=3)] == [[1.0], [2.0], [3.0]]
    assert [t.tolist() for t in parts(ember.tensor([1.0]))] == [[1.0]]



def test_a_formula_that_reads_only_later_outputs_lets_the_first_change_in_place():
    # ctx.saved_outputs_from(1) unpacks (and checks) the outputs after the first only, as
    # cross-entropy's formula reads its kept softmax parts and not its loss
    @library.custom_op("libtest::scaled_with_scale", save="outputs", num_outputs=None)
    def scaled(xp, x):
        return x * 2.0, xp.full_like(x, 2.0)

    def backward(ctx, grad, _):
        (scale,) = ctx.saved_outputs_from(1)
        return (grad * scale,)

    library.register_autograd(scaled, backward, save="outputs")
    x = ember.tensor([1.0, 3.0], requires_grad=True)
    out, scale = scaled(x)
    out.mul_(5.0)  # the first output, not read by the formula
    out.sum().backward()
    assert x.grad.tolist() == [10.0, 10.0]
    x.grad = None
    out, scale = scaled(x)
    with ember.no_grad():
        scale.add_(1.0)  # a kept output the formula reads: checked, as saved_outputs does
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_custom_ops_are_owned_by_the_plugin_that_registers_them():
    assert softsign.plugin == "libtest"
    assert registry.catalogue("ops")["libtest::softsign"].plugin == "libtest"


@library.custom_op("libtest::scaled_product", save="inputs")
def scaled_product(xp, x, y, *, alpha=1.0):
    return alpha * (x @ y)


def _torch_scaled_product(torch):
    """The same op in torch, with its AutocastCPU kernel (as torchvision registers its
    ops): float32 inside, the result back in x's dtype."""
    lib = torch.library.Library("embertest_autocast", "FRAGMENT")
    lib.define("scaled_product(Tensor x, Tensor y, float alpha) -> Tensor")
    lib.impl("scaled_product", lambda x, y, alpha: alpha * (x @ y), "CPU")

    def autocast_kernel(x, y, alpha):
        with torch._C._ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(torch._C.DispatchKey.AutocastCPU)):
            out = torch.ops.embertest_autocast.scaled_product(x.float(), y.float(), alpha)
        return out.to(x.dtype)
    lib.impl("scaled_product", autocast_kernel, "AutocastCPU")
    return lib, torch.ops.embertest_autocast.scaled_product


def test_an_autocast_kernel_runs_in_place_of_the_op_inside_its_device_types_region():
    import torch

    seen = []

    def autocast_kernel(x, y, *, alpha):
        seen.append((x.dtype, ember.is_autocast_enabled("cpu")))
        out = scaled_product(*(ember.amp.state.cached_cast(ember.float32, t) for t in (x, y)), alpha=alpha)
        return out.to(x.dtype)

    library.register_autocast_kernel(scaled_product, "cpu", autocast_kernel)
    lib, torch_op = _torch_scaled_product(torch)
    x, y = np.random.default_rng(0).standard_normal((2, 3, 3)).astype(np.float32)
    ex, ey = ember.tensor(x).to(ember.bfloat16), ember.tensor(y).to(ember.bfloat16)
    tx, ty = torch.tensor(x).bfloat16(), torch.tensor(y).bfloat16()
    with ember.autocast("cpu", dtype=ember.bfloat16), torch.autocast("cpu", dtype=torch.bfloat16):
        got, want = scaled_product(ex, ey, alpha=0.5), torch_op(tx, ty, 0.5)
    assert seen == [(ember.bfloat16, False)]  # called once, with autocast suspended inside
    assert str(got.dtype) == str(want.dtype).replace("torch", "ember")
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())
    scaled_product(ex, ey, alpha=0.5)  # no region: the op itself
    with ember.autocast("cuda", dtype=ember.float16, enabled=ember.cuda.is_available()):
        scaled_product(ex, ey, alpha=0.5)  # a region for another device type
    assert len(seen) == 1
    del lib
