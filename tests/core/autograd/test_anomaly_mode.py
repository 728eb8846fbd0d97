"""Anomaly detection (ember/autograd/anomaly_mode.py) against torch: the NaN error
names the backward node, the warning carries the forward traceback."""

import warnings

import pytest
import torch

import ember


def run(lib, check_nan=True, use_set=False):
    """sqrt'(0) * 0 is NaN: backward of sqrt returns NaN. Returns (error, warnings)."""
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        error = None
        try:
            if use_set:
                with lib.autograd.set_detect_anomaly(True, check_nan=check_nan):
                    y = (x.sqrt() * 0).sum()  # forward line named in the warning
                    y.backward()
            else:
                with lib.autograd.detect_anomaly(check_nan=check_nan):
                    y = (x.sqrt() * 0).sum()  # forward line named in the warning
                    y.backward()
        except RuntimeError as exc:
            error = str(exc)
    messages = [str(w.message) for w in caught if not issubclass(w.category, RuntimeWarning)]
    return error, messages, x.grad


@pytest.mark.parametrize("use_set", [False, True])
def test_nan_names_the_backward_node(use_set):
    ember_error, ember_warnings, _ = run(ember, use_set=use_set)
    torch_error, torch_warnings, _ = run(torch, use_set=use_set)
    assert ember_error == torch_error == "Function 'SqrtBackward0' returned nan values in its 0th output."
    trace = [m for m in ember_warnings if m.startswith("Error detected in SqrtBackward0")]
    assert trace and "y = (x.sqrt() * 0).sum()  # forward line named in the warning" in trace[0]
    assert len(ember_warnings) == len(torch_warnings)


def test_check_nan_false_lets_nan_through():
    ember_error, _, ember_grad = run(ember, check_nan=False)
    torch_error, _, torch_grad = run(torch, check_nan=False)
    assert ember_error is None and torch_error is None
    assert str(ember_grad.tolist()) == str(torch_grad.tolist())


def test_error_in_custom_backward_warns_with_forward_trace():
    def program(lib):
        class Broken(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                raise ValueError("boom")

        x = lib.tensor([1.0], requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(ValueError, match="boom"):
                with lib.autograd.detect_anomaly():
                    Broken.apply(x).sum().backward()
        return [str(w.message).split(".")[0] for w in caught]
    assert program(ember) == program(torch)


def test_flags_are_restored():
    def program(lib):
        seen = [lib.is_anomaly_enabled()]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly(check_nan=False):
                seen += [lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()]
        seen += [lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()]
        lib.autograd.set_detect_anomaly(True)
        seen.append(lib.is_anomaly_enabled())
        lib.autograd.set_detect_anomaly(False)
        seen.append(lib.is_anomaly_enabled())
        return seen
    assert program(ember) == program(torch)


def test_detect_anomaly_is_not_a_decorator():
    for lib in (ember, torch):
        with pytest.raises(TypeError):
            lib.autograd.detect_anomaly()(lambda: None)
