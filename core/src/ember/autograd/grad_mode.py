"""Whether operations record the autograd graph: ``no_grad``, ``enable_grad``,
``set_grad_enabled``, ``inference_mode``.

PyTorch counterpart: torch/autograd/grad_mode.py and c10/core/GradMode.h (v2.13).

The flag is thread-local, as in PyTorch: a DataLoader's pinning thread or a user's
worker thread does not switch off recording for the main thread. ``inference_mode``
is ``no_grad`` here: ember has no separate inference tensors.
"""

import functools
import inspect
import threading


class _GradState(threading.local):
    enabled = True
    inference = False


grad_state = _GradState()


def is_grad_enabled():
    """True when new operations are recorded for backward."""
    return grad_state.enabled


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
        grad_state.enabled = self._prev
        return False


class no_grad(_DecoratorContextManager):
    """Context manager and decorator that stops recording the graph."""

    def __enter__(self):
        self._prev = grad_state.enabled
        grad_state.enabled = False


class enable_grad(_DecoratorContextManager):
    """Context manager and decorator that turns recording back on inside ``no_grad``."""

    def __enter__(self):
        self._prev = grad_state.enabled
        grad_state.enabled = True


class set_grad_enabled(_DecoratorContextManager):
    """Set recording on or off; takes effect at once, and as a context manager restores."""

    def __init__(self, mode):
        self.mode = bool(mode)
        self._prev = grad_state.enabled
        grad_state.enabled = self.mode

    def __enter__(self):
        pass

    def _args(self):
        return (self.mode,)

    def __call__(self, func):
        grad_state.enabled = self._prev  # decorating must not flip the mode now
        return super().__call__(func)


class inference_mode(_DecoratorContextManager):
    """``no_grad`` under PyTorch's name (ember has no inference tensors);
    ``inference_mode(False)`` records again, as in PyTorch."""

    def __init__(self, mode=True):
        self.mode = mode

    def __enter__(self):
        self._prev = grad_state.enabled
        self._prev_inference = grad_state.inference
        # Like PyTorch's InferenceMode guard: recording is the opposite of the mode,
        # so inference_mode(False) turns recording on.
        grad_state.enabled = not self.mode
        grad_state.inference = bool(self.mode)

    def __exit__(self, *exc):
        grad_state.enabled = self._prev
        grad_state.inference = self._prev_inference
        return False

    def _args(self):
        return (self.mode,)
