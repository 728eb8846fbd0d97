"""Hooks every module runs: ``register_module_forward_pre_hook``,
``register_module_forward_hook``, ``register_module_full_backward_pre_hook`` and
``register_module_full_backward_hook``, for tools that watch a whole program (a
profiler, an activation logger) without touching each module.

PyTorch counterpart: torch/nn/modules/module.py (``_global_forward_hooks`` and the
``register_module_*`` functions) (v2.13). As in torch, a module call runs the global
hooks of each kind before its own, and they apply to every module, those made before
the registration too. ``Module.__call__`` tests ``STATE.any`` so a program without
global hooks pays one attribute read per call.
"""

from collections import OrderedDict

from ember.autograd.graph import RemovableHandle

forward_pre_hooks = OrderedDict()
forward_hooks = OrderedDict()
forward_hooks_with_kwargs = set()
forward_hooks_always_called = set()
backward_pre_hooks = OrderedDict()
backward_hooks = OrderedDict()


class _State:
    any = False  # is any global hook registered?


STATE = _State()


def _refresh():
    STATE.any = bool(forward_pre_hooks or forward_hooks or backward_pre_hooks or backward_hooks)


class _GlobalHookHandle(RemovableHandle):
    def __init__(self, hooks, hook, *flag_sets):
        super().__init__(hooks)
        hooks[self.id] = hook
        self.flag_sets = flag_sets
        _refresh()

    def remove(self):
        super().remove()
        for flags in self.flag_sets:
            flags.discard(self.id)
        _refresh()


def register_module_forward_pre_hook(hook):
    """``hook(module, args)`` before every module's forward; may return new args."""
    return _GlobalHookHandle(forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """``hook(module, args, output)`` (``hook(module, args, kwargs, output)`` with
    ``with_kwargs``) after every module's forward; may return a new output."""
    handle = _GlobalHookHandle(forward_hooks, hook, forward_hooks_with_kwargs, forward_hooks_always_called)
    if with_kwargs:
        forward_hooks_with_kwargs.add(handle.id)
    if always_call:
        forward_hooks_always_called.add(handle.id)
    return handle


def register_module_full_backward_pre_hook(hook):
    """``hook(module, grad_output)`` for every module, when its output gradients are known."""
    return _GlobalHookHandle(backward_pre_hooks, hook)


def register_module_full_backward_hook(hook):
    """``hook(module, grad_input, grad_output)`` for every module, when the gradients of
    its positional inputs are known."""
    return _GlobalHookHandle(backward_hooks, hook)
