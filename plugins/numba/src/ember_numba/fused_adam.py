"""ember-optim's fused Adam and AdamW update (``optim::_fused_adam_``) as one compiled
loop over each parameter or block: the cpu kernel ember-numba registers for it.

PyTorch counterpart: aten/src/ATen/native/cpu/FusedAdamKernel.cpp (v2.13).

The NumPy kernel (ember_optim/fused_adam.py) makes about thirteen passes over memory;
this loop makes one, with the NumPy kernel's roundings in its order, bit for bit as
fused_sgd.py's (NOTE [ A compiled SGD step, bit for bit ]): no fast-math, every scalar
in the parameter's dtype, ``lerp_``'s two forms chosen by the weight as
ember_optim.fused.lerp_into chooses, and float32 ``sqrt`` and division correctly
rounded in both. Arrays it does not take go to the NumPy kernel.
"""

import math

from ember_numba.arrays import compilable
from ember_numba.exact import flat, jit_exact
from ember_optim.fused_adam import adam_kernel, fused_adam_op


def overrides():
    """``[(op, cpu kernel)]``: ``optim::_fused_adam_`` on the cpu (NOTE [ The fused update as an op ] in
    ember_optim/fused_sgd.py)."""
    return [(fused_adam_op, fused_adam)]


def fused_adam(xp, p, g, m, v, v_max, s, t, *, beta1, beta2, lr, weight_decay, eps, maximize,
               decoupled_weight_decay, step_size, bias_correction2_sqrt):
    """``optim::_fused_adam_`` on the cpu: ``adam_kernel``'s update in one compiled pass;
    the scratch ``s``, ``t`` is unused."""
    if not compilable(p, g, m, v, v_max, empty=True):
        return adam_kernel(xp, p, g, m, v, v_max, s, t, beta1=beta1, beta2=beta2, lr=lr,
                           weight_decay=weight_decay, eps=eps, maximize=maximize,
                           decoupled_weight_decay=decoupled_weight_decay, step_size=step_size,
                           bias_correction2_sqrt=bias_correction2_sqrt)
    scalar = p.dtype.type  # the NumPy kernel's conversion of Python floats
    decay = weight_decay != 0 and decoupled_weight_decay
    l2 = 0 if decoupled_weight_decay else weight_decay
    weight = 1 - beta1
    near = abs(weight) < 0.5  # lerp_into's choice of form
    p = p.reshape(-1)
    adam_loop(p, g.reshape(-1), m.reshape(-1), v.reshape(-1), flat(v_max, s.reshape(-1)), v_max is not None,
              maximize, scalar(1 - lr * weight_decay) if decay else scalar(1), scalar(l2),
              scalar(weight if near else 1 - weight), near, scalar(beta2), scalar(1 - beta2),
              scalar(bias_correction2_sqrt), scalar(eps), scalar(-step_size))


# one pass over each array: whole parameters, not cache blocks (ember_optim.fused.run_kernel);
# measured on bench/optim_step.py's MLP, in one process: Adam 0.70 ms in blocks, 0.68 whole
fused_adam.in_blocks = False


# NOTE [ A compiled Adam step that vectorizes ]
# The loop pays only as SIMD code: scalar float32 division and sqrt took 1.5x the NumPy
# kernel's thirteen vectorized passes. Two things kept LLVM from vectorizing it:
# numba's default error model, which checks each division for zero to raise Python's
# ZeroDivisionError (jit_exact uses NumPy's, exact.py), and stores under a condition.
# So the loop stores every array on every element: the AdamW shrink multiplies by 1
# when off (exact), and without amsgrad the maximum goes to the scratch ``s``, unused.
# On 401K float32 values, one process: 615 us with the stores under conditions, 235 us
# without.
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
