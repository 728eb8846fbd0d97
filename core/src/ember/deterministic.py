"""``ember.use_deterministic_algorithms``: the global switch that asks every op for
an algorithm that gives the same bits for the same input in every run.

PyTorch counterpart: torch/__init__.py (``use_deterministic_algorithms``,
``are_deterministic_algorithms_enabled``, ``is_deterministic_algorithms_warn_only_enabled``,
``set_deterministic_debug_mode``, ``get_deterministic_debug_mode``) over
aten/src/ATen/Context.h's ``deterministicAlgorithms`` flag (v2.13). torch's flag makes
nondeterministic CUDA kernels (atomic adds, cuDNN's benchmark) pick deterministic ones
or raise. ember's kernels are deterministic already (NumPy on one device, no atomics);
the one choice that is not is a measured one: with the flag on, CPU convolutions ignore
``ember.backends.cpu.benchmark`` and take their fixed rule (NOTE [ Choosing a
convolution algorithm ] in ember/native/convolution/algorithm.py), so nothing raises or
warns, and ``warn_only`` is kept for torch's signature. ember leaves out the inductor
config torch also sets.
"""

import threading

# (mode, warn_only): one setting for the process, as torch's global context keeps it.
_lock = threading.Lock()
_state = {"enabled": False, "warn_only": False}
_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Make ember's ops use deterministic algorithms (``mode=True``) or allow any
    (``False``, the default). With it on, a convolution never measures its algorithm.

    >>> import ember
    >>> ember.use_deterministic_algorithms(True)
    >>> ember.are_deterministic_algorithms_enabled()
    True
    >>> ember.use_deterministic_algorithms(False)
    """
    if not isinstance(mode, bool):
        raise TypeError("use_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not "
                        f"{type(mode).__name__}")
    with _lock:
        _state.update(enabled=mode, warn_only=bool(warn_only))


def are_deterministic_algorithms_enabled():
    """Whether :func:`use_deterministic_algorithms` is on."""
    return _state["enabled"]


def is_deterministic_algorithms_warn_only_enabled():
    """Whether the last :func:`use_deterministic_algorithms` call passed ``warn_only=True``
    (as torch, whether or not the mode it set is on)."""
    return _state["warn_only"]


def set_deterministic_debug_mode(debug_mode):
    """The same switch by level: ``"default"``/0 off, ``"warn"``/1 on with ``warn_only``,
    ``"error"``/2 on."""
    if not isinstance(debug_mode, (int, str)):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    """0, 1 or 2, as :func:`set_deterministic_debug_mode` takes them."""
    if not are_deterministic_algorithms_enabled():
        return 0
    return 1 if is_deterministic_algorithms_warn_only_enabled() else 2
