"""Autograd for views: which base a view shares memory with, how it was made, and what
happens to its ``grad_fn`` when that memory is written in place.

PyTorch counterpart: torch/csrc/autograd/variable.h and torch/csrc/autograd/variable.cpp
(``DifferentiableViewMeta``, ``CreationMeta``, ``handle_view_on_rebase``,
``VariableHooks::grad_fn``, ``update_tensor_hooks_on_new_gradfn``) (v2.13).

# NOTE [ Views and in-place writes ]
# Whether an op returns a view is a property of the op (``Op(..., view=True)``, torch's
# alias annotation in the schema), never a run-time guess: the dispatcher calls
# ``mark_views`` on every output of such an op. A view records
#   * ``_base``: the root tensor that owns the memory (a view of a view points at the root);
#   * ``_version_counter``: the base's counter, so a write through any alias bumps all;
#   * ``_view_version``: the counter's value when its ``grad_fn`` was last set;
#   * ``_creation_meta``: how it was made: DEFAULT, under no_grad (NO_GRAD_MODE), or as one
#     of several outputs of one op (MULTI_OUTPUT_NODE: unbind, split, chunk).
# When the memory is written in place through another alias, the view's ``grad_fn`` is
# stale: it still points at the history from before the write. As in PyTorch, the
# ``grad_fn`` getter notices (``_view_version`` differs from the counter) and regenerates
# it: the new node reads the view's elements out of the base's *current* gradient by
# storage geometry (``AsStridedBackward0``, ember/native/support/copy_slices.py), which is what
# PyTorch does by default (it replays the view op instead only under
# ``torch.autograd.graph.set_view_replay_enabled``). A view made under no_grad or by a
# multi-output op cannot be regenerated (its history is ambiguous): that raises
# PyTorch's error, as does writing into such a view with grad mode on.
#
# A view requires grad when its base does, also one made under no_grad (a leaf then, with
# no ``grad_fn``), as in PyTorch. Left out: a view of a base that did not require grad,
# taken before the base was written with an operand that does, answers
# ``requires_grad=True`` as in PyTorch, but an op that takes it before anything reads its
# ``grad_fn`` or ``requires_grad`` does not record it (the dispatcher reads the stored
# flag, to stay fast).
"""

from ember.autograd.grad_mode import grad_state
from ember.autograd.graph import _short_name
from ember.dtypes import is_floating_array

DEFAULT = 0
NO_GRAD_MODE = 1
MULTI_OUTPUT_NODE = 2


def mark_views(op, base, outputs):
    """Make every tensor in ``outputs`` a view of ``base``'s memory (called by the
    dispatcher for ops declared ``view=True``)."""
    root = base._base if base._base is not None else base
    counter = base._version_counter
    requires_grad = False
    if not grad_state.enabled:
        meta = NO_GRAD_MODE
        requires_grad = root._requires_grad  # a view requires grad when its base does, even then
    elif op is not None and op.num_outputs != 1:
        meta = MULTI_OUTPUT_NODE
    else:
        meta = base._creation_meta  # a view of a view inherits how its base was made
    version = counter[0]
    for o in outputs:
        o._base = root
        o._version_counter = counter
        o._view_version = version
        if meta:
            o._creation_meta = meta
        if requires_grad and is_floating_array(o._data.dtype):
            o._requires_grad = True


def regenerate_grad_fn(view):
    """The ``grad_fn`` of ``view`` after its memory was written in place through
    another alias (the ``grad_fn`` getter calls this; NOTE [ Views and in-place
    writes ])."""
    base = view._base
    if view._grad_fn is None and not base._requires_grad:
        return None
    if view._creation_meta != DEFAULT:
        raise RuntimeError(rebase_message(view, indirect=True))
    from ember.native.support.copy_slices import AsStridedBackward0

    old_fn, old_nr = view._grad_fn, view._output_nr
    view._grad_fn = AsStridedBackward0(base, view)
    view._output_nr = 0
    view._requires_grad = True
    view._view_version = view._version_counter[0]
    move_retains_grad(view, old_fn, old_nr)
    return view._grad_fn


def check_view_inplace(target):
    """Refuse an in-place write, recorded by autograd, into a view whose history would
    be ambiguous (PyTorch's ``handle_view_on_rebase``)."""
    if target._base is not None and target._creation_meta != DEFAULT:
        raise RuntimeError(rebase_message(target, indirect=False))


def rebase_message(view, indirect):
    """PyTorch's error for a view made under no_grad or by a multi-output op whose memory
    is written in place with grad mode on (directly, or through another alias)."""
    modified = ("its base or another view of its base has been modified inplace" if indirect
                else "is being modified inplace")
    node = view._grad_fn
    if node is not None:
        message = f"Output {view._output_nr} of {_short_name(node)} is a view and {modified}."
    else:
        message = f"A view was created in no_grad mode and {modified} with grad mode enabled."
    if view._creation_meta == MULTI_OUTPUT_NODE:
        return message + (" This view is the output of a function that returns multiple views. Such functions "
                          "do not allow the output views to be modified inplace. You should replace the inplace "
                          "operation by an out-of-place one.")
    return message + (" Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
                      "your code by moving both the view and the inplace either both inside the no_grad block "
                      "(if you don't want the inplace to be tracked) or both outside (if you want the inplace "
                      "to be tracked).")


def move_retains_grad(tensor, old_fn, old_output_nr):
    """After ``tensor`` got a new ``grad_fn``, its ``retain_grad()`` follows it, so
    ``.grad`` is the gradient of the new version (PyTorch moves its retains_grad hook;
    hooks from ``register_hook`` stay with the old node, as there)."""
    retained = old_fn._retains_grad if old_fn is not None else None
    if not retained:
        return
    ref = retained.get(old_output_nr)
    if ref is None or ref() is not tensor:
        return
    del retained[old_output_nr]
    node = tensor._grad_fn
    if node._retains_grad is None:
        node._retains_grad = {}
        node._any_hooks = True
    node._retains_grad[tensor._output_nr] = ref
