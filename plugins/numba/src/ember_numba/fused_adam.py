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


from ember_numba.ahead_of_time import Loops
from ember_numba.arrays import compilable
from ember_numba.exact import flat

loops = Loops("ember_numba.fused_adam_loops")


def overrides():
    """``[(op name, cpu kernel)]``: ``optim::_fused_adam_`` on the cpu, the kernel taking the NumPy one
    (``adam_kernel``) first (NOTE [ The fused update as an op ] in
    ember_optim/fused_sgd.py)."""
    return [("optim::_fused_adam_", fused_adam)]


def fused_adam(fallback, xp, p, g, m, v, v_max, s, t, *, beta1, beta2, lr, weight_decay, eps, maximize,
               decoupled_weight_decay, step_size, bias_correction2_sqrt):
    """``optim::_fused_adam_`` on the cpu: ``adam_kernel``'s update in one compiled pass;
    the scratch ``s``, ``t`` is unused."""
    if not compilable(p, g, m, v, v_max, empty=True):
        return fallback(xp, p, g, m, v, v_max, s, t, beta1=beta1, beta2=beta2, lr=lr,
                        weight_decay=weight_decay, eps=eps, maximize=maximize,
                        decoupled_weight_decay=decoupled_weight_decay, step_size=step_size,
                        bias_correction2_sqrt=bias_correction2_sqrt)
    scalar = p.dtype.type  # the NumPy kernel's conversion of Python floats
    decay = weight_decay != 0 and decoupled_weight_decay
    l2 = 0 if decoupled_weight_decay else weight_decay
    weight = 1 - beta1
    near = abs(weight) < 0.5  # lerp_into's choice of form
    p = p.reshape(-1)
    loops.adam_loop(p, g.reshape(-1), m.reshape(-1), v.reshape(-1), flat(v_max, s.reshape(-1)), v_max is not None,
              maximize, scalar(1 - lr * weight_decay) if decay else scalar(1), scalar(l2),
              scalar(weight if near else 1 - weight), near, scalar(beta2), scalar(1 - beta2),
              scalar(bias_correction2_sqrt), scalar(eps), scalar(-step_size))


# one pass over each array: whole parameters, not cache blocks (ember_optim.fused.run_kernel);
# measured on bench/optim_step.py's MLP, in one process: Adam 0.70 ms in blocks, 0.68 whole
fused_adam.in_blocks = False
