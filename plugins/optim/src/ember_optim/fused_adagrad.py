"""Adagrad's ``foreach`` and ``fused`` paths: one array kernel, run on whole parameters or
on cache blocks (NOTE [ foreach and fused, on NumPy ] in fused.py), and the op
``optim::_fused_adagrad_`` through which the fused path finds its kernel per device.

PyTorch counterpart: torch/optim/adagrad.py ``_multi_tensor_adagrad`` and
``_fused_adagrad`` (v2.13), for dense gradients.
"""

from ember.dispatcher import Op
from ember_optim._state import advance
from ember_optim.fused import (
    addcdiv_into,
    addcmul_into,
    bump_versions,
    check_fused_params,
    namespace,
    run_kernel,
    working_gradient,
)

__all__ = ["foreach_adagrad", "fused_adagrad"]


def adagrad_kernel(xp, p, g, state_sum, s, t, u, *, weight_decay, eps, maximize, clr):
    """Adagrad's update of one parameter (or block) ``p``, line for line as
    ember_optim.adagrad.adagrad; ``s`` holds the working gradient, ``t`` the denominator,
    ``u`` each line's temporary."""
    d = working_gradient(xp, p, g, s, t, maximize=maximize, weight_decay=weight_decay)
    addcmul_into(xp, state_sum, d, d, 1, scratch=u)  # state_sum.addcmul_(grad, grad, value=1)
    xp.sqrt(state_sum, out=t)  # std = state_sum.sqrt().add_(eps)
    xp.add(t, eps, out=t)
    addcdiv_into(xp, p, d, t, -clr, scratch=u)  # param.addcdiv_(grad, std, value=-clr)


# Found as SGD's kernel is (NOTE [ The fused update as an op ] in fused_sgd.py): the NumPy
# kernel above is the generic one; ember-numba registers a compiled cpu kernel.
fused_adagrad_op = Op("optim::_fused_adagrad_", adagrad_kernel, plugin="ember-optim")


def foreach_adagrad(params, grads, state_sums, steps, *, lr, weight_decay, lr_decay, eps, maximize, fused=False):
    """Adagrad's update over the whole list, bit-identical to the loop's; ``fused`` walks
    each parameter in blocks."""
    if not params:
        return
    options = dict(weight_decay=weight_decay, eps=eps, maximize=maximize)
    per_param = [dict(options, clr=lr / (1 + (step - 1) * lr_decay)) for step in advance(steps)]
    arrays = [[param._data, grads[i]._data, state_sums[i]._data] for i, param in enumerate(params)]
    kernel = fused_adagrad_op.kernel_for(params[0]._device) if fused else adagrad_kernel
    run_kernel(namespace(params), kernel, arrays, per_param, 3, fused=fused)
    bump_versions(params)
    bump_versions(state_sums)


def fused_adagrad(params, grads, state_sums, steps, *, lr, weight_decay, lr_decay, eps, maximize):
    """Adagrad's update, one cache block at a time."""
    check_fused_params(params)
    foreach_adagrad(params, grads, state_sums, steps, lr=lr, weight_decay=weight_decay, lr_decay=lr_decay, eps=eps,
                    maximize=maximize, fused=True)
