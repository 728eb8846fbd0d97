"""no_grad, enable_grad, set_grad_enabled, inference_mode (ember/autograd/grad_mode.py)
against torch: context managers, decorators (bare and called), nesting, threads."""

import threading

import pytest
from autograd_parity import assert_same


def test_nesting_and_recording():
    def program(lib):
        a = lib.tensor([1.0], requires_grad=True)
        seen = []
        with lib.no_grad():
            seen.append((a * 2).requires_grad)
            with lib.enable_grad():
                seen.append((a * 2).requires_grad)
            seen.append(lib.is_grad_enabled())
        seen.append(lib.is_grad_enabled())
        return seen
    assert_same(program)


@pytest.mark.parametrize("make", [
    lambda lib: lib.no_grad,
    lambda lib: lib.no_grad(),
    lambda lib: lib.enable_grad(),
    lambda lib: lib.set_grad_enabled(False),
    lambda lib: lib.set_grad_enabled(True),
    lambda lib: lib.inference_mode,
    lambda lib: lib.inference_mode(),
    lambda lib: lib.inference_mode(False),
])
@pytest.mark.parametrize("outer", [True, False])
def test_decorators(make, outer):
    def program(lib):
        decorator = make(lib)

        @decorator
        def probe(x):
            """Docstring kept."""
            return lib.is_grad_enabled(), (x * 2).requires_grad

        with lib.set_grad_enabled(outer):
            result = probe(lib.tensor([1.0], requires_grad=True))
            after = lib.is_grad_enabled()
        return result, after, probe.__name__, probe.__doc__
    assert_same(program)


def test_decorated_generator_keeps_mode_per_step():
    def program(lib):
        @lib.no_grad()
        def steps():
            yield lib.is_grad_enabled()
            yield lib.is_grad_enabled()
            return "done"
        gen = steps()
        values = [next(gen), lib.is_grad_enabled(), next(gen)]
        with pytest.raises(StopIteration) as stop:
            next(gen)
        return values, stop.value.value
    assert_same(program)


def test_set_grad_enabled_as_function_and_context():
    def program(lib):
        seen = []
        lib.set_grad_enabled(False)
        seen.append(lib.is_grad_enabled())
        lib.set_grad_enabled(True)
        with lib.set_grad_enabled(False):
            seen.append(lib.is_grad_enabled())
        seen.append(lib.is_grad_enabled())
        return seen
    assert_same(program)


def test_mode_restored_after_exception():
    def program(lib):
        try:
            with lib.no_grad():
                raise ValueError
        except ValueError:
            pass
        return lib.is_grad_enabled()
    assert_same(program)


def test_inference_mode_flags():
    def program(lib):
        a = lib.tensor([1.0], requires_grad=True)
        with lib.inference_mode():
            b = a * 2
            inside = (lib.is_grad_enabled(), lib.is_inference_mode_enabled())
        return inside, lib.is_inference_mode_enabled(), b.requires_grad, b.is_leaf
    assert_same(program)


def test_new_thread_starts_with_grad_enabled():
    def program(lib):
        seen = []
        with lib.no_grad():
            thread = threading.Thread(target=lambda: seen.append(lib.is_grad_enabled()))
            thread.start()
            thread.join()
            seen.append(lib.is_grad_enabled())
        return seen
    assert_same(program)


def test_thread_switching_off_grad_leaves_main_thread_alone():
    def program(lib):
        def worker():
            lib.set_grad_enabled(False)
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
        return lib.is_grad_enabled()
    assert_same(program)
