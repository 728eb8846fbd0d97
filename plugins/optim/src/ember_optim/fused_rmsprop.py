"""RMSprop's ``foreach`` path and ember's default, the same array kernel in blocks
(NOTE [ foreach and fused, on NumPy ] in fused.py), and the op ``optim::_fused_rmsprop_``
through which the default path finds its kernel per device.

PyTorch counterpart: torch/optim/rmsprop.py ``_multi_tensor_rmsprop`` (v2.13); torch has
no fused RMSprop.
"""

from ember.dispatcher import Op
from ember_optim._state import advance
from ember_optim.fused import (
    add_scaled,
    addcdiv_into,
    addcmul_into,
    bump_versions,
    lerp_into,
    namespace,
    run_kernel,
    working_gradient,
)

__all__ = ["foreach_rmsprop", "fused_rmsprop"]


def rmsprop_kernel(xp, p, g, square_avg, grad_avg, buffer, s, t, u, *, lr, alpha, eps, weight_decay, momentum,
                   centered, maximize):
    """RMSprop's update of one parameter (or block) ``p``, line for line as
    ember_optim.rmsprop.rmsprop; ``s`` holds the working gradient, ``t`` the denominator,
    ``u`` each line's temporary."""
    d = working_gradient(xp, p, g, s, t, maximize=maximize, weight_decay=weight_decay)
    xp.multiply(square_avg, alpha, out=square_avg)  # square_avg.mul_(alpha).addcmul_(grad, grad, ...)
    addcmul_into(xp, square_avg, d, d, 1 - alpha, scratch=t)
    if centered:
        lerp_into(xp, grad_avg, d, 1 - alpha, scratch=t)  # grad_avg.lerp_(grad, 1 - alpha)
        xp.multiply(grad_avg, -1, out=t)  # avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        xp.multiply(t, grad_avg, out=t)
        xp.add(square_avg, t, out=t)
        xp.sqrt(t, out=t)
    else:
        xp.sqrt(square_avg, out=t)  # avg = square_avg.sqrt()
    xp.add(t, eps, out=t)  # avg.add_(eps)
    if momentum > 0:
        xp.multiply(buffer, momentum, out=buffer)  # buffer.mul_(momentum).addcdiv_(grad, avg)
        addcdiv_into(xp, buffer, d, t, 1, scratch=u)
        add_scaled(xp, p, buffer, -lr, out=p, scratch=u)  # param.add_(buffer, alpha=-lr)
    else:
        addcdiv_into(xp, p, d, t, -lr, scratch=u)  # param.addcdiv_(grad, avg, value=-lr)


# Found as SGD's kernel is (NOTE [ The fused update as an op ] in fused_sgd.py): the NumPy
# kernel above is the generic one; ember-numba registers a compiled cpu kernel. torch has
# no fused RMSprop, so the op serves ember's default path only.
fused_rmsprop_op = Op("optim::_fused_rmsprop_", rmsprop_kernel, plugin="ember-optim")


def foreach_rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffers, steps, *, lr, alpha, eps,
                    weight_decay, momentum, centered, maximize, fused=False):
    """RMSprop's update over the whole list, bit-identical to the loop's; ``fused`` walks
    each parameter in blocks."""
    if not params:
        return
    advance(steps)
    options = dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum, centered=centered,
                   maximize=maximize)
    arrays = [[param._data, grads[i]._data, square_avgs[i]._data, grad_avgs[i]._data if centered else None,
               momentum_buffers[i]._data if momentum > 0 else None] for i, param in enumerate(params)]
    kernel = fused_rmsprop_op.kernel_for(params[0]._device) if fused else rmsprop_kernel
    run_kernel(namespace(params), kernel, arrays, [options] * len(params), 3, fused=fused)
    bump_versions(params)
    bump_versions(square_avgs + (grad_avgs if centered else []) + (momentum_buffers if momentum > 0 else []))


def fused_rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffers, steps, *, lr, alpha, eps, weight_decay,
                  momentum, centered, maximize):
    """RMSprop's update, one cache block at a time: ember's default path (torch has no
    fused RMSprop, so there is no ``fused=`` option to ask for it)."""
    foreach_rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffers, steps, lr=lr, alpha=alpha, eps=eps,
                    weight_decay=weight_decay, momentum=momentum, centered=centered, maximize=maximize, fused=True)
