"""TorchScript's Python-side names, so model code written for ``torch.jit.script`` runs
on ember: ``script``, ``ignore``, ``unused``, ``export``, ``is_scripting``,
``is_tracing``, ``annotate``.

PyTorch counterpart: torch/jit/_script.py (``script``) and torch/_jit_internal.py
(``ignore``, ``unused``, ``export``, ``is_scripting``, ``annotate``) (v2.13).

# NOTE [ ember.jit.script runs eagerly ]
# torch.jit.script compiles a module's or function's Python source into TorchScript IR,
# a statically typed subset of Python that runs without the interpreter. ember has no
# such compiler: its graphs come from running the program (``ember.jit.trace`` records
# the dispatched ops, ``ember.fx.symbolic_trace`` the calls). So ``script(obj)`` returns
# ``obj`` itself, which computes what the scripted object would, eagerly: what differs
# is what torch adds to a ScriptModule (``.graph``, ``.code``, type checking at script
# time, saving with ``torch.jit.save``). To get a graph to save, trace instead:
# ``ember.jit.save(ember.jit.trace(model, example), path)``. The decorators that steer
# the compiler (``ignore``, ``unused``, ``export``) return the function unchanged, and
# ``is_scripting()`` is False, as it is in torch outside compiled code.
"""

import warnings

from ember.dispatch_modes import modes


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """``obj`` itself, run eagerly (NOTE [ ember.jit.script runs eagerly ]). Warns as
    torch 2.13's does, which deprecates scripting."""
    warnings.warn("`ember.jit.script` is deprecated (as `torch.jit.script` in torch 2.13) and runs the object "
                  "eagerly; use `ember.jit.trace` for a graph", DeprecationWarning, stacklevel=2)
    return obj


def ignore(drop=False, **kwargs):
    """Leave a function to Python (``@ignore`` or ``@ignore(drop=True)``): unchanged."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    """Mark a method the compiler should skip: unchanged."""
    return fn


def export(fn):
    """Mark a method to compile besides ``forward``: unchanged."""
    return fn


def is_scripting():
    """False: ember never runs compiled TorchScript."""
    return False


def is_tracing():
    """True while ``ember.jit.trace`` records (torch: inside ``torch.jit.trace``)."""
    return modes.trace is not None


def annotate(the_type, the_value):
    """A type hint for the compiler: ``the_value`` unchanged."""
    return the_value
