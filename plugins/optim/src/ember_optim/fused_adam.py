"""Adam's and AdamW's ``foreach`` and ``fused`` paths: one array kernel, run on whole
parameters or on cache blocks (NOTE [ foreach and fused, on NumPy ] in fused.py), and
the op ``optim::_fused_adam_`` through which the fused path finds its kernel per device.

PyTorch counterpart: torch/optim/adam.py ``_multi_tensor_adam`` and ``_fused_adam``
(v2.13).
"""

from ember.dispatcher import Op
from ember_optim._state import advance
from ember_optim.fused import (
    addcdiv_into,
    addcmul_into,
    bump_versions,
    check_fused_params,
    lerp_into,
    namespace,
    run_kernel,
    working_gradient,
)

__all__ = ["foreach_adam", "fused_adam"]


def adam_kernel(xp, p, g, m, v, v_max, s, t, *, beta1, beta2, lr, weight_decay, eps,
                maximize, decoupled_weight_decay, step_size, bias_correction2_sqrt):
    """Adam's update of one parameter (or block) ``p``, line for line as
    ember_optim.adam.adam; ``s`` holds the working gradient, ``t`` each temporary."""
    if weight_decay != 0 and decoupled_weight_decay:
        xp.multiply(p, 1 - lr * weight_decay, out=p)  # AdamW: param.mul_(...)
    l2 = 0 if decoupled_weight_decay else weight_decay
    d = working_gradient(xp, p, g, s, t, maximize=maximize, weight_decay=l2)
    lerp_into(xp, m, d, 1 - beta1, scratch=t)  # exp_avg.lerp_(grad, 1 - beta1)
    xp.multiply(v, beta2, out=v)  # exp_avg_sq.mul_(beta2)
    addcmul_into(xp, v, d, d, 1 - beta2, scratch=t)  # .addcmul_(grad, grad, 1 - beta2)
    if v_max is not None:
        xp.maximum(v_max, v, out=v_max)
        v = v_max
    xp.sqrt(v, out=t)  # denom = (v.sqrt() / bias_correction2_sqrt).add_(eps)
    if bias_correction2_sqrt != 1:  # 1.0 exactly after many steps: x / 1 is x
        xp.divide(t, bias_correction2_sqrt, out=t)
    xp.add(t, eps, out=t)
    addcdiv_into(xp, p, m, t, -step_size, scratch=s)  # param.addcdiv_(m, denom, ...)


# One op for Adam and AdamW (torch has `_fused_adam_` and `_fused_adamw_`): the kernel
# takes `decoupled_weight_decay`. Found as SGD's is (NOTE [ The fused update as an op ]
# in fused_sgd.py); ember-numba registers a compiled cpu kernel.
fused_adam_op = Op("optim::_fused_adam_", adam_kernel, plugin="ember-optim")


def foreach_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, *, amsgrad, beta1, beta2, lr,
                 weight_decay, eps, maximize, decoupled_weight_decay=False, fused=False):
    """Adam's update over the whole list, bit-identical to the loop's."""
    if not params:
        return
    options = dict(beta1=beta1, beta2=beta2, lr=lr, weight_decay=weight_decay, eps=eps, maximize=maximize,
                   decoupled_weight_decay=decoupled_weight_decay)
    arrays, per_param = [], []
    for i, (param, step) in enumerate(zip(params, advance(steps))):
        arrays.append([param._data, grads[i]._data, exp_avgs[i]._data, exp_avg_sqs[i]._data,
                       max_exp_avg_sqs[i]._data if amsgrad else None])
        per_param.append(dict(options, step_size=lr / (1 - beta1 ** step),
                              bias_correction2_sqrt=(1 - beta2 ** step) ** 0.5))
    kernel = fused_adam_op.kernel_for(params[0]._device) if fused else adam_kernel
    run_kernel(namespace(params), kernel, arrays, per_param, 2, fused=fused)
    bump_versions(params)
    bump_versions(exp_avgs + exp_avg_sqs + (max_exp_avg_sqs if amsgrad else []))


def fused_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, *, amsgrad, beta1, beta2, lr,
               weight_decay, eps, maximize, decoupled_weight_decay=False):
    """Adam's update, one cache block at a time."""
    check_fused_params(params)
    foreach_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, amsgrad=amsgrad, beta1=beta1,
                 beta2=beta2, lr=lr, weight_decay=weight_decay, eps=eps, maximize=maximize,
                 decoupled_weight_decay=decoupled_weight_decay, fused=True)
