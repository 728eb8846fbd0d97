"""ember-optim's RMSprop update (``optim::_fused_rmsprop_``, ember's default path) as one
compiled loop over each parameter: the cpu kernel ember-numba registers for it.

PyTorch counterpart: aten/src/ATen/native/cpu/FusedAdamKernel.cpp (v2.13), the nearest
fused CPU kernel: torch has no fused RMSprop, only ``_multi_tensor_rmsprop`` in
torch/optim/rmsprop.py.

The NumPy kernel (ember_optim/fused_rmsprop.py) makes six to eleven passes over memory;
this loop makes one, with the NumPy kernel's roundings in its order, bit for bit as
fused_sgd.py's (NOTE [ A compiled SGD step, bit for bit ]): no fast-math, every scalar
in the parameter's dtype, ``lerp_``'s two forms chosen by the weight as
ember_optim.fused.lerp_into chooses, and every array stored on every element (a buffer
an option turned off is the scratch), so that the loop vectorizes (NOTE [ A compiled
Adam step that vectorizes ] in fused_adam.py). Arrays it does not take go to the NumPy
kernel.
"""


import numpy as np

from ember_numba.ahead_of_time import Loops
from ember_numba.arrays import compilable
from ember_numba.exact import flat

loops = Loops("ember_numba.fused_rmsprop_loops")


def overrides():
    """``[(op name, cpu kernel)]``: ``optim::_fused_rmsprop_`` on the cpu, the kernel taking the NumPy one
    (``rmsprop_kernel``) first (NOTE [ The fused update as an op ] in
    ember_optim/fused_sgd.py)."""
    return [("optim::_fused_rmsprop_", fused_rmsprop)]


def fused_rmsprop(fallback, xp, p, g, square_avg, grad_avg, buffer, s, t, u, *, lr, alpha, eps, weight_decay, momentum,
                  centered, maximize):
    """``optim::_fused_rmsprop_`` on the cpu: ``rmsprop_kernel``'s update in one compiled
    pass; the scratch ``s``, ``t`` stands in for a buffer that is off."""
    if not compilable(p, g, square_avg, grad_avg, buffer, empty=True):
        return fallback(xp, p, g, square_avg, grad_avg, buffer, s, t, u, lr=lr, alpha=alpha, eps=eps,
                        weight_decay=weight_decay, momentum=momentum, centered=centered, maximize=maximize)
    weight = 1 - alpha
    near = abs(weight) < 0.5  # lerp_into's choice of form
    # the scalars in the parameter's dtype, as NumPy converts a Python float for the NumPy
    # kernel; one array rather than a NumPy scalar each (about 0.5 us apiece)
    scalars = np.array((weight_decay, alpha, weight, weight if near else 1 - weight, eps, momentum, -lr, -1),
                       p.dtype)
    p = p.reshape(-1)
    loops.rmsprop_loop(p, g.reshape(-1), square_avg.reshape(-1), flat(grad_avg, s.reshape(-1)),
                 flat(buffer, t.reshape(-1)), scalars, maximize, centered, near, momentum > 0)


# one pass over each array: whole parameters, not cache blocks (ember_optim.fused.run_kernel)
fused_rmsprop.in_blocks = False
