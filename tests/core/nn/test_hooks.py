"""Tests for Module's forward and backward hooks (ember/nn/modules/module.py and
ember/nn/modules/backward_hook.py) against torch: call order, arguments, returned
replacements, removal, and the grad_input / grad_output values of full backward hooks."""

import numpy as np
import pytest
import torch
from nn_parity import both, define_classes, numpy_of, seed_parameters, to_ember_state

import ember

X = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)


def affine(lib, n_in=4, n_out=3, seed=0):
    """An Affine module of ``lib`` with the same values in both libraries."""
    torch_module = define_classes(torch)[0](n_in, n_out)
    seed_parameters(torch_module, seed)
    if lib is torch:
        return torch_module
    module = define_classes(ember)[0](n_in, n_out)
    module.load_state_dict(to_ember_state(torch_module.state_dict()))
    return module


def stack(lib):
    """Sequential(Affine, Square, Affine) with the same values in both libraries."""
    _, Square, _ = define_classes(lib)
    return lib.nn.Sequential(affine(lib, 4, 3, seed=1), Square(), affine(lib, 3, 2, seed=2))


def arrays(values):
    return [None if v is None else numpy_of(v) for v in values]


def assert_same_arrays(ours, theirs):
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6 * max(1.0, float(np.abs(b).max())))


# --- forward hooks --------------------------------------------------------------------

def test_forward_hooks_run_in_order_with_their_arguments():
    def script(lib):
        log = []
        m = define_classes(lib)[1]()  # Square
        m.register_forward_pre_hook(lambda mod, args: log.append(("pre", len(args))))
        m.register_forward_pre_hook(lambda mod, args, kwargs: log.append(("pre_kw", sorted(kwargs))),
                                    with_kwargs=True)
        m.register_forward_hook(lambda mod, args, out: log.append(("post", out.tolist())))
        m.register_forward_hook(lambda mod, args, kwargs, out: log.append(("post_kw", sorted(kwargs))),
                                with_kwargs=True)
        m.register_forward_pre_hook(lambda mod, args: log.append(("first",)), prepend=True)
        m.register_forward_hook(lambda mod, args, out: log.append(("post_first",)), prepend=True)
        m(x=lib.tensor([2.0]))
        return log
    ours, theirs = both(script)
    assert ours == theirs


def test_forward_hooks_may_replace_arguments_and_output():
    def script(lib):
        m = define_classes(lib)[1]()
        m.register_forward_pre_hook(lambda mod, args: args[0] + 1)                 # a single value
        m.register_forward_pre_hook(lambda mod, args, kwargs: ((args[0] * 2,), kwargs), with_kwargs=True)
        m.register_forward_hook(lambda mod, args, out: out - 1)
        return m(lib.tensor([1.0, 2.0])).tolist()
    assert both(script)[0] == both(script)[1]


def test_bad_pre_hook_result_errors_like_torch():
    def script(lib):
        m = define_classes(lib)[1]()
        m.register_forward_pre_hook(lambda mod, args, kwargs: "nonsense", with_kwargs=True)
        try:
            m(lib.tensor([1.0]))
        except RuntimeError as exc:
            return str(exc)
    assert both(script)[0] == both(script)[1]


def test_handles_remove_hooks_and_their_flags():
    def script(lib):
        log = []
        m = define_classes(lib)[1]()
        h1 = m.register_forward_pre_hook(lambda mod, args, kwargs: log.append("pre"), with_kwargs=True)
        h2 = m.register_forward_hook(lambda mod, args, out: log.append("post"), always_call=True)
        m(lib.tensor([1.0]))
        h1.remove()
        h2.remove()
        h2.remove()  # removing twice is harmless
        m(lib.tensor([1.0]))
        with m.register_forward_hook(lambda mod, args, out: log.append("ctx")):
            m(lib.tensor([1.0]))
        m(lib.tensor([1.0]))
        return log, len(m._forward_pre_hooks_with_kwargs), len(m._forward_hooks_always_called)
    assert both(script)[0] == both(script)[1]


def test_always_call_hooks_run_when_forward_raises():
    def script(lib):
        class Failing(lib.nn.Module):
            def forward(self, x):
                raise ValueError("boom")
        log = []
        m = Failing()
        m.register_forward_hook(lambda mod, args, out: log.append(("always", out)), always_call=True)
        m.register_forward_hook(lambda mod, args, out: log.append(("normal", out)))
        with pytest.raises(ValueError, match="boom"):
            m(lib.tensor([1.0]))
        return log
    assert both(script)[0] == both(script)[1] == [("always", None)]


def test_sequential_hooks_fire_per_layer_in_order():
    def script(lib):
        log = []
        net = stack(lib)
        for name, module in net.named_modules():
            module.register_forward_pre_hook(lambda mod, args, name=name: log.append(("pre", name)))
            module.register_forward_hook(lambda mod, args, out, name=name: log.append(("post", name,
                                                                                      tuple(out.shape))))
        net(lib.tensor(X))
        return log
    assert both(script)[0] == both(script)[1]


# --- full backward hooks ----------------------------------------------------------------

def record_backward(lib, module, x_requires_grad=True):
    """Run forward/backward with full backward (pre) hooks; returns what they saw."""
    log = []
    module.register_full_backward_pre_hook(lambda mod, grad_out: log.append(("pre", arrays(grad_out))))
    module.register_full_backward_hook(
        lambda mod, grad_in, grad_out: log.append(("full", arrays(grad_in), arrays(grad_out))))
    x = lib.tensor(X, requires_grad=x_requires_grad)
    y = module(x)
    (y * y).sum().backward()
    grads = [numpy_of(x.grad)] + [numpy_of(p.grad) for p in module.parameters()]
    return log, grads


def assert_same_log(ours, theirs):
    assert [entry[0] for entry in ours] == [entry[0] for entry in theirs]
    for a, b in zip(ours, theirs):
        for ours_values, theirs_values in zip(a[1:], b[1:]):
            assert_same_arrays(ours_values, theirs_values)


@pytest.mark.parametrize("build", [affine, stack])
@pytest.mark.parametrize("x_requires_grad", [True, False])
def test_full_backward_hooks_see_torchs_grad_input_and_grad_output(build, x_requires_grad):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns when no input requires grad
        (ours, our_grads), (theirs, their_grads) = both(lambda lib: record_backward(lib, build(lib),
                                                                                 x_requires_grad))
    assert_same_log(ours, theirs)
    assert_same_arrays(our_grads, their_grads)


def test_hooks_on_every_layer_of_a_sequential_fire_in_backward_order():
    def script(lib):
        log = []
        net = stack(lib)
        for name, module in net.named_modules():
            module.register_full_backward_pre_hook(lambda mod, go, name=name: log.append(("pre", name)))
            module.register_full_backward_hook(
                lambda mod, gi, go, name=name: log.append(("full", name, arrays(gi), arrays(go))))
        x = lib.tensor(X, requires_grad=True)
        net(x).sum().backward()
        return log
    ours, theirs = both(script)
    assert [e[:2] for e in ours] == [e[:2] for e in theirs]
    for a, b in zip(ours, theirs):
        if a[0] == "full":
            assert_same_arrays(a[2], b[2])
            assert_same_arrays(a[3], b[3])


def test_backward_hooks_may_replace_grad_output_and_grad_input():
    def script(lib):
        module = affine(lib)
        module.register_full_backward_pre_hook(lambda mod, grad_out: (grad_out[0] * 2,))
        module.register_full_backward_hook(lambda mod, grad_in, grad_out: (grad_in[0] + 1,))
        x = lib.tensor(X, requires_grad=True)
        module(x).sum().backward()
        return [numpy_of(x.grad)] + [numpy_of(p.grad) for p in module.parameters()]
    ours, theirs = both(script)
    assert_same_arrays(ours, theirs)


def test_backward_hook_with_several_inputs_and_a_non_tensor_argument():
    def script(lib):
        class Mix(lib.nn.Module):
            def forward(self, a, scale, b, c):
                return a * scale + b * c, a - c

        seen = []
        module = Mix()
        module.register_full_backward_hook(lambda mod, gi, go: seen.append((arrays(gi), arrays(go))))
        a = lib.tensor(X[:, :2], requires_grad=True)
        b = lib.tensor(X[:, 2:])                        # needs no grad: None in grad_input
        c = lib.tensor(X[:, 1:3], requires_grad=True)
        first, second = module(a, 3.0, b, c)
        (first.sum() + (second * second).sum()).backward()
        return seen, [numpy_of(a.grad), numpy_of(c.grad)]
    (ours, our_grads), (theirs, their_grads) = both(script)
    assert len(ours) == len(theirs) == 1
    assert_same_arrays(ours[0][0], theirs[0][0])
    assert_same_arrays(ours[0][1], theirs[0][1])
    assert_same_arrays(our_grads, their_grads)


def test_an_unused_output_has_none_in_grad_output():
    def script(lib):
        class Two(lib.nn.Module):
            def forward(self, x):
                return x * 2, x * 3
        seen = []
        module = Two()
        module.register_full_backward_pre_hook(lambda mod, go: seen.append(arrays(go)))
        x = lib.tensor(X, requires_grad=True)
        module(x)[0].sum().backward()
        return seen
    ours, theirs = both(script)
    assert len(ours) == len(theirs) == 1
    assert_same_arrays(ours[0], theirs[0])


@pytest.mark.parametrize("hook_kind", ["pre", "full"])
def test_wrong_number_of_returned_gradients_errors_like_torch(hook_kind):
    def script(lib):
        module = affine(lib)
        if hook_kind == "pre":
            module.register_full_backward_pre_hook(lambda mod, go: (go[0], go[0]))
        else:
            module.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
        x = lib.tensor(X, requires_grad=True)
        try:
            module(x).sum().backward()
        except RuntimeError as exc:
            return str(exc)
    assert both(script)[0] == both(script)[1] is not None


def test_removed_backward_hooks_do_not_run_and_no_grad_skips_them():
    calls = []
    module = affine(ember)
    handle = module.register_full_backward_hook(lambda mod, gi, go: calls.append(1))
    with ember.no_grad():
        module(ember.tensor(X, requires_grad=True))
    handle.remove()
    module(ember.tensor(X, requires_grad=True)).sum().backward()
    assert calls == []
    assert module._backward_hooks == {}
