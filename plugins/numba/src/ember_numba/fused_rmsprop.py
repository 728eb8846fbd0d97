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

import math

import numpy as np

from ember_numba.arrays import compilable
from ember_numba.exact import flat, jit_exact
from ember_optim.fused_rmsprop import fused_rmsprop_op, rmsprop_kernel


def overrides():
    """``[(op, cpu kernel)]``: ``optim::_fused_rmsprop_`` on the cpu (NOTE [ The fused update as an op ] in
    ember_optim/fused_sgd.py)."""
    return [(fused_rmsprop_op, fused_rmsprop)]


def fused_rmsprop(xp, p, g, square_avg, grad_avg, buffer, s, t, u, *, lr, alpha, eps, weight_decay, momentum,
                  centered, maximize):
    """``optim::_fused_rmsprop_`` on the cpu: ``rmsprop_kernel``'s update in one compiled
    pass; the scratch ``s``, ``t`` stands in for a buffer that is off."""
    if not compilable(p, g, square_avg, grad_avg, buffer, empty=True):
        return rmsprop_kernel(xp, p, g, square_avg, grad_avg, buffer, s, t, u, lr=lr, alpha=alpha, eps=eps,
                              weight_decay=weight_decay, momentum=momentum, centered=centered, maximize=maximize)
    weight = 1 - alpha
    near = abs(weight) < 0.5  # lerp_into's choice of form
    # the scalars in the parameter's dtype, as NumPy converts a Python float for the NumPy
    # kernel; one array rather than a NumPy scalar each (about 0.5 us apiece)
    scalars = np.array((weight_decay, alpha, weight, weight if near else 1 - weight, eps, momentum, -lr, -1),
                       p.dtype)
    p = p.reshape(-1)
    rmsprop_loop(p, g.reshape(-1), square_avg.reshape(-1), flat(grad_avg, s.reshape(-1)),
                 flat(buffer, t.reshape(-1)), scalars, maximize, centered, near, momentum > 0)


# one pass over each array: whole parameters, not cache blocks (ember_optim.fused.run_kernel)
fused_rmsprop.in_blocks = False


@jit_exact  # no fast-math: NOTE [ A compiled SGD step, bit for bit ] in fused_sgd.py
def rmsprop_loop(p, g, square_avg, grad_avg, buffer, scalars, maximize, centered, near, has_momentum):
    """The update of each element, as the lines of ember_optim.rmsprop.rmsprop; ``scalars``
    holds the weight decay, alpha, ``1 - alpha``, lerp_'s weight for its form, eps, the
    momentum, ``-lr`` and -1."""
    weight_decay, alpha, one_minus_alpha, weight = scalars[0], scalars[1], scalars[2], scalars[3]
    eps, momentum, negative_lr, negative_one = scalars[4], scalars[5], scalars[6], scalars[7]
    for i in range(p.size):
        x = p[i]
        d = -g[i] if maximize else g[i]
        # grad.add(param, alpha=weight_decay); not `+ p * 0` (inf * 0 is NaN, -0 + 0 is +0)
        d = d + x * weight_decay if weight_decay != 0 else d
        # square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        v = square_avg[i] * alpha + d * one_minus_alpha * d
        square_avg[i] = v
        # grad_avg.lerp_(grad, 1 - alpha), from the nearer end
        a = grad_avg[i]
        a = a + (d - a) * weight if near else d - (d - a) * weight
        grad_avg[i] = a
        # avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_(), or square_avg.sqrt()
        avg = math.sqrt(v + a * negative_one * a if centered else v) + eps  # .add_(eps)
        # buffer.mul_(momentum).addcdiv_(grad, avg); param.add_(buffer, alpha=-lr)
        b = buffer[i] * momentum + d / avg
        buffer[i] = b
        # or param.addcdiv_(grad, avg, value=-lr)
        p[i] = x + b * negative_lr if has_momentum else x + d * negative_lr / avg
