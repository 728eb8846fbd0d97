"""Forward-mode automatic differentiation with dual tensors.

PyTorch counterpart: torch/autograd/forward_ad.py (v2.13): ``dual_level``,
``enter_dual_level``/``exit_dual_level``, ``make_dual``, ``unpack_dual`` and the
``UnpackedDualTensor`` namedtuple, with PyTorch's errors.

Inside a dual level a tensor may carry a *tangent*: ``make_dual(x, v)`` is ``x`` with
tangent ``v``, every op a dual tensor meets computes its output's tangent with its
forward-derivative rule (NOTE [ Forward grads at the dispatcher ] in forward_grad.py),
and ``unpack_dual(y).tangent`` is then ``J v``: a Jacobian-vector product in one
forward pass, with no graph kept.

    >>> import ember
    >>> import ember.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     y = fwAD.make_dual(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 0.0])) ** 2
    ...     fwAD.unpack_dual(y).tangent
    tensor([2., 0.])

As in PyTorch, only one level may be open at a time through this API
(``ember.func.jvp`` opens levels inside one another, which is how ``jacfwd`` nests).
"""

from typing import NamedTuple

from ember.autograd import forward_grad
from ember.autograd.forward_grad import Level, state
from ember.autograd.grad_mode import _DecoratorContextManager
from ember.dispatch_modes import modes

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "dual_level"]


def _current_level():
    return state.levels[-1].index if state.levels else -1


def enter_dual_level():
    """Open a new forward-grad level and return its index; PyTorch allows one at a time."""
    if state.levels:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    return push_level(public=True)


def exit_dual_level(*, level=None):
    """Close the innermost level: every tangent of that level is dropped."""
    current = _current_level()
    if level is None:
        level = current
    if level != current:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. "
                           "This is not supported.")
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    pop_level()


def push_level(public=False):
    """Open a level inside the open ones (ember.func.jvp nests them; inside a level
    opened by ``enter_dual_level``, PyTorch refuses, and so does ember); its index."""
    if any(level.public for level in state.levels):
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    level = Level(len(state.levels), public)
    state.levels.append(level)
    state.visible = len(state.levels)
    modes.set_forward_ad(forward_grad)
    return level.index


def pop_level():
    level = state.levels.pop()
    level.alive = False
    state.visible = len(state.levels)
    if not state.levels:
        modes.set_forward_ad(None)


def _level(index):
    if index is None:
        index = _current_level()
    if 0 <= index < len(state.levels):
        return state.levels[index]
    return None


def make_dual(tensor, tangent, *, level=None):
    """A new tensor aliasing ``tensor``'s memory with ``tangent`` attached at ``level`` (the
    current one by default): as it is when laid out as ``tensor``, a copy otherwise.
    Differentiable in reverse mode, as a view of ``tensor``."""
    found = _level(level)
    if found is None:
        if (level if level is not None else _current_level()) < 0:
            raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                               "enter_dual_level() first.")
        raise RuntimeError("Trying to access a forward AD level with an invalid index. This index was either not "
                           "created or is already deleted.")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if forward_grad.tangent_of(tensor, found) is not None:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward gradient at the same "
                           f"level {found.index} is not supported.")
    forward_grad.check_tangent(tensor, tangent, found)
    dual = _alias(tensor, drop=None)
    forward_grad.set_tangent(dual, found, forward_grad.in_layout_of(tensor, tangent))
    return dual


class UnpackedDualTensor(NamedTuple):
    """``unpack_dual``'s result: the primal and the tangent (None without one)."""

    primal: "object"
    tangent: "object"


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)`` of ``tensor`` at ``level``: the primal is a view of ``tensor``
    without that tangent, the tangent is the one it carries, as it is (or None)."""
    found = _level(level)
    if found is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(_alias(tensor, drop=found), forward_grad.tangent_of(tensor, found))


def _alias(tensor, drop):
    """A view of ``tensor`` (recorded by autograd), carrying its tangents but ``drop``'s."""
    from ember import dispatcher
    from ember.native.shape.views import VIEW

    # dispatch itself, not VIEW(...): the modes would give the alias tangents of its own
    alias = dispatcher.dispatch(VIEW, tensor, shape=tuple(tensor.shape))
    for lv, t in (tensor._fw_grads or {}).items():
        if lv.alive and lv is not drop:
            forward_grad.set_tangent(alias, lv, t)
    return alias


class dual_level(_DecoratorContextManager):
    """Context manager (and decorator) inside which forward AD runs: enters a level on
    entry, exits it (dropping its tangents) on exit."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, exc_type, exc_value, traceback):
        exit_dual_level()
