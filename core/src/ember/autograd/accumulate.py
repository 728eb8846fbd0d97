"""How a gradient is added into a leaf's ``.grad``.

PyTorch counterpart: torch/csrc/autograd/functions/accumulate_grad.h
(``accumulateGrad``) (v2.13).
"""

import sys

from ember.autograd.grad_mode import grad_state
from ember.memory_format import is_non_overlapping_and_dense

# NOTE [ Stealing the incoming gradient ]
# The first gradient a leaf receives becomes its .grad. Copying it costs a full pass
# over the data (the MLP's weight grads are megabytes); aliasing it is wrong when some
# other tensor holds the same object or views its memory: `a + b` hands one gradient
# object to both leaves, and `a.grad.zero_()` would then clear `b.grad` too. PyTorch
# steals the buffer only when nothing else refers to it (use_count() <= 1). ember asks
# the same of CPython, for the tensor and for its array:
# - the tensor is referenced only by the engine's input buffer for this node, this
#   call's argument and getrefcount's own argument (`_STEAL_REFS`); the engine drops
#   its other references before the next node runs;
# - the array is referenced only by that tensor and getrefcount's argument
#   (`_STEAL_ARRAY_REFS`): a second tensor over the same array, or a NumPy view of it
#   (which holds its base), shows up here; and the array is no view itself.
# Both numbers are checked by tests/core/autograd/test_accumulate_grad.py, which fails
# if stealing never happens and if it happens where memory is shared.
_STEAL_REFS = 3
_STEAL_ARRAY_REFS = 2


def _can_steal(new_grad, variable):
    # The counts hold for this helper's frame: `new_grad` is one reference more than in
    # the caller, and the array is never bound to a name here.
    return (sys.getrefcount(new_grad) <= _STEAL_REFS + 1
            and sys.getrefcount(new_grad._data) <= _STEAL_ARRAY_REFS
            and _owns_its_memory(new_grad._data)
            and not new_grad._requires_grad
            and obeys_layout_contract(new_grad, variable))


def _owns_its_memory(array):
    """True when no one but ``array`` can reach its memory: it is no view, or every
    array in its chain of bases is held only by the view above it (a transposed
    matmul result, a reshaped sum: temporaries nobody else kept)."""
    base = getattr(array, "base", None)
    while base is not None:
        # References: the child's .base, the name `base` here, getrefcount's argument.
        if not hasattr(base, "dtype") or sys.getrefcount(base) > 3:
            return False
        base = getattr(base, "base", None)
    return True


# NOTE [ The gradient layout contract ]
# PyTorch gives a leaf's first .grad a layout chosen by the leaf, not by the backward
# formula that made it: a leaf whose elements are non-overlapping and dense (row-major,
# channels_last, a permutation) gets a .grad with its own strides; any other leaf (a
# sliced or expanded one) gets a row-major .grad. An incoming gradient already laid
# out so is stolen (NOTE [ Stealing the incoming gradient ]), any other is copied
# into that layout. So optimizer updates run over matching layouts, and `x.prod(0)`,
# whose backward builds its gradient in a transposed order, still hands a row-major
# leaf a row-major .grad, as torch's does.


def obeys_layout_contract(grad, variable):
    """Whether ``grad`` already has the layout the contract asks of ``variable``'s
    .grad (size-1 dims may have any stride, as in PyTorch)."""
    g, v = grad._data, variable._data
    if v.flags.c_contiguous and v.size:  # the common case: a row-major parameter
        return bool(g.flags.c_contiguous)
    shape = v.shape
    strides = variable.stride()
    if not is_non_overlapping_and_dense(shape, strides):
        return bool(g.flags.c_contiguous)
    pairs = zip(shape, grad.stride(), strides)
    return all(size == 1 or have == want for size, have, want in pairs)


def contract_clone(grad, variable):
    """A copy of ``grad`` laid out as the contract asks of ``variable``'s .grad;
    differentiable (it is ``clone``), for ``create_graph``."""
    from ember.native.copy import CLONE  # ember.native imports the autograd package

    strides = variable.stride()
    if variable._data.flags.c_contiguous and variable._data.size or \
            not is_non_overlapping_and_dense(variable._data.shape, strides):
        return CLONE(grad, order="C")
    return CLONE(grad, strides=strides)


def accumulate_grad(variable, new_grad):
    """Add ``new_grad`` to ``variable.grad`` the way PyTorch does.

    Without ``create_graph`` the sum happens in place, so a reference to ``.grad``
    taken earlier sees the new total; with ``create_graph`` a new tensor is made so
    the sum stays differentiable.
    """
    grad = variable.grad
    if new_grad.is_sparse or grad is not None and grad.is_sparse:
        # (imported here: ember.native imports autograd)
        from ember.native.sparse.gradients import accumulate

        accumulate(variable, new_grad)
    elif grad is None:
        if grad_state.enabled:
            variable.grad = contract_clone(new_grad, variable)
        elif _can_steal(new_grad, variable):
            variable.grad = new_grad
        else:
            variable.grad = contract_clone(new_grad.detach(), variable)
    elif grad_state.enabled:
        variable.grad = grad + new_grad
    else:
        grad.add_(new_grad)
