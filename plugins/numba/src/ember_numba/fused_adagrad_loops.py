"""The compiled loop of ember_numba/fused_adagrad.py (NOTE [ A compiled SGD step, bit for bit ] in
ember_numba/fused_sgd.py).

PyTorch counterpart: aten/src/ATen/native/cpu/FusedAdagradKernel.cpp (v2.13).
"""

import math

from ember_numba.ahead_of_time import ahead_of_time
from ember_numba.exact import jit_exact


@ahead_of_time("void({t}[::1], {t}[::1], {t}[::1], {t}[::1], b1)")
@jit_exact  # no fast-math: NOTE [ A compiled SGD step, bit for bit ] in fused_sgd.py
def adagrad_loop(p, g, state_sum, scalars, maximize):
    """The update of each element, as the lines of ember_optim.adagrad.adagrad;
    ``scalars`` holds the weight decay, eps and ``-clr``."""
    weight_decay, eps, negative_clr = scalars[0], scalars[1], scalars[2]
    for i in range(p.size):
        x = p[i]
        d = -g[i] if maximize else g[i]
        # grad.add(param, alpha=weight_decay); not `+ p * 0`: inf * 0 is NaN,
        # -0 + 0 is +0
        d = d + x * weight_decay if weight_decay != 0 else d
        v = state_sum[i] + d * d  # state_sum.addcmul_(grad, grad, value=1)
        state_sum[i] = v
        # param.addcdiv_(grad, state_sum.sqrt().add_(eps), value=-clr)
        p[i] = x + d * negative_clr / (math.sqrt(v) + eps)
