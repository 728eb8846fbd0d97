"""SGD's ``foreach`` and ``fused`` paths: one array kernel, run on whole parameters or on
cache blocks (NOTE [ foreach and fused, on NumPy ] in fused.py), and the op
``optim::_fused_sgd_`` through which the fused path finds its kernel per device.

PyTorch counterpart: torch/optim/sgd.py ``_multi_tensor_sgd`` and ``_fused_sgd`` (v2.13).
"""

import ember
from ember.dispatcher import Op
from ember_optim.fused import add_scaled, bump_versions, check_fused_params, namespace, run_kernel, working_gradient

__all__ = ["foreach_sgd", "fused_sgd"]


def sgd_kernel(xp, p, g, buffer, s, t, *, lr, momentum, dampening, weight_decay, nesterov, maximize,
               first):
    """SGD's update of one parameter (or block) ``p``, line for line as ember_optim.sgd.sgd;
    ``s`` holds the working gradient, ``t`` each line's temporary."""
    d = working_gradient(xp, p, g, s, t, maximize=maximize, weight_decay=weight_decay) \
        if maximize or weight_decay != 0 else g
    if momentum != 0:
        if first:
            xp.copyto(buffer, d)  # buffer = grad.clone()
        else:
            xp.multiply(buffer, momentum, out=buffer)  # buffer.mul_(momentum).add_(grad, alpha=...)
            if dampening == 0:
                xp.add(buffer, d, out=buffer)  # add_scaled's alpha=1 case, without the call
            else:
                add_scaled(xp, buffer, d, 1 - dampening, out=buffer, scratch=t)
        if nesterov:
            add_scaled(xp, d, buffer, momentum, out=s, scratch=t)  # grad.add(buffer, alpha=momentum)
            d = s
        else:
            d = buffer
    add_scaled(xp, p, d, -lr, out=p, scratch=t)  # param.add_(grad, alpha=-lr)


# NOTE [ The fused update as an op ]
# torch's fused SGD is an ATen op, ``_fused_sgd_``, whose CPU kernel is registered like
# any op's (aten/src/ATen/native/FusedSGD.cpp calls the kernel of
# native/cpu/FusedSGDKernel.cpp through a dispatch stub). ember's fused path finds its
# array kernel the same way: ``fused_sgd_op`` holds a kernel per device type, the NumPy
# kernel above as the generic one, and a plugin may register a compiled one for the cpu
# (ember-numba does: ember_numba/fused_sgd.py). The update runs on raw arrays in place,
# so it is not called through ``dispatch`` (which makes tensors of returned arrays):
# each step looks its kernel up once with ``kernel_for``, a cached dict read, and
# ``run_kernel`` calls it per parameter or block. Every kernel must give the loop's
# results bit for bit (tests/plugins/optim/test_fused.py runs against each).
fused_sgd_op = Op("optim::_fused_sgd_", sgd_kernel, plugin="ember-optim")


def foreach_sgd(params, grads, momentum_buffers, *, lr, momentum, dampening, weight_decay, nesterov,
                maximize, fused=False):
    """SGD's update over the whole list, bit-identical to the loop's; ``momentum_buffers[i]``
    is None on the first step and replaced by the new buffer."""
    if not params:
        return
    options = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                   nesterov=nesterov, maximize=maximize)
    by_first = {False: dict(options, first=False), True: dict(options, first=True)}  # never written to
    arrays, per_param = [], []
    for i, param in enumerate(params):
        first = momentum != 0 and momentum_buffers[i] is None
        if first:
            momentum_buffers[i] = ember.empty(tuple(param.shape), dtype=param.dtype, device=param.device)
        buffer = momentum_buffers[i]._data if momentum != 0 else None
        arrays.append([param._data, grads[i]._data, buffer])
        per_param.append(by_first[first])
    kernel = fused_sgd_op.kernel_for(params[0]._device) if fused else sgd_kernel  # NOTE above
    run_kernel(namespace(params), kernel, arrays, per_param, 2, fused=fused)
    bump_versions(params)
    if momentum != 0:
        bump_versions(momentum_buffers)


def fused_sgd(params, grads, momentum_buffers, *, lr, momentum, dampening, weight_decay, nesterov, maximize):
    """SGD's update, one cache block at a time."""
    check_fused_params(params)
    foreach_sgd(params, grads, momentum_buffers, lr=lr, momentum=momentum, dampening=dampening,
                weight_decay=weight_decay, nesterov=nesterov, maximize=maximize, fused=True)
