"""The compiled loop of ember_numba/fused_rmsprop.py (NOTE [ A compiled SGD step, bit for bit ] in
ember_numba/fused_sgd.py).

PyTorch counterpart: aten/src/ATen/native/cpu/FusedAdamKernel.cpp (v2.13), the nearest:
torch has no fused RMSprop.
"""

import math

from ember_numba.ahead_of_time import ahead_of_time
from ember_numba.exact import jit_exact


@ahead_of_time("void({t}[::1], {t}[::1], {t}[::1], {t}[::1], {t}[::1], {t}[::1], b1, b1, b1, b1)")
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
