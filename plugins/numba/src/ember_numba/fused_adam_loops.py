"""The compiled loop of ember_numba/fused_adam.py (NOTE [ A compiled SGD step, bit for bit ] in
ember_numba/fused_sgd.py).

PyTorch counterpart: aten/src/ATen/native/cpu/FusedAdamKernel.cpp (v2.13).
"""

import math

from ember_numba.ahead_of_time import ahead_of_time
from ember_numba.exact import jit_exact


# NOTE [ A compiled Adam step that vectorizes ]
# The loop pays only as SIMD code: scalar float32 division and sqrt took 1.5x the NumPy
# kernel's thirteen vectorized passes. Two things kept LLVM from vectorizing it:
# numba's default error model, which checks each division for zero to raise Python's
# ZeroDivisionError (jit_exact uses NumPy's, exact.py), and stores under a condition.
# So the loop stores every array on every element: the AdamW shrink multiplies by 1
# when off (exact), and without amsgrad the maximum goes to the scratch ``s``, unused.
# On 401K float32 values, one process: 615 us with the stores under conditions, 235 us
# without.
@ahead_of_time("void({t}[::1], {t}[::1], {t}[::1], {t}[::1], {t}[::1], b1, b1, {t}, "
               "{t}, {t}, b1, {t}, {t}, {t}, {t}, {t})")
@jit_exact  # no fast-math: NOTE [ A compiled SGD step, bit for bit ] in fused_sgd.py
def adam_loop(p, g, m, v, v_max, amsgrad, maximize, shrink, l2, weight, near, beta2,
              one_minus_beta2, bias_correction2_sqrt, eps, negative_step_size):
    """The update of each element, as the lines of ember_optim.adam.adam."""
    for i in range(p.size):
        x = p[i] * shrink  # AdamW: param.mul_(1 - lr * weight_decay)
        d = -g[i] if maximize else g[i]
        # grad.add(param, alpha=weight_decay); not `+ p * 0` (inf * 0 is NaN, -0 + 0 is +0)
        d = d + x * l2 if l2 != 0 else d
        # exp_avg.lerp_(grad, 1 - beta1), from the nearer end
        a = m[i]
        a = a + (d - a) * weight if near else d - (d - a) * weight
        m[i] = a
        # exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        w = v[i] * beta2 + d * one_minus_beta2 * d
        v[i] = w
        top = v_max[i]  # torch.maximum(max_exp_avg_sq, exp_avg_sq): NaN wins
        w = top if amsgrad and (top >= w or top != top) else w
        v_max[i] = w
        # param.addcdiv_(exp_avg, (v.sqrt() / bias_correction2_sqrt).add_(eps), value=-step_size)
        p[i] = x + a * negative_step_size / (math.sqrt(w) / bias_correction2_sqrt + eps)
