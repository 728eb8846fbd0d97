"""inference_mode and inference tensors (ember/autograd/grad_mode.py,
ember/autograd/inference.py) against torch: no recording inside even under
enable_grad, which tensors are inference tensors, and what autograd refuses them
outside inference mode, with torch's messages."""

import copy
import pickle
import threading

import pytest
from autograd_parity import assert_same, both


def outcome(fn):
    """What ``fn()`` returns, or ``(exception type, message)`` if it raises, with
    torch's names read as ember's (the rfcs link stays PyTorch's)."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 -- the exception is the result compared
        return type(exc), str(exc).replace("torch.", "ember.")


def made_inside(lib, *shape):
    with lib.inference_mode():
        return lib.ones(*shape)


@pytest.mark.parametrize("enter", [lambda lib: lib.enable_grad(), lambda lib: lib.set_grad_enabled(True)])
def test_enable_grad_inside_inference_mode_does_not_record(enter):
    def program(lib):
        w = lib.ones(2, requires_grad=True)
        with lib.inference_mode():
            with enter(lib):
                y = w * 2
                flags = (lib.is_grad_enabled(), lib.is_inference_mode_enabled())
        return flags, y.requires_grad, y.grad_fn is None, y.is_inference()
    assert_same(program)


def test_nested_modes():
    def program(lib):
        w = lib.ones(2, requires_grad=True)
        seen = []
        with lib.inference_mode():
            seen.append((lib.is_grad_enabled(), lib.is_inference_mode_enabled()))
            with lib.no_grad():
                seen.append((lib.is_grad_enabled(), lib.is_inference_mode_enabled()))
            with lib.inference_mode(False):
                seen.append((lib.is_grad_enabled(), lib.is_inference_mode_enabled()))
                y = w * 2
                seen.append((type(y.grad_fn).__name__, y.is_inference(), lib.ones(1).is_inference()))
                with lib.inference_mode():
                    seen.append((lib.is_grad_enabled(), lib.ones(1).is_inference()))
            with lib.enable_grad(), lib.inference_mode(False):
                seen.append((lib.is_grad_enabled(), type((w * 2).grad_fn).__name__))
            seen.append((lib.is_grad_enabled(), lib.is_inference_mode_enabled()))
        seen.append((lib.is_grad_enabled(), lib.is_inference_mode_enabled()))
        with lib.no_grad(), lib.inference_mode(False):
            seen.append((lib.is_grad_enabled(), lib.is_inference_mode_enabled()))
        return seen
    assert_same(program)


def test_which_tensors_are_inference_tensors():
    def program(lib):
        w = lib.ones(2, requires_grad=True)
        normal = lib.zeros(4)
        with lib.inference_mode():
            x = lib.ones(3)
            kinds = [x.is_inference(), lib.tensor([1.0]).is_inference(), lib.arange(3).is_inference(),
                     (normal + 1).is_inference(), normal.sum().is_inference(), normal.clone().is_inference(),
                     lib.max(normal.view(2, 2), 1).values.is_inference(),
                     normal[:2].is_inference(), normal.view(2, 2).is_inference(), x[1:].is_inference()]
            view = w.view(2)  # a view of a normal tensor is normal, and requires grad as its base
            kinds.append((view.is_inference(), view.requires_grad, view.grad_fn is None))
            kinds.append(lib.ones(2, requires_grad=True).requires_grad)
        with lib.no_grad():
            kinds.append(lib.ones(2).is_inference())
        kinds += [x.is_inference(), (x + 1).is_inference(), x.exp().is_inference(), x.clone().is_inference(),
                  x[:2].is_inference(), x.view(3).is_inference(), x.detach().is_inference(),
                  x.data.is_inference(), normal.data.is_inference(), lib.is_inference(x), lib.is_inference(normal)]
        return kinds
    assert_same(program)


def test_parameter_of_an_inference_tensor():
    def program(lib):
        x = made_inside(lib, 2)
        refused = outcome(lambda: lib.nn.Parameter(x))
        with lib.inference_mode():
            q = lib.nn.Parameter(lib.ones(2))
        (q + _w(lib)).sum().backward()  # add saves nothing
        return refused, q.is_inference(), q.requires_grad, q.grad.tolist(), outcome(lambda: q * _w(lib))
    assert_same(program)


def _w(lib):
    return lib.ones(2, requires_grad=True)


@pytest.mark.parametrize("use", [
    lambda lib, x: _w(lib) * x,
    lambda lib, x: x * _w(lib),
    lambda lib, x: _w(lib) / x,
    lambda lib, x: x / _w(lib),
    lambda lib, x: _w(lib)[None] @ x[:, None],
    lambda lib, x: _w(lib).clone().mul_(x),
    lambda lib, x: _w(lib) + x,  # add saves neither input: fine
    lambda lib, x: _w(lib) - x[:1],
])
def test_saved_for_backward(use):
    def program(lib):
        x = made_inside(lib, 2)
        result = outcome(lambda: use(lib, x))
        if isinstance(result, lib.Tensor):
            result.sum().backward()
            return result.tolist(), type(result.grad_fn).__name__
        return result
    assert_same(program)


def test_saved_for_backward_inside_inference_mode_false():
    def program(lib):
        x = made_inside(lib, 2)
        with lib.inference_mode(), lib.inference_mode(False):
            return outcome(lambda: _w(lib) * x)
    assert_same(program)


def test_custom_function_saving_an_inference_tensor():
    def program(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                ctx.save_for_backward(b)
                return a * 2

            @staticmethod
            def backward(ctx, grad):
                return grad, None

        return outcome(lambda: Scale.apply(_w(lib), made_inside(lib, 2)))
    assert_same(program)


@pytest.mark.parametrize("write", [
    lambda lib, x: x.add_(1),
    lambda lib, x: x.mul_(2),
    lambda lib, x: x.zero_(),
    lambda lib, x: x.fill_(3.0),
    lambda lib, x: x.copy_(lib.zeros(4)),
    lambda lib, x: x.__setitem__(0, 5.0),
    lambda lib, x: x[:2].add_(1),
    lambda lib, x: x.clamp_(0, 0.5),
    lambda lib, x: lib.nn.functional.relu(x, inplace=True),
    lambda lib, x: x.unsqueeze_(0),
    lambda lib, x: x.t_(),
    lambda lib, x: x.lerp_(lib.zeros(4), 0.5),
])
def test_inplace_outside_inference_mode(write):
    # PyTorch writes, then refuses at the version bump: the values change all the same.
    def program(lib):
        x = made_inside(lib, 4)
        result = outcome(lambda: write(lib, x))
        refused = isinstance(result, tuple)
        with lib.no_grad():  # no_grad is not inference mode: refused there too
            again = outcome(lambda: write(lib, x))
        return result if refused else "wrote", again if isinstance(again, tuple) else "wrote", x.tolist()
    ember_result, torch_result = both(program)
    assert ember_result == torch_result
    assert ember_result[0][0] is RuntimeError


def test_inplace_inside_inference_mode():
    def program(lib):
        normal = lib.zeros(2)
        with lib.inference_mode():
            x = lib.ones(2)
            x.add_(1)
            x[0] = 5.0
            normal.add_(1)  # a normal tensor keeps counting, even here
            version = normal._version
        return x.tolist(), normal.tolist(), version, normal._version
    assert_same(program)


def test_normal_tensor_written_from_an_inference_tensor():
    def program(lib):
        x = made_inside(lib, 2)
        normal = lib.zeros(2)
        normal.add_(x)
        normal.copy_(x * 3)
        return normal.tolist(), normal._version, normal.is_inference()
    assert_same(program)


def test_version_counter_and_requires_grad():
    def program(lib):
        x = made_inside(lib, 2)
        with lib.inference_mode():
            inside = outcome(lambda: x._version)
            y = lib.ones(2).requires_grad_()
        return (outcome(lambda: x._version), outcome(lambda: x[:1]._version), inside,
                outcome(lambda: x.requires_grad_()), outcome(lambda: x.requires_grad_(False).requires_grad),
                y.requires_grad, outcome(lambda: setattr(x, "requires_grad", True)))
    assert_same(program)


def test_clone_is_a_normal_tensor_for_autograd():
    def program(lib):
        x = made_inside(lib, 2)
        w = _w(lib)
        c = x.clone()
        (w * c).sum().backward()
        c.add_(1)  # (torch's clone of an inference tensor starts at version 1: not compared)
        return c.is_inference(), c.tolist(), w.grad.tolist(), c.requires_grad_().requires_grad
    assert_same(program)


def test_no_grad_tensors_are_normal():
    def program(lib):
        w = _w(lib)
        with lib.no_grad():
            x = lib.ones(2)
        y = w * x
        x.add_(1)
        return x.is_inference(), x._version, outcome(lambda: y.sum().backward())
    assert_same(program)


@pytest.mark.parametrize("make", [lambda lib: lib.inference_mode, lambda lib: lib.inference_mode(),
                                  lambda lib: lib.inference_mode(False)])
def test_decorators(make):
    def program(lib):
        @make(lib)
        def probe(w):
            y = w * 2
            return lib.is_inference_mode_enabled(), lib.ones(1).is_inference(), y.is_inference(), y.requires_grad

        return probe(_w(lib)), lib.is_inference_mode_enabled()
    assert_same(program)


def test_decorated_generator():
    def program(lib):
        @lib.inference_mode()
        def steps():
            yield lib.ones(1).is_inference()
            yield lib.ones(1).is_inference()

        gen = steps()
        return [next(gen), lib.ones(1).is_inference(), next(gen)]
    assert_same(program)


def test_other_threads_make_normal_tensors():
    def program(lib):
        seen = []
        with lib.inference_mode():
            thread = threading.Thread(target=lambda: seen.append((lib.ones(1) * 2).is_inference()))
            thread.start()
            thread.join()
            seen.append((lib.ones(1) * 2).is_inference())
        return seen
    assert_same(program)


def test_hooks_see_grad_mode_of_backward():
    def program(lib):
        seen = []
        w = _w(lib)
        y = w * 2
        y.register_hook(lambda g: seen.append(lib.is_grad_enabled()))
        y.sum().backward(retain_graph=True)
        lib.autograd.grad(y.sum(), w, create_graph=True)
        total = y.sum()
        with lib.no_grad():
            total.backward()
        return seen
    assert_same(program)


def test_copies_are_normal_tensors():
    def program(lib):
        x = made_inside(lib, 2)
        return [c.is_inference() for c in (copy.copy(x), copy.deepcopy(x), pickle.loads(pickle.dumps(x)))]
    assert_same(program)


@pytest.mark.parametrize("call", [
    lambda lib, w: lib.nn.functional.nll_loss(lib.zeros(2, 3), lib.tensor([0, 1]), weight=w),
    lambda lib, w: lib.nn.functional.binary_cross_entropy(lib.full((3,), 0.5), lib.ones(3), weight=w),
    lambda lib, w: lib.nn.functional.batch_norm(lib.ones(2, 3), w, w.detach() + 1, training=False),
])
def test_inputs_refused_only_when_recording(call):
    # Losses refuse a weight that requires grad, batch norm running statistics that do,
    # when autograd records: not inside inference mode, even under enable_grad.
    def program(lib):
        w = lib.ones(3, requires_grad=True)
        with lib.inference_mode(), lib.enable_grad():
            inside = call(lib, w).tolist()
        return inside, outcome(lambda: call(lib, w))[0]
    assert_same(program)
