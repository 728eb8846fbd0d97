"""The three discrete Fourier transforms every ``ember.fft`` function is built from:
complex to complex, real to complex and complex to real.

PyTorch counterpart: aten/src/ATen/native/SpectralOps.cpp and
aten/src/ATen/native/mkl/SpectralOps.cpp (``_fft_c2c``, ``_fft_r2c``, ``_fft_c2r``) and
their entries in tools/autograd/derivatives.yaml (v2.13).

The kernels call NumPy's pocketfft (``numpy.fft``), which since NumPy 2.0 computes
complex64 in single precision as torch does. Each op takes the dims it transforms, a
direction, and a normalization that scales by the *signal* size whichever the
direction (NOTE [ FFT normalization ]), so that the backward of each transform is
another of the three.
"""

import math

from ember.autograd.graph import complex_formula
from ember.dispatcher import NONE, Op

# NOTE [ FFT normalization ]
# The unnormalized forward transform is X[k] = sum_j x[j] exp(-2 pi i jk / n), the
# inverse the same with exp(+2 pi i jk / n). ``norm`` of the public functions says which
# of the two carries the 1/n ("backward": the inverse, "forward": the forward one) or
# that both carry 1/sqrt(n) ("ortho"). The primitives instead take the scale itself
# (NONE, BY_ROOT_N, BY_N) and a direction, as ATen's fft_norm_mode does: the adjoint of
# a transform is then the transform the other way with the same scale, which is each
# backward formula below. NumPy applies no scale to a forward transform with
# norm="backward" nor to an inverse one with norm="forward"; the kernels ask for those
# and scale the result themselves.
NO_SCALE, BY_ROOT_N, BY_N = 0, 1, 2


def _scale(xp, out, sizes, normalization):
    if normalization == NO_SCALE:
        return out
    count = math.prod(sizes)
    factor = 1 / count if normalization == BY_N else 1 / math.sqrt(count)
    return out * out.real.dtype.type(factor) if count else out


def _c2c_kernel(xp, a, dim, normalization, forward):
    dim = list(dim)
    if forward:
        out = xp.fft.fftn(a, axes=dim, norm="backward")
    else:
        out = xp.fft.ifftn(a, axes=dim, norm="forward")
    return _scale(xp, out.astype(a.dtype, copy=False), [a.shape[d] for d in dim], normalization)


def _r2c_kernel(xp, a, dim, normalization, onesided):
    dim = list(dim)
    if onesided:
        out = xp.fft.rfftn(a, axes=dim, norm="backward")
    else:
        out = xp.fft.fftn(a, axes=dim, norm="backward")
    complex_type = (a.dtype.type(0) + 0j).dtype  # complex64 for float32
    return _scale(xp, out.astype(complex_type, copy=False), [a.shape[d] for d in dim], normalization)


def _c2r_kernel(xp, a, dim, normalization, last_dim_size):
    dim = list(dim)
    sizes = [a.shape[d] for d in dim[:-1]] + [last_dim_size]
    out = xp.fft.irfftn(a, s=sizes, axes=dim, norm="forward")
    return _scale(xp, out.astype(a.real.dtype, copy=False), sizes, normalization)


@complex_formula
def _c2c_backward(ctx, grad):
    attrs = ctx.attrs
    return (fft_c2c(grad, attrs["dim"], attrs["normalization"], not attrs["forward"]),)


@complex_formula
def _r2c_backward(ctx, grad):
    # The adjoint of "transform, keep the first n//2 + 1 outputs along the last dim":
    # zero the outputs it dropped, transform back, keep the real part (the input was real).
    attrs = ctx.attrs
    dim = attrs["dim"]
    if attrs["onesided"]:
        (meta,) = ctx.input_meta
        last = dim[-1]
        missing = meta[0][last] - grad.shape[last]
        if missing > 0:
            from ember.nn.functional import pad

            widths = [0, 0] * (grad.ndim - 1 - last) + [0, missing]
            grad = pad(grad, widths)
    return (fft_c2c(grad, dim, attrs["normalization"], False).real,)


@complex_formula
def _c2r_backward(ctx, grad):
    # The half spectrum stands for itself and (but for the first and, for an even
    # length, the last bin) its mirror image: those bins count twice.
    attrs = ctx.attrs
    dim = attrs["dim"]
    result = fft_r2c(grad, dim, attrs["normalization"], True)
    last = dim[-1]
    doubled = grad.shape[last] - result.shape[last]
    if doubled > 0:
        weights = [1.0] + [2.0] * doubled + [1.0] * (result.shape[last] - 1 - doubled)
        from ember.native.factory import tensor

        shape = [1] * result.ndim
        shape[last] = result.shape[last]
        result = result * tensor(weights, dtype=grad.dtype).reshape(shape)
    return (result,)


C2C = Op("aten::_fft_c2c", _c2c_kernel, _c2c_backward, promote=NONE)
R2C = Op("aten::_fft_r2c", _r2c_kernel, _r2c_backward, promote=NONE)
C2R = Op("aten::_fft_c2r", _c2r_kernel, _c2r_backward, promote=NONE)


def fft_c2c(input, dim, normalization, forward):
    """The complex transform of ``input`` (complex) over ``dim``, ``forward`` or inverse,
    scaled as ``normalization`` says (NOTE [ FFT normalization ])."""
    return C2C(input, dim=tuple(dim), normalization=normalization, forward=bool(forward))


def fft_r2c(input, dim, normalization, onesided):
    """The forward transform of a real ``input`` over ``dim``; ``onesided`` keeps the
    first ``n // 2 + 1`` outputs of the last dim (the rest mirror them)."""
    return R2C(input, dim=tuple(dim), normalization=normalization, onesided=bool(onesided))


def fft_c2r(input, dim, normalization, last_dim_size):
    """The inverse transform of a one-sided Hermitian ``input`` over ``dim``: a real
    result whose last dim has ``last_dim_size`` elements."""
    return C2R(input, dim=tuple(dim), normalization=normalization, last_dim_size=int(last_dim_size))
