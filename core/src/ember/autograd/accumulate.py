"""How a gradient is added into a leaf's ``.grad``.

PyTorch counterpart: torch/csrc/autograd/functions/accumulate_grad.h
(``accumulateGrad``) (v2.13).
"""

import sys

from ember.autograd.grad_mode import grad_state

# NOTE [ Stealing the incoming gradient ]
# The first gradient a leaf receives becomes its .grad. Copying it costs a full pass
# over the data (the MLP's weight grads are megabytes); aliasing it is wrong when some
# other tensor holds the same object or views its memory: `a + b` hands one gradient
# object to both leaves, and `a.grad.zero_()` would then clear `b.grad` too. PyTorch
# steals the buffer only when nothing else refers to it (use_count() <= 1). ember asks
# the same of CPython: the tensor object must be referenced only by the engine's buffer
# and this call, and its array must own its memory (no view of another array).
# `_STEAL_REFS` counts those references plus getrefcount's own argument; it is checked
# by tests/core/autograd/test_accumulate_grad.py.
_STEAL_REFS = 3


def accumulate_grad(variable, new_grad):
    """Add ``new_grad`` to ``variable.grad`` the way PyTorch does.

    Without ``create_graph`` the sum happens in place, so a reference to ``.grad``
    taken earlier sees the new total; with ``create_graph`` a new tensor is made so
    the sum stays differentiable.
    """
    grad = variable.grad
    if grad is None:
        if grad_state.enabled:
            variable.grad = new_grad.clone()
        elif sys.getrefcount(new_grad) <= _STEAL_REFS and new_grad._data.base is None \
                and not new_grad._requires_grad:
            variable.grad = new_grad
        else:
            variable.grad = new_grad.detach().clone()
    elif grad_state.enabled:
        variable.grad = grad + new_grad
    else:
        grad.add_(new_grad)
