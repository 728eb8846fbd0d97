"""ember-optim's fused Adagrad update (``optim::_fused_adagrad_``) as one compiled loop
over each parameter: the cpu kernel ember-numba registers for it.

PyTorch counterpart: aten/src/ATen/native/cpu/FusedAdagradKernel.cpp (v2.13).

The NumPy kernel (ember_optim/fused_adagrad.py) makes six to nine passes over memory;
this loop makes one, with the NumPy kernel's roundings in its order, bit for bit as
fused_sgd.py's (NOTE [ A compiled SGD step, bit for bit ]): no fast-math and every
scalar in the parameter's dtype. Arrays it does not take go to the NumPy kernel.
"""


import numpy as np

from ember_numba.ahead_of_time import Loops
from ember_numba.arrays import compilable

loops = Loops("ember_numba.fused_adagrad_loops")


def overrides():
    """``[(op name, cpu kernel)]``: ``optim::_fused_adagrad_`` on the cpu, the kernel taking the NumPy one
    (``adagrad_kernel``) first (NOTE [ The fused update as an op ] in
    ember_optim/fused_sgd.py)."""
    return [("optim::_fused_adagrad_", fused_adagrad)]


def fused_adagrad(fallback, xp, p, g, state_sum, s, t, u, *, weight_decay, eps, maximize, clr):
    """``optim::_fused_adagrad_`` on the cpu: ``adagrad_kernel``'s update in one compiled
    pass; the scratch ``s``, ``t``, ``u`` is unused."""
    if not compilable(p, g, state_sum, empty=True):
        return fallback(xp, p, g, state_sum, s, t, u, weight_decay=weight_decay, eps=eps, maximize=maximize,
                        clr=clr)
    # the scalars in the parameter's dtype, as NumPy converts a Python float for the NumPy
    # kernel; one array rather than a NumPy scalar each (about 0.5 us apiece)
    scalars = np.array((weight_decay, eps, -clr), p.dtype)
    loops.adagrad_loop(p.reshape(-1), g.reshape(-1), state_sum.reshape(-1), scalars, maximize)


# one pass over each array: whole parameters, not cache blocks (ember_optim.fused.run_kernel)
fused_adagrad.in_blocks = False
