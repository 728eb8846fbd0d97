"""Whether operations record the autograd graph: ``no_grad``, ``enable_grad``,
``set_grad_enabled``, ``inference_mode``.

PyTorch counterpart: torch/autograd/grad_mode.py and c10/core/GradMode.h (v2.13).

The flags are thread-local, as in PyTorch: a DataLoader's pinning thread or a user's
worker thread does not switch off recording for the main thread. ``inference_mode``
is more than ``no_grad``: nothing records inside it, even under ``enable_grad``, and
the tensors it makes are inference tensors (NOTE [ Inference tensors ] in
ember/autograd/inference.py).
"""

import functools
import inspect
import threading


class _GradState(threading.local):
    # Two switches, as PyTorch's GradMode flag and InferenceMode guard: ``mode`` is
    # what is_grad_enabled() reports, ``inference`` is inference mode. ``enabled`` is
    # what the dispatcher and the autograd code test, "ops record": mode and not
    # inference, kept up to date by set_state so that a test costs one attribute read.
    enabled = True
    mode = True
    inference = False


def set_state(mode, inference):
    """Set the grad mode and the inference mode of this thread."""
    grad_state.mode = mode
    grad_state.inference = inference
    grad_state.enabled = mode and not inference


grad_state = _GradState()


def is_grad_enabled():
    """The grad mode: False under ``no_grad`` and ``inference_mode``, True under
    ``enable_grad`` (even inside ``inference_mode``, where nothing records anyway)."""
    return grad_state.mode


def is_inference_mode_enabled():
    """True inside ``inference_mode()``."""
    return grad_state.inference


class _DecoratorContextManager:
    """Usable as ``with no_grad():`` and as ``@no_grad()`` (or bare ``@no_grad``)."""

    def __new__(cls, func=None, *args, **kwargs):
        if callable(func) and cls is not set_grad_enabled:
            return cls()(func)
        return super().__new__(cls)

    def __call__(self, func):
        if inspect.isgeneratorfunction(func):
            return self._wrap_generator(func)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.__class__(*self._args()):
                return func(*args, **kwargs)
        return wrapper

    def _wrap_generator(self, func):
        # A generator runs in pieces, between which the caller's mode applies; each
        # piece runs under this mode (PyTorch's _wrap_generator does the same).
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            gen = func(*args, **kwargs)
            try:
                with self.__class__(*self._args()):
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.__class__(*self._args()):
                            gen.close()
                        raise
                    except BaseException as exc:
                        with self.__class__(*self._args()):
                            response = gen.throw(exc)
                    else:
                        with self.__class__(*self._args()):
                            response = gen.send(request)
            except StopIteration as stop:
                return stop.value
        return wrapper

    def _args(self):
        return ()

    def __exit__(self, *exc):
        set_state(self._prev, grad_state.inference)
        return False


class no_grad(_DecoratorContextManager):
    """Context manager and decorator that stops recording the graph."""

    def __enter__(self):
        self._prev = grad_state.mode
        set_state(False, grad_state.inference)


class enable_grad(_DecoratorContextManager):
    """Context manager and decorator that turns recording back on inside ``no_grad``."""

    def __enter__(self):
        self._prev = grad_state.mode
        set_state(True, grad_state.inference)


class set_grad_enabled(_DecoratorContextManager):
    """Set recording on or off; takes effect at once, and as a context manager restores."""

    def __init__(self, mode):
        self.mode = bool(mode)
        self._prev = grad_state.mode
        set_state(self.mode, grad_state.inference)

    def __enter__(self):
        pass

    def _args(self):
        return (self.mode,)

    def __call__(self, func):
        set_state(self._prev, grad_state.inference)  # decorating must not flip the mode now
        return super().__call__(func)


class inference_mode(_DecoratorContextManager):
    """No recording, even under ``enable_grad``, and the tensors made inside are
    inference tensors (NOTE [ Inference tensors ] in ember/autograd/inference.py);
    ``inference_mode(False)`` leaves it for a region, recording again."""

    def __init__(self, mode=True):
        self.mode = mode

    def __enter__(self):
        self._prev = (grad_state.mode, grad_state.inference)
        # Like PyTorch's InferenceMode guard, the grad mode is the opposite of the
        # mode, so inference_mode(False) turns recording on.
        set_state(not self.mode, bool(self.mode))
        inference.enter(bool(self.mode))

    def __exit__(self, *exc):
        set_state(*self._prev)
        inference.leave(bool(self.mode))
        return False

    def _args(self):
        return (self.mode,)


from ember.autograd import inference  # noqa: E402  (it reads grad_state)
