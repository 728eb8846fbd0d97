"""The pieces every scipy-backed elementwise op shares: its kernel, its promotion and
the backward of an op PyTorch gives no derivative.

PyTorch counterpart: aten/src/ATen/native/UnaryOps.cpp's ``special_*`` stubs and the
``not_implemented`` entries of tools/autograd/derivatives.yaml (v2.13).

PyTorch writes its special functions (gamma, Bessel, error functions) by hand in
aten/src/ATen/native/Math.h, mostly after Cephes; ember's reference kernels call
``scipy.special``, which wraps the same Cephes routines (``cupyx.scipy.special`` on the
GPU, see ``_special`` in unary.py). Float32 inputs are computed by SciPy's float32
loops, or in float64 and rounded once, as PyTorch's float kernels are.
"""

from ember.autograd.forward_grad import AUTO_ELEMENT_WISE
from ember.dispatcher import INT_TO_FLOAT, Op
from ember.native.pointwise.unary import _special, quiet


def special(xp):
    """``scipy.special`` for NumPy arrays, ``cupyx.scipy.special`` for CuPy ones."""
    return _special(xp)


def special_kernel(function):
    """The kernel ``scipy.special.<function>(*arrays)`` in the first array's dtype."""
    def kernel(xp, a, *rest):
        return getattr(special(xp), function)(a, *rest).astype(a.dtype, copy=False)
    kernel.__name__ = f"_{function}_kernel"
    return kernel


def not_differentiable(name):
    """A backward that raises PyTorch's error: the op records a node (its output
    requires grad, as PyTorch's does), and only differentiating through it fails.
    (PyTorch's Bessel functions and polynomials record nothing at all: their ops have
    no backward, ``None``.)"""
    def backward(ctx, *grads):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")
    return backward


def floating_op(name, kernel, backward, save="inputs"):
    """An elementwise op whose integer and bool inputs become the default float dtype,
    computed in float32 for float16 (opmath), NumPy's warnings silenced; elementwise, so
    its backward on the tangent is its forward derivative (autograd/forward_grad.py)."""
    return Op(f"aten::{name}", quiet(kernel), backward, promote=INT_TO_FLOAT, save=save, opmath=True,
              jvp=AUTO_ELEMENT_WISE)
