"""The compiled loop of ember_numba/fused_sgd.py (NOTE [ A compiled SGD step, bit for bit ] in
ember_numba/fused_sgd.py).

PyTorch counterpart: aten/src/ATen/native/cpu/FusedSGDKernel.cpp (v2.13).
"""

from ember_numba.ahead_of_time import ahead_of_time
from ember_numba.exact import jit_exact


@ahead_of_time("void({t}[::1], {t}[::1], {t}[::1], {t}, {t}, {t}, {t}, b1, b1, b1, b1)")
@jit_exact  # no fast-math: NOTE [ A compiled SGD step, bit for bit ] in fused_sgd.py
def sgd_loop(p, g, buffer, negative_lr, momentum, damped, weight_decay, has_buffer,
             first, nesterov, maximize):
    """The update of each element, as the lines of ember_optim.sgd.sgd; ``damped`` is
    ``1 - dampening``."""
    for i in range(p.size):
        d = -g[i] if maximize else g[i]
        if weight_decay != 0:  # not `+ p * 0`: inf * 0 is NaN, and -0 + 0 is +0
            d = d + p[i] * weight_decay  # grad.add(param, alpha=weight_decay)
        if has_buffer:
            if first:
                b = d  # buffer = grad.clone()
            else:
                # buffer.mul_(momentum).add_(grad, alpha=1 - dampening)
                b = buffer[i] * momentum + d * damped
            buffer[i] = b
            d = d + b * momentum if nesterov else b  # grad.add(buffer, alpha=momentum)
        p[i] = p[i] + d * negative_lr  # param.add_(grad, alpha=-lr)
