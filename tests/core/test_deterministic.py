"""``ember.use_deterministic_algorithms`` and its readers (ember/deterministic.py) behave
as torch's: defaults, ``warn_only``, the debug mode by name and by level, the errors;
and the flags beside it: ``ember.backends.cpu.benchmark`` is off by default, as
``torch.backends.cudnn.benchmark`` is."""

import pytest
import torch

import ember


@pytest.fixture
def restored():
    """Both libraries' global switch as it was before the test."""
    saved = [(lib, lib.are_deterministic_algorithms_enabled(), lib.is_deterministic_algorithms_warn_only_enabled())
             for lib in (ember, torch)]
    yield
    for lib, mode, warn_only in saved:
        lib.use_deterministic_algorithms(mode, warn_only=warn_only)


def _state(lib):
    return (lib.are_deterministic_algorithms_enabled(), lib.is_deterministic_algorithms_warn_only_enabled(),
            lib.get_deterministic_debug_mode())


def test_the_defaults_are_torchs():
    assert _state(ember) == _state(torch) == (False, False, 0)
    assert ember.backends.cpu.benchmark is False and torch.backends.cudnn.benchmark is False


@pytest.mark.parametrize("calls", [
    [(True, {})], [(True, {"warn_only": True})], [(False, {"warn_only": True})],
    [(True, {"warn_only": True}), (True, {})], [(True, {}), (False, {})],
])
def test_use_deterministic_algorithms_as_torch(restored, calls):
    for mode, kwargs in calls:
        for lib in (ember, torch):
            lib.use_deterministic_algorithms(mode, **kwargs)
        assert _state(ember) == _state(torch)


@pytest.mark.parametrize("debug_mode", ["default", "warn", "error", 0, 1, 2])
def test_the_debug_mode_as_torch(restored, debug_mode):
    for lib in (ember, torch):
        lib.set_deterministic_debug_mode(debug_mode)
    assert _state(ember) == _state(torch)


@pytest.mark.parametrize("call, error", [
    (lambda lib: lib.use_deterministic_algorithms(1), TypeError),
    (lambda lib: lib.set_deterministic_debug_mode("loud"), RuntimeError),
    (lambda lib: lib.set_deterministic_debug_mode(3), RuntimeError),
    (lambda lib: lib.set_deterministic_debug_mode(1.0), TypeError),
])
def test_bad_arguments_fail_as_in_torch(restored, call, error):
    messages = []
    for lib in (ember, torch):
        with pytest.raises(error) as raised:
            call(lib)
        messages.append(str(raised.value))
    # the same words after the function's name (torch names its C++ binding there)
    assert messages[0].split("(): ", 1)[-1] == messages[1].split("(): ", 1)[-1]
