"""Fused elementwise CUDA kernels (``cupy.ElementwiseKernel``) for hot paths.

PyTorch counterpart: aten/src/ATen/native/cuda/Activation*.cu (``threshold_backward``)
and aten/src/ATen/native/cuda/FusedSgdKernel.cu / torch/optim/sgd.py ``_multi_tensor_sgd``
(v2.13).

Composed from generic kernels, each of these is several CuPy calls, each a kernel
launch and a temporary array; here each is one launch. CuPy compiles a kernel (NVRTC)
the first time it runs for a dtype, so the kernels are built on first use, never at
import. They cannot run without a GPU: tests/plugins/cupy/test_cuda_parity.py checks
them against the generic kernels on a CUDA machine.
"""

import functools

from ember.dtypes import is_floating_array
from ember.native.pointwise import unary


@functools.cache
def _threshold_backward_kernel():
    import cupy

    # A select, so a masked inf or NaN gradient becomes 0, never NaN as `grad * keep`
    # would; and written as `output <= threshold ? 0 : grad` like PyTorch's, so a NaN
    # output passes its gradient through (NaN <= t is false).
    return cupy.ElementwiseKernel("T grad, T output, T threshold", "T out",
                                  "out = output <= threshold ? (T)0 : grad", "ember_threshold_backward")


def threshold_backward(xp, grad, output, threshold=0):
    """Override of ``aten::threshold_backward`` (relu's backward): ``grad`` where
    ``output > threshold``, else 0, in one launch. Floating inputs of one dtype and
    shape only; anything else runs the core's generic kernel."""
    if not is_floating_array(grad.dtype) or grad.dtype != output.dtype or grad.shape != output.shape:
        return unary._threshold_backward_kernel(xp, grad, output, threshold)
    return _threshold_backward_kernel()(grad, output, output.dtype.type(threshold))


@functools.cache
def _sgd_momentum_kernel():
    import cupy

    return cupy.ElementwiseKernel(
        "T grad, T lr, T momentum, T dampening, T weight_decay, bool nesterov, bool first",
        "T param, T buf",
        """
        T d = grad + weight_decay * param;           // L2 penalty folded into the gradient
        buf = first ? d : momentum * buf + (1 - dampening) * d;
        param -= lr * (nesterov ? d + momentum * buf : buf);
        """,
        "ember_sgd_momentum")


def sgd_momentum_(param, grad, buf, *, lr, momentum, dampening=0.0, weight_decay=0.0,
                  nesterov=False, first=False):
    """One SGD-with-momentum step on CuPy arrays, in place and in one launch, with
    ``torch.optim.SGD``'s update (``first``: the step that creates the buffer, which
    is then ``d`` itself).

    For ember-optim's SGD on ``cuda``; the formula is ``sgd_momentum_reference``'s.
    """
    t = param.dtype.type
    _sgd_momentum_kernel()(grad, t(lr), t(momentum), t(dampening), t(weight_decay), bool(nesterov),
                           bool(first), param, buf)


def sgd_momentum_reference(xp, param, grad, buf, *, lr, momentum, dampening=0.0, weight_decay=0.0,
                           nesterov=False, first=False):
    """The same step with array functions (NumPy or CuPy): the definition the fused
    kernel is tested against, and what runs where the kernel cannot."""
    d = grad + weight_decay * param
    buf[...] = d if first else momentum * buf + (1 - dampening) * d
    param -= lr * (d + momentum * buf if nesterov else buf)
