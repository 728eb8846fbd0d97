"""``ember.func``: composable function transforms — grad, vjp, jvp, jacrev, jacfwd,
hessian, vmap — and ``functional_call``.

PyTorch counterpart: torch/func/__init__.py (v2.13), whose transforms live in
torch/_functorch (``eager_transforms.py``, ``apis.py``, ``vmap.py``).

torch's functorch builds the transforms from interpreter levels in the dispatcher
(each ``grad`` a level of its own, ``vmap`` batching rules per op). ember builds them
from what it has: ``grad`` and friends from reverse-mode autograd with the graph kept
while an enclosing transform still needs it (so ``grad(grad(f))`` works), and ``vmap``
as functorch does, from batched tensors, a vmap mode at the dispatcher and batch rules
per op (NOTE [ vmap at the dispatcher ] in batching.py). The values are torch's; where
the semantics differ the docstrings say so.
"""

from ember.func.eager_transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp
from ember.func.functional_call import functional_call, stack_module_state
from ember.func.vmap import vmap

__all__ = ["functional_call", "stack_module_state", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd",
           "hessian", "vmap"]
