"""ember-optim's fused SGD update (``optim::_fused_sgd_``) as one compiled loop over
each parameter or block: the cpu kernel ember-numba registers for it.

PyTorch counterpart: aten/src/ATen/native/cpu/FusedSGDKernel.cpp (v2.13).

# NOTE [ A compiled SGD step, bit for bit ]
# ember-optim's NumPy kernel (ember_optim/fused_sgd.py) makes one pass over memory per
# line of the update: with momentum, ``buffer * momentum``, ``+ grad``,
# ``buffer * -lr`` and ``param +``, four passes over arrays that do not stay in the
# level-2 cache. The loop below does the same arithmetic element by element, in one
# pass. Its results are the NumPy kernel's bit for bit, and so the single-tensor
# loop's, because
# - it is compiled with no fast-math flags (not ember_numba/jit.py's): in particular no
#   ``contract``, which would fuse ``b + d * alpha`` into one fused multiply-add with
#   one rounding where NumPy rounds twice (torch's kernel does fuse, so neither ember
#   kernel is bit-identical to torch's, NOTE [ ember's default is the fused path ]);
# - every scalar is converted to the parameter's dtype first, as NumPy converts a Python
#   float against a float32 array, so float32 arithmetic stays float32;
# - it computes each line's expression in the loop's order, multiplying by 1 where the
#   NumPy kernel skips a multiply by 1 (exact either way), and skipping the weight decay
#   where the NumPy kernel does (adding ``p * 0`` is not exact: -0 + 0 is +0).
# tests/plugins/optim/test_fused.py runs its bit-identity tests against this kernel and
# the NumPy one. Arrays it does not take (other dtypes, mixed dtypes, a parameter or
# gradient that is not C-contiguous, such as a transposed one) go to the NumPy kernel.
"""

from ember_numba.ahead_of_time import Loops
from ember_numba.arrays import compilable
from ember_numba.exact import flat

loops = Loops("ember_numba.fused_sgd_loops")


def overrides():
    """``[(op name, cpu kernel)]``: ``optim::_fused_sgd_`` on the cpu, the kernel taking the NumPy one
    (``sgd_kernel``) first (NOTE [ The fused update as an op ] in
    ember_optim/fused_sgd.py)."""
    return [("optim::_fused_sgd_", fused_sgd)]


def fused_sgd(fallback, xp, p, g, buffer, s, t, *, lr, momentum, dampening, weight_decay, nesterov, maximize, first):
    """``optim::_fused_sgd_`` on the cpu: ``sgd_kernel``'s update of ``p`` (and
    ``buffer``) in one compiled pass; the scratch ``s``, ``t`` is unused."""
    if not compilable(p, g, buffer, empty=True):
        return fallback(xp, p, g, buffer, s, t, lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize, first=first)
    scalar = p.dtype.type  # NOTE above: the NumPy kernel's conversion of Python floats
    p = p.reshape(-1)
    loops.sgd_loop(p, g.reshape(-1), flat(buffer, p), scalar(-lr), scalar(momentum), scalar(1 - dampening),
             scalar(weight_decay), buffer is not None, first, nesterov, maximize)


# one pass over each array: whole parameters, not cache blocks (ember_optim.fused.run_kernel);
# measured on bench/optim_step.py's MLP, in one process: SGD 0.38 ms in blocks, 0.35 whole
fused_sgd.in_blocks = False
