"""Anomaly detection: remember where each node was created, and fail loudly when a
backward function returns NaN.

PyTorch counterpart: torch/autograd/anomaly_mode.py and
torch/csrc/autograd/anomaly_mode.cpp (v2.13).
"""

import traceback
import warnings


class _AnomalyState:
    # Process-wide, like PyTorch's AnomalyMode (a static flag, not thread-local).
    enabled = False
    check_nan = True


state = _state = _AnomalyState()


def is_anomaly_enabled():
    return _state.enabled


def is_anomaly_check_nan_enabled():
    return _state.check_nan


class detect_anomaly:
    """Context manager that turns anomaly detection on (not a decorator, as in PyTorch).

    >>> import ember
    >>> x = ember.tensor([0.0], requires_grad=True)
    >>> with ember.autograd.detect_anomaly():
    ...     y = (x.sqrt() * 0).sum()   # sqrt'(0) is inf, times 0 is NaN
    ...     y.backward()               # doctest: +SKIP
    Traceback (most recent call last):
    RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.
    """

    def __init__(self, check_nan=True):
        self.check_nan = check_nan

    def __enter__(self):
        self._prev = (_state.enabled, _state.check_nan)
        _state.enabled = True
        _state.check_nan = self.check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", stacklevel=2)

    def __exit__(self, *exc):
        _state.enabled, _state.check_nan = self._prev
        return False


class set_detect_anomaly:
    """Turn anomaly detection on or off; also a context manager that restores it."""

    def __init__(self, mode, check_nan=True):
        self._prev = (_state.enabled, _state.check_nan)
        _state.enabled = bool(mode)
        _state.check_nan = check_nan

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _state.enabled, _state.check_nan = self._prev
        return False


def record_creation(node):
    """Store the forward stack on ``node`` (called by the dispatcher in anomaly mode)."""
    node._anomaly_trace = "".join(traceback.format_stack()[:-2])


def apply_checked(node, grads):
    """Run ``node`` and report its forward trace if it fails or returns NaN."""
    try:
        outputs = node.apply(grads)
    except Exception:
        _warn_trace(node)
        raise
    if _state.check_nan:
        for i, g in enumerate(outputs):
            if g is not None and g.dtype.is_floating_point and bool(g.isnan().any()):
                _warn_trace(node)
                raise RuntimeError(f"Function '{node.name()}' returned nan values "
                                   f"in its {i}th output.")
    return outputs


def _warn_trace(node):
    if node._anomaly_trace:
        warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
                      f"{node._anomaly_trace}", stacklevel=2)
