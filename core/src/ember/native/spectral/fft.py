"""``ember.fft``'s transforms: ``fft ifft rfft irfft hfft ihfft`` in 1, 2 and n dims,
each a composition of the three primitives (primitives.py) with the signal resized
to ``n`` (or ``s``) first.

PyTorch counterpart: aten/src/ATen/native/SpectralOps.cpp (``fft_c2c``, ``fft_r2c``,
``fft_c2r``, ``fft_hfftn_impl``, ``fft_ihfftn_impl``, ``resize_fft_input``) and
torch/fft/__init__.py (the docstrings) (v2.13).

Integer and bool inputs become the default float dtype first; float32 gives
complex64, float64 complex128. torch's CPU FFTs refuse float16, and so does ember.
"""

from ember import dtypes
from ember.native.spectral.primitives import BY_N, BY_ROOT_N, NO_SCALE, fft_c2c, fft_c2r, fft_r2c

_NORMS = {None: (NO_SCALE, BY_N), "backward": (NO_SCALE, BY_N), "forward": (BY_N, NO_SCALE),
          "ortho": (BY_ROOT_N, BY_ROOT_N)}


def _normalization(norm, forward):
    """The scale of a transform in direction ``forward`` for ``norm`` (NOTE [ FFT
    normalization ] in primitives.py)."""
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return _NORMS[norm][0 if forward else 1]


def _floating(input, name, complex_ok=True):
    """``input`` as a float32/float64 (or complex) tensor, as the transforms take it."""
    d = input.dtype
    if d.is_complex:
        if not complex_ok:
            raise RuntimeError(f"{name} expects a real input tensor, but got {d.name.capitalize()}")
        return input
    if d.category < dtypes.FLOATING:
        return input.to(dtypes.get_default_dtype())
    if d not in (dtypes.float32, dtypes.float64):
        raise RuntimeError(f"Unsupported dtype {dtypes.SCALAR_TYPE_NAMES[d.name]}")
    return input


def _complex(input):
    return input if input.dtype.is_complex else input.to(input.dtype.to_complex())


def _resize(input, dims, sizes):
    """``input`` with each of ``dims`` cut or zero-padded (at the end) to ``sizes``."""
    for d, n in zip(dims, sizes):
        current = input.shape[d]
        if n < current:
            input = input.narrow(d, 0, n)
        elif n > current:
            from ember.nn.functional import pad

            widths = [0, 0] * (input.ndim - 1 - d) + [0, n - current]
            input = pad(input, widths)
    return input


def _wrap(dim, ndim):
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(ndim, 1)}, "
                         f"{max(ndim, 1) - 1}], but got {dim})")
    return dim % max(ndim, 1)


def _one_dim(input, n, dim, name):
    """(dims, sizes) for a 1-d transform."""
    if input.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    d = _wrap(dim, input.ndim)
    size = input.shape[d] if n is None else n
    if size < 1:
        raise RuntimeError(f"Invalid number of data points ({size}) specified")
    return [d], [size]


def _n_dims(input, s, dim, default_all=True):
    """(dims, sizes) for an n-d transform, by torch's rules for ``s`` and ``dim``."""
    if dim is not None and isinstance(dim, int):
        dim = [dim]
    if s is not None and isinstance(s, int):
        s = [s]
    if dim is None:
        dims = list(range(input.ndim - len(s), input.ndim)) if s is not None else list(range(input.ndim))
    else:
        dims = [_wrap(d, input.ndim) for d in dim]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is None:
        sizes = [input.shape[d] for d in dims]
    else:
        if len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        sizes = [input.shape[d] if n == -1 else n for d, n in zip(dims, s)]
    for n in sizes:
        if n < 1:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return dims, sizes


# --- complex to complex -----------------------------------------------------------------


def _c2c(input, dims, sizes, norm, forward, name):
    input = _resize(_floating(input, name), dims, sizes)
    normalization = _normalization(norm, forward)
    if not input.dtype.is_complex:
        return fft_r2c(input, dims, normalization, onesided=False) if forward else \
            fft_r2c(input, dims, normalization, onesided=False).conj()
    return fft_c2c(input, dims, normalization, forward)


def fft(input, n=None, dim=-1, norm=None):
    """The one-dimensional discrete Fourier transform of ``input`` along ``dim``,
    ``X[k] = sum_j x[j] exp(-2 pi i j k / n)``, the signal cut or zero-padded to ``n``.

    >>> import ember
    >>> ember.fft.fft(ember.tensor([1., 2., 3., 4.]))
    tensor([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j])
    """
    dims, sizes = _one_dim(input, n, dim, "fft")
    return _c2c(input, dims, sizes, norm, True, "fft")


def ifft(input, n=None, dim=-1, norm=None):
    """The inverse of ``fft``: ``x[j] = 1/n sum_k X[k] exp(2 pi i j k / n)``."""
    dims, sizes = _one_dim(input, n, dim, "ifft")
    return _c2c(input, dims, sizes, norm, False, "ifft")


def fftn(input, s=None, dim=None, norm=None):
    """``fft`` over each of ``dim`` (every dim by default, or the last ``len(s)``)."""
    dims, sizes = _n_dims(input, s, dim)
    return _c2c(input, dims, sizes, norm, True, "fftn")


def ifftn(input, s=None, dim=None, norm=None):
    """``ifft`` over each of ``dim``."""
    dims, sizes = _n_dims(input, s, dim)
    return _c2c(input, dims, sizes, norm, False, "ifftn")


def fft2(input, s=None, dim=(-2, -1), norm=None):
    """``fftn`` over two dims (the last two by default)."""
    return fftn(input, s, dim, norm)


def ifft2(input, s=None, dim=(-2, -1), norm=None):
    """``ifftn`` over two dims (the last two by default)."""
    return ifftn(input, s, dim, norm)


# --- real to complex and back -------------------------------------------------------------


def _r2c(input, dims, sizes, norm, forward, name):
    input = _resize(_floating(input, name, complex_ok=False), dims, sizes)
    out = fft_r2c(input, dims, _normalization(norm, forward), onesided=True)
    return out if forward else out.conj()


def _c2r(input, dims, sizes, norm, forward, name):
    # ``sizes`` are the output's; the last dim of the input holds sizes[-1] // 2 + 1 bins.
    input = _complex(_floating(input, name))
    input = _resize(input, dims, sizes[:-1] + [sizes[-1] // 2 + 1])
    if forward:  # hfft: the transform of a Hermitian signal is the inverse of its conjugate
        input = input.conj()
    return fft_c2r(input, dims, _normalization(norm, forward), sizes[-1])


def _last_size(input, dims, n):
    if n is not None:
        return n
    size = 2 * (input.shape[dims[-1]] - 1)
    if size < 1:
        raise RuntimeError(f"Invalid number of data points ({size}) specified")
    return size


def rfft(input, n=None, dim=-1, norm=None):
    """``fft`` of a real signal, keeping the ``n // 2 + 1`` non-redundant outputs.

    >>> import ember
    >>> ember.fft.rfft(ember.tensor([1., 2., 3., 4.]))
    tensor([10.+0.j, -2.+2.j, -2.+0.j])
    """
    dims, sizes = _one_dim(input, n, dim, "rfft")
    return _r2c(input, dims, sizes, norm, True, "rfft")


def ihfft(input, n=None, dim=-1, norm=None):
    """``ifft`` of a real signal (a Hermitian result), its ``n // 2 + 1`` first outputs."""
    dims, sizes = _one_dim(input, n, dim, "ihfft")
    return _r2c(input, dims, sizes, norm, False, "ihfft")


def irfft(input, n=None, dim=-1, norm=None):
    """The inverse of ``rfft``: a real signal of length ``n`` (by default
    ``2 * (input.size(dim) - 1)``) from its one-sided spectrum."""
    dims, _ = _one_dim(input, None, dim, "irfft")
    if n is not None and n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return _c2r(input, dims, [_last_size(input, dims, n)], norm, False, "irfft")


def hfft(input, n=None, dim=-1, norm=None):
    """``fft`` of a Hermitian signal given by its first half: a real result of length
    ``n`` (by default ``2 * (input.size(dim) - 1)``)."""
    dims, _ = _one_dim(input, None, dim, "hfft")
    if n is not None and n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return _c2r(input, dims, [_last_size(input, dims, n)], norm, True, "hfft")


def _nd_output_sizes(input, s, dim):
    dims, sizes = _n_dims(input, s, dim)
    if not dims:
        raise RuntimeError("Must transform at least one axis")
    if s is None or (not isinstance(s, int) and list(s)[-1] == -1):
        sizes[-1] = _last_size(input, dims, None)
    return dims, sizes


def rfftn(input, s=None, dim=None, norm=None):
    """``rfft`` over the last of ``dim``, ``fft`` over the others."""
    dims, sizes = _n_dims(input, s, dim)
    if not dims:
        raise RuntimeError("rfftn must transform at least one axis")
    return _r2c(input, dims, sizes, norm, True, "rfftn")


def ihfftn(input, s=None, dim=None, norm=None):
    """``ihfft`` over the last of ``dim``, ``ifft`` over the others."""
    dims, sizes = _n_dims(input, s, dim)
    if not dims:
        raise RuntimeError("ihfftn must transform at least one axis")
    return _r2c(input, dims, sizes, norm, False, "ihfftn")


def irfftn(input, s=None, dim=None, norm=None):
    """The inverse of ``rfftn``; the last dim's output size is ``s[-1]``, by default
    ``2 * (input.size(dim[-1]) - 1)``."""
    dims, sizes = _nd_output_sizes(input, s, dim)
    return _c2r(input, dims, sizes, norm, False, "irfftn")


def hfftn(input, s=None, dim=None, norm=None):
    """``fftn`` of a Hermitian signal given by its half along the last of ``dim``."""
    dims, sizes = _nd_output_sizes(input, s, dim)
    return _c2r(input, dims, sizes, norm, True, "hfftn")


def rfft2(input, s=None, dim=(-2, -1), norm=None):
    """``rfftn`` over two dims (the last two by default)."""
    return rfftn(input, s, dim, norm)


def irfft2(input, s=None, dim=(-2, -1), norm=None):
    """``irfftn`` over two dims (the last two by default)."""
    return irfftn(input, s, dim, norm)


def hfft2(input, s=None, dim=(-2, -1), norm=None):
    """``hfftn`` over two dims (the last two by default)."""
    return hfftn(input, s, dim, norm)


def ihfft2(input, s=None, dim=(-2, -1), norm=None):
    """``ihfftn`` over two dims (the last two by default)."""
    return ihfftn(input, s, dim, norm)
