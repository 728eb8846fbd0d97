"""Complex numbers: ``complex polar real imag view_as_real view_as_complex angle conj
conj_physical resolve_conj isreal``.

PyTorch counterpart: aten/src/ATen/native/Complex.cpp (``complex``, ``polar``),
aten/src/ATen/native/ComplexHelper.h (``view_as_real``, ``view_as_complex``),
aten/src/ATen/native/UnaryOps.cpp (``real``, ``imag``, ``angle``, ``conj``,
``conj_physical``, ``resolve_conj``) and their entries in
tools/autograd/derivatives.yaml (v2.13).

A complex tensor is a NumPy complex array (NOTE [ Complex dtypes ] in dtypes.py), so
``real``, ``imag`` and ``view_as_real`` are NumPy views of its parts and writes through
them reach it. The backward formulas here are written for complex gradients
themselves (NOTE [ Complex gradients ] in autograd/graph.py).

Where ember differs: ``conj`` of a complex tensor copies (NOTE [ The conjugate bit ]).
"""

import math

from ember import dtypes
from ember.autograd.graph import complex_formula
from ember.dispatcher import INT_TO_FLOAT, NONE, Op
from ember.native.pointwise.unary import quiet

# NOTE [ The conjugate bit ]
# torch.conj does not touch memory: it returns a view with a "conjugate" bit set
# (``is_conj()``), and kernels conjugate as they read; ``resolve_conj`` or
# ``conj_physical`` materialise it. The bit lets ``a @ b.conj().T`` call a BLAS kernel
# that conjugates on the fly, and it is why writing into ``x.conj()`` changes ``x``.
# ember's kernels read plain NumPy arrays, which have no such bit, so ``conj`` of a
# complex tensor is ``conj_physical``: a new tensor, ``is_conj()`` is always False and
# ``resolve_conj`` returns its input. Values and gradients are torch's; what differs is
# aliasing (a write into ``x.conj()`` does not reach ``x``) and the copy's cost. Of a
# real tensor both libraries return the input itself.


def _check_complex(input, what):
    if not input.dtype.is_complex:
        raise RuntimeError(f"{what} is not implemented for tensors with non-complex dtypes.")


def _as_complex(grad):
    """A real gradient as the complex gradient of a complex input (imaginary part 0)."""
    return grad.to(grad.dtype.to_complex())


# --- the parts of a complex tensor ----------------------------------------------------


@complex_formula
def _real_backward(ctx, grad):
    return (_as_complex(grad),)


@complex_formula
def _imag_backward(ctx, grad):
    return (grad * 1j,)


REAL = Op("aten::real", lambda xp, a: a.real, _real_backward, view=True)
IMAG = Op("aten::imag", lambda xp, a: a.imag, _imag_backward, view=True)


def real(input):
    """The real parts of a complex tensor, as a view (writes reach ``input``); a real
    tensor itself.

    >>> import ember
    >>> ember.real(ember.tensor([1 + 2j, 3 - 1j]))
    tensor([1., 3.])
    """
    return REAL(input) if input.dtype.is_complex else input


def imag(input):
    """The imaginary parts of a complex tensor, as a view; an error for a real tensor.

    >>> import ember
    >>> ember.imag(ember.tensor([1 + 2j, 3 - 1j]))
    tensor([ 2., -1.])
    """
    _check_complex(input, "imag")
    return IMAG(input)


def _view_as_real_kernel(xp, a):
    # The real part's memory, with a trailing dim of 2 that steps to the imaginary part.
    parts = a.real
    step = parts.itemsize
    return xp.lib.stride_tricks.as_strided(parts, a.shape + (2,), a.strides + (step,))


@complex_formula
def _view_as_real_backward(ctx, grad):
    return (view_as_complex(grad.contiguous()),)


@complex_formula
def _view_as_complex_backward(ctx, grad):
    return (view_as_real(grad),)


def _view_as_complex_kernel(xp, a):
    return a.view(dtypes.from_numpy_dtype(a.dtype).to_complex().np)[..., 0]


VIEW_AS_REAL = Op("aten::view_as_real", _view_as_real_kernel, _view_as_real_backward, view=True)
VIEW_AS_COMPLEX = Op("aten::view_as_complex", _view_as_complex_kernel, _view_as_complex_backward, view=True)


def view_as_real(input):
    """A complex tensor's memory seen as real pairs: shape ``(*input.shape, 2)``, the
    last dim holding the real and imaginary parts; shares memory with ``input``.

    >>> import ember
    >>> ember.view_as_real(ember.tensor([1 + 2j, 3 - 1j]))
    tensor([[ 1.,  2.],
            [ 3., -1.]])
    """
    if not input.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return VIEW_AS_REAL(input)


def view_as_complex(input):
    """The inverse of ``view_as_real``: a float tensor whose last dim is 2 (contiguous),
    seen as complex numbers; shares memory with ``input``.

    >>> import ember
    >>> ember.view_as_complex(ember.tensor([[1., 2.], [3., -1.]]))
    tensor([1.+2.j, 3.-1.j])
    """
    if input.dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError("view_as_complex is only supported for half, float and double tensors, but got a tensor "
                           f"of scalar type: {dtypes.SCALAR_TYPE_NAMES[input.dtype.name]}")
    if input.ndim == 0 or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if input.stride(-1) != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in input.stride()[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return VIEW_AS_COMPLEX(input)


# --- building complex tensors ---------------------------------------------------------


def _check_parts(first, second):
    if first.dtype not in (dtypes.float16, dtypes.float32, dtypes.float64):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{dtypes.SCALAR_TYPE_NAMES[first.dtype.name]} and "
                           f"{dtypes.SCALAR_TYPE_NAMES[second.dtype.name]}")
    if first.dtype is not second.dtype:
        raise RuntimeError(f"Expected object of scalar type {dtypes.SCALAR_TYPE_NAMES[first.dtype.name]} but got "
                           f"scalar type {dtypes.SCALAR_TYPE_NAMES[second.dtype.name]} for second argument")


def _complex_kernel(xp, re, im):
    out = xp.empty(xp.broadcast_shapes(re.shape, im.shape), dtype=dtypes.from_numpy_dtype(re.dtype).to_complex().np)
    out.real = re
    out.imag = im
    return out


@complex_formula
def _complex_backward(ctx, grad):
    return (real(grad), imag(grad))


def _polar_kernel(xp, magnitude, phase):
    return _complex_kernel(xp, magnitude * xp.cos(phase), magnitude * xp.sin(phase))


@complex_formula
def _polar_backward(ctx, grad):
    # d(r e^{i t})/dr = e^{i t}, d/dt = i r e^{i t}; a real input's gradient is
    # real(grad * conj(derivative)) (NOTE [ Complex gradients ]). As torch, e^{i t} is
    # read as sgn(result), which flips its sign where r < 0.
    (out,) = ctx.saved_outputs
    return (real(grad * out.sgn().conj()), real(grad * (out * 1j).conj()))


COMPLEX = Op("aten::complex", _complex_kernel, _complex_backward)
POLAR = Op("aten::polar", _polar_kernel, _polar_backward, save="outputs")


def complex(real, imag):
    """``real + 1j * imag`` from two float tensors of one dtype (broadcast).

    >>> import ember
    >>> ember.complex(ember.tensor([1., 3.]), ember.tensor([2., -1.]))
    tensor([1.+2.j, 3.-1.j])
    """
    _check_parts(real, imag)
    return COMPLEX(real, imag)


def polar(abs, angle):
    """``abs * (cos(angle) + 1j * sin(angle))``: complex numbers from polar coordinates.

    >>> import ember, math
    >>> ember.polar(ember.tensor([2.]), ember.tensor([math.pi / 2])).imag
    tensor([2.])
    """
    _check_parts(abs, angle)
    return POLAR(abs, angle)


# --- angle, conj, isreal --------------------------------------------------------------


def _angle_kernel(xp, a):
    if a.dtype.kind == "c":
        return xp.angle(a)
    # A real number's angle is pi below zero and 0 elsewhere (NaN stays NaN).
    return xp.where(a < 0, a.dtype.type(math.pi), xp.where(xp.isnan(a), a, a.dtype.type(0)))


@complex_formula
def _angle_backward(ctx, grad):
    (z,) = ctx.saved_inputs
    if not z.dtype.is_complex:
        return (grad * 0,)
    # angle = atan2(y, x): d/dx = -y / |z|^2, d/dy = x / |z|^2, so the gradient
    # dL/dx + i dL/dy is grad * i z / |z|^2 (0 at z = 0, as torch's).
    squared = z.real * z.real + z.imag * z.imag
    safe = squared + (squared == 0)
    return (grad * z * 1j / safe * (squared != 0),)


ANGLE = Op("aten::angle", quiet(_angle_kernel), _angle_backward, promote=INT_TO_FLOAT, save="inputs")


def angle(input):
    """The argument of each complex number, in (-pi, pi]; of a real number pi where it
    is negative and 0 elsewhere. Integers give the default float dtype.

    >>> import ember
    >>> ember.angle(ember.tensor([1j, -1.]))
    tensor([1.5708, 3.1416])
    """
    return ANGLE(input)


@complex_formula
def _conj_backward(ctx, grad):
    return (grad.conj(),)


CONJ_PHYSICAL = Op("aten::conj_physical", lambda xp, a: xp.conj(a), _conj_backward, promote=NONE)


def conj_physical(input):
    """The complex conjugate, computed into new memory (a real tensor's copy... of
    itself: torch returns the input unchanged for non-complex dtypes).

    >>> import ember
    >>> ember.conj_physical(ember.tensor([1 + 2j]))
    tensor([1.-2.j])
    """
    return CONJ_PHYSICAL(input) if input.dtype.is_complex else input


def conj(input):
    """The complex conjugate; a real tensor itself. ember computes it at once, where
    torch sets a lazy bit (NOTE [ The conjugate bit ]).

    >>> import ember
    >>> ember.conj(ember.tensor([1 + 2j, 3 - 1j]))
    tensor([1.-2.j, 3.+1.j])
    """
    return conj_physical(input)


def resolve_conj(input):
    """``input`` with its conjugate bit materialised: ember never sets the bit
    (NOTE [ The conjugate bit ]), so ``input`` itself."""
    return input


def resolve_neg(input):
    """``input`` with its negative bit materialised: ember never sets it, so ``input``."""
    return input


def is_conj(input):
    """Whether ``input`` has torch's lazy conjugate bit: never in ember (NOTE [ The
    conjugate bit ])."""
    return False


def is_neg(input):
    """Whether ``input`` has torch's lazy negative bit: never in ember."""
    return False


def is_complex(input):
    """Whether ``input``'s dtype is complex64 or complex128."""
    return input.dtype.is_complex


def isreal(input):
    """True where an element is real: a complex number with imaginary part 0, and every
    element of a real tensor.

    >>> import ember
    >>> ember.isreal(ember.tensor([1 + 0j, 1j]))
    tensor([ True, False])
    """
    if input.dtype.is_complex:
        return imag(input.detach()) == 0
    from ember.native.factory import ones_like

    return ones_like(input, dtype=dtypes.bool_)
