"""Reductions: ``sum mean prod var std all any logsumexp norm count_nonzero`` and
``sum_to_size`` (the extremes ``amax amin max min argmax argmin`` are in extremes.py).

PyTorch counterpart: aten/src/ATen/native/ReduceOps.cpp, LinearAlgebra.cpp (norm) and
their derivatives.yaml entries (v2.13).

``dim`` may be None (every dimension), an int or a sequence of ints; negative dims
count from the end. Integer and bool sums accumulate in int64, as in PyTorch.
"""

import builtins
import functools
import warnings

import numpy as np

from ember import dtypes
from ember.autograd.forward_grad import AUTO_LINEAR, REDUCTION
from ember.dispatcher import DEFAULT, NONE, Op
from ember.memory_format import contiguous_array
from ember.tensor import _wrap_dim


def contiguous_result(kernel):
    """The kernel, its result laid out row-major as PyTorch allocates a reduction's
    output (ember/memory_format.py ``contiguous_array``)."""
    @functools.wraps(kernel)
    def run(xp, *arrays, **attrs):
        return contiguous_array(xp, kernel(xp, *arrays, **attrs))
    return run


def reduction_dims(dim, ndim):
    """Normalise ``dim`` to a sorted tuple of non-negative dims; None and ``()`` mean
    every dim. A 0-d tensor accepts dims 0 and -1 and reduces over nothing."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (int, np.integer)):  # np.int64(0) is a dim too, as in PyTorch
        wrapped = _wrap_dim(int(dim), ndim)  # raises IndexError when out of range
        return (wrapped,) if ndim else ()
    dims = tuple(_wrap_dim(d, ndim) for d in dim)
    if not dims:
        return tuple(range(ndim))
    seen = set()
    for d in dims:
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)
    return tuple(sorted(dims)) if ndim else ()


def _axis(dims, ndim):
    return None if ndim == 0 else dims


def expand_reduced(grad, input_shape, dims, keepdim):
    """Broadcast a reduced gradient back to ``input_shape``. Reduced leading dims (all
    of them, for a full reduction) need no unsqueeze: expand adds them in front, with
    the same zero strides, one op instead of one per dim."""
    if not keepdim and tuple(dims) != tuple(range(len(dims))):
        for d in dims:
            grad = grad.unsqueeze(d)
    return grad.expand(input_shape)


def _reduced_count(shape, dims):
    count = 1
    for d in dims:
        count *= shape[d]
    return count


def _accumulate_dtype(input, dtype):
    """The NumPy dtype a sum or product runs in: ``dtype=`` if given, int64 for integer
    and bool inputs (PyTorch never sums in a narrow integer type), else the input's."""
    if dtype is not None:
        dtype = dtypes.to_dtype(dtype)
        check_differentiable_dtype(input, dtype)
        return dtype.np
    if input.dtype.category < dtypes.FLOATING:
        return dtypes.int64.np
    return None


def _cast_to_reduced(input, dtype):
    """``input`` cast to ``dtype`` (a NumPy dtype, or None) when that is float16 or
    bfloat16: ``mean(x, dtype=float16)`` of a float32 ``x`` rounds x, then accumulates
    in float32 (NOTE [ opmath ] in ember/opmath.py), as torch; NumPy would accumulate
    in float16."""
    if dtype in dtypes.REDUCED_FLOATS and input._data.dtype != dtype:
        return input.to(dtypes.from_numpy_dtype(dtype))
    return input


def check_differentiable_dtype(input, dtype):
    """PyTorch's error for ``sum(x, dtype=int64)`` on an ``x`` that requires grad: the
    result could not carry a gradient (with grad mode off, or no grad, it is allowed)."""
    from ember.autograd.grad_mode import grad_state

    if dtype.category < dtypes.FLOATING and input.requires_grad and grad_state.enabled:
        from ember.native.support._inplace import _type_name

        raise RuntimeError(f"Autograd not support dtype: {_type_name(dtype)}")


# --- sum, mean ------------------------------------------------------------------


def _sum_kernel(xp, a, dims, keepdim, dtype=None):
    # One NumPy call: the accumulation dtype goes to xp.sum itself, no extra copy.
    return xp.sum(a, axis=_axis(dims, a.ndim), dtype=dtype, keepdims=keepdim)


def _sum_backward(ctx, grad):
    (meta,) = ctx.input_meta
    return (expand_reduced(grad, meta[0], ctx.attrs["dims"], ctx.attrs["keepdim"]),)


SUM = Op("aten::sum", contiguous_result(_sum_kernel), _sum_backward, promote=DEFAULT, opmath=True, jvp=AUTO_LINEAR)
# sum(input, dim) is PyTorch's overload aten::sum.dim_IntList, whose node is SumBackward1.
SUM_DIM = Op("aten::sum.dim_IntList", contiguous_result(_sum_kernel), _sum_backward, promote=DEFAULT,
             backward_name="SumBackward1", opmath=True, jvp=AUTO_LINEAR)


def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum over ``dim`` (every element by default); integers and bool sum in int64.

    Args:
        dim: None, an int or a tuple of ints (negative ones count from the end).
        keepdim: keep the reduced dims with size 1.
        dtype: cast the input to this dtype before summing.

    >>> import ember
    >>> ember.tensor([[1, 2], [3, 4]]).sum(dim=0)
    tensor([4, 6])
    """
    dims = reduction_dims(dim, input.ndim)
    accumulate = _accumulate_dtype(input, dtype)
    input = _cast_to_reduced(input, accumulate)
    op = SUM if dim is None else SUM_DIM
    if accumulate is None:
        return op(input, dims=dims, keepdim=keepdim)
    return op(input, dims=dims, keepdim=keepdim, dtype=accumulate)


def _mean_kernel(xp, a, dims, keepdim, dtype=None):
    axis = _axis(dims, a.ndim)
    if a.size == 0:
        # The mean of no elements is NaN; xp.mean would also warn.
        return xp.sum(a, axis=axis, dtype=dtype, keepdims=keepdim) * float("nan")
    return xp.mean(a, axis=axis, dtype=dtype or a.dtype, keepdims=keepdim)


def _mean_backward(ctx, grad):
    (meta,) = ctx.input_meta
    shape, dims = meta[0], ctx.attrs["dims"]
    count = builtins.max(_reduced_count(shape, dims), 1)
    return (expand_reduced(grad, shape, dims, ctx.attrs["keepdim"]) / count,)


MEAN = Op("aten::mean", contiguous_result(_mean_kernel), _mean_backward, promote=DEFAULT, opmath=True, jvp=AUTO_LINEAR)
MEAN_DIM = Op("aten::mean.dim", contiguous_result(_mean_kernel), _mean_backward, promote=DEFAULT,
              backward_name="MeanBackward1", opmath=True, jvp=AUTO_LINEAR)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Arithmetic mean over ``dim``; floating dtypes only, as in PyTorch (pass
    ``dtype=`` to average integers). The mean of no elements is NaN.

    >>> import ember
    >>> ember.tensor([[1., 2.], [3., 4.]]).mean(1)
    tensor([1.5000, 3.5000])
    """
    result_dtype = input.dtype if dtype is None else dtypes.to_dtype(dtype)
    if result_dtype.category < dtypes.FLOATING:
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point "
                           f"or complex dtype. Got: {_legacy(result_dtype)}")
    dims = reduction_dims(dim, input.ndim)
    op = MEAN if dim is None else MEAN_DIM
    if dtype is None:
        return op(input, dims=dims, keepdim=keepdim)
    input = _cast_to_reduced(input, result_dtype.np)
    return op(input, dims=dims, keepdim=keepdim, dtype=result_dtype.np)


def _legacy(d):
    from ember.native.support._inplace import _type_name

    return _type_name(d)


def sum_to_size(input, *size):
    """Sum ``input`` down to ``size``, the inverse of broadcasting ``size`` to
    ``input.shape``; raises when ``size`` does not broadcast to it."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    size = tuple(size)
    shape = tuple(input.shape)
    if not size:  # PyTorch sums to a 0-d size even from a 0-d input (a bool becomes int64)
        return sum(input)
    if shape == size:
        return input
    lead = len(shape) - len(size)
    if lead < 0 or builtins.any(s != 1 and s != shape[lead + i] for i, s in enumerate(size)):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    # Sum broadcast size-1 dims keeping them, then the leading dims away: the result
    # is a fresh array of exactly `size`, never a reshaped view of a temporary.
    kept = tuple(lead + i for i, s in enumerate(size) if s == 1 and shape[lead + i] != 1)
    out = sum(input, kept, keepdim=True) if kept else input
    return sum(out, tuple(range(lead))) if lead else out


# --- prod -----------------------------------------------------------------------


def _prod_kernel(xp, a, dims, keepdim, dtype=None):
    return xp.prod(a, axis=_axis(dims, a.ndim), dtype=dtype, keepdims=keepdim)


def _prod_backward(ctx, grad):
    # NOTE [ prod backward with zeros ]
    # d prod / d x_i is the product of every *other* element. Without zeros that is
    # prod / x_i, PyTorch's formula (so an inf or NaN element spreads as in PyTorch:
    # inf / inf is NaN). Dividing is wrong where x_i == 0; then multiply the exclusive
    # running products from the left and from the right, exact for any number of zeros.
    from ember.native.softmax import exclusive_cumprod

    (x,) = ctx.saved_inputs
    (result,) = ctx.saved_outputs
    dims, keepdim = ctx.attrs["dims"], ctx.attrs["keepdim"]
    if x.ndim == 0:
        return (grad,)
    if not bool((x == 0).any()):
        return (expand_reduced(grad, x.shape, dims, keepdim) * (expand_reduced(result, x.shape, dims, keepdim) / x),)
    line = x.movedim(dims[0], -1) if len(dims) == 1 else x.reshape(-1)
    others = exclusive_cumprod(line, -1) * exclusive_cumprod(line.flip(-1), -1).flip(-1)
    others = others.movedim(-1, dims[0]) if len(dims) == 1 else others.reshape(x.shape)
    return (expand_reduced(grad, x.shape, dims, keepdim) * _laid_out_like(others, x),)


def _laid_out_like(t, x):
    """``t`` (shaped like ``x``) in ``x``'s dim order: PyTorch's prod backward multiplies
    the gradient by a tensor made elementwise from the input, so its result's layout
    follows the gradient's, then the input's, never the order the exclusive products
    were computed in (a moved dim, a flattened channels_last input)."""
    from ember.memory_format import preserved_strides
    from ember.native.copy import CLONE

    strides = preserved_strides(tuple(x.shape), tuple(x.stride()))
    for size, have, want in zip(x.shape, t.stride(), strides):
        if size != 1 and have != want:  # (this module's `all` is the tensor op)
            return CLONE(t, strides=strides)
    return t


PROD = Op("aten::prod", contiguous_result(_prod_kernel), _prod_backward, promote=DEFAULT, save="both", opmath=True,
          jvp=REDUCTION)


def prod(input, dim=None, keepdim=False, *, dtype=None):
    """Product over one dim (``dim=int``) or over every element (``dim=None``);
    integers and bool multiply in int64. The gradient is exact with zeros.

    >>> import ember
    >>> ember.tensor([[1., 2.], [3., 4.]]).prod(1)
    tensor([ 2., 12.])
    """
    if dim is not None and not isinstance(dim, (int, np.integer)):
        raise TypeError(f"prod(): argument 'dim' must be int, not {type(dim).__name__}")
    dims = reduction_dims(dim, input.ndim)
    accumulate = _accumulate_dtype(input, dtype)
    input = _cast_to_reduced(input, accumulate)
    if accumulate is None:
        return PROD(input, dims=dims, keepdim=keepdim)
    return PROD(input, dims=dims, keepdim=keepdim, dtype=accumulate)


# --- var, std -------------------------------------------------------------------


def _var_kernel(xp, a, dims, keepdim, correction):
    # No NumPy warnings: too few degrees of freedom is PyTorch's UserWarning (_var_or_std),
    # and NaN/inf inputs give NaN quietly, as in PyTorch.
    with xp.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return _variance(xp, a, dims, keepdim, correction)


def _variance(xp, a, dims, keepdim, correction):
    return xp.var(a, axis=_axis(dims, a.ndim), ddof=correction, keepdims=keepdim)


def _var_input_grad(x, grad_var, dims, keepdim, correction):
    """d var / d x = 2 (x - mean) / (N - correction), times the upstream gradient."""
    degrees = builtins.max(_reduced_count(x.shape, dims) - correction, 0)
    # No degrees of freedom left: the variance is inf/nan and so is its slope.
    scale = 2.0 / degrees if degrees else float("inf")
    centered = x - x.mean(dims, keepdim=True)
    return expand_reduced(grad_var, x.shape, dims, keepdim) * centered * scale


def _var_backward(ctx, grad):
    (x,) = ctx.saved_inputs
    return (_var_input_grad(x, grad, ctx.attrs["dims"], ctx.attrs["keepdim"], ctx.attrs["correction"]),)


def _std_kernel(xp, a, dims, keepdim, correction):
    with xp.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return xp.std(a, axis=_axis(dims, a.ndim), ddof=correction, keepdims=keepdim)


def _std_backward(ctx, grad):
    from ember.native.indexing.indexing import where

    (x,) = ctx.saved_inputs
    (y,) = ctx.saved_outputs
    # std = sqrt(var): d std = d var / (2 std). Where std == 0 (constant values) the
    # slope is taken as 0 rather than 0 * inf, as PyTorch does.
    grad_var = where(y == 0, 0.0, grad / (2 * y))
    return (_var_input_grad(x, grad_var, ctx.attrs["dims"], ctx.attrs["keepdim"], ctx.attrs["correction"]),)


VAR = Op("aten::var", contiguous_result(_var_kernel), _var_backward, promote=DEFAULT, save="inputs", opmath=True,
         jvp=REDUCTION)
STD = Op("aten::std", contiguous_result(_std_kernel), _std_backward, promote=DEFAULT, save="both", opmath=True,
         jvp=REDUCTION)


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance ``sum((x - mean)**2) / (N - correction)``, with Bessel's correction
    (``correction=1``) by default; ``unbiased=False`` means ``correction=0``.

    >>> import ember
    >>> ember.tensor([1., 2., 3., 4.]).var()
    tensor(1.6667)
    """
    return _var_or_std(VAR, input, dim, unbiased, keepdim, correction, "var")


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation ``sqrt(var(...))``, same arguments as :func:`var`.

    >>> import ember
    >>> ember.tensor([1., 2., 3., 4.]).std()
    tensor(1.2910)
    """
    return _var_or_std(STD, input, dim, unbiased, keepdim, correction, "std")


def _var_or_std(op, input, dim, unbiased, keepdim, correction, name):
    if isinstance(dim, bool):  # var(x, False): the legacy positional ``unbiased``
        unbiased, dim = dim, None
    if input.dtype.category < dtypes.FLOATING:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dims = reduction_dims(dim, input.ndim)
    correction = _correction(unbiased, correction)
    if _reduced_count(tuple(input.shape), dims) - correction <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
                      "reduction factor (input numel divided by output numel).", UserWarning, stacklevel=3)
    return op(input, dims=dims, keepdim=keepdim, correction=correction)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(var(input, ...), mean(input, ...))`` over the same dims."""
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    return _var_or_std(VAR, input, dim, unbiased, keepdim, correction, "var_mean"), mean(input, dim, keepdim)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(std(input, ...), mean(input, ...))`` over the same dims."""
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    return _var_or_std(STD, input, dim, unbiased, keepdim, correction, "std_mean"), mean(input, dim, keepdim)


# --- all, any, count_nonzero ----------------------------------------------------


def _truth_kernel(fn_name):
    def kernel(xp, a, dims, keepdim):
        out = getattr(xp, fn_name)(a, axis=_axis(dims, a.ndim), keepdims=keepdim)
        # PyTorch keeps uint8 for uint8 inputs (a legacy of byte masks); bool otherwise.
        return out.astype(a.dtype) if a.dtype == "uint8" else out
    return kernel


ALL = Op("aten::all", contiguous_result(_truth_kernel("all")), None, promote=NONE)
ANY = Op("aten::any", contiguous_result(_truth_kernel("any")), None, promote=NONE)


def all(input, dim=None, keepdim=False):
    """True where every element over ``dim`` is nonzero (True for no elements).

    >>> import ember
    >>> ember.tensor([[True, False], [True, True]]).all(1)
    tensor([False,  True])
    """
    return ALL(input, dims=reduction_dims(dim, input.ndim), keepdim=keepdim)


def any(input, dim=None, keepdim=False):
    """True where some element over ``dim`` is nonzero (False for no elements)."""
    return ANY(input, dims=reduction_dims(dim, input.ndim), keepdim=keepdim)


def count_nonzero(input, dim=None):
    """Number of nonzero elements over ``dim`` (int, tuple or None), as int64."""
    return (input != 0).sum(dim)


# --- logsumexp, norm ------------------------------------------------------------


def _logsumexp_kernel(xp, a, dims, keepdim):
    axis = _axis(dims, a.ndim)
    if a.size == 0:
        return xp.log(xp.sum(xp.exp(a), axis=axis, keepdims=keepdim))
    # Subtract the max so exp cannot overflow; an infinite max is replaced by 0 so
    # that inf - inf never makes a NaN. A complex input shifts by its largest real
    # part alone, as PyTorch does (the imaginary part stays where log puts it).
    m = xp.amax(a.real if xp.iscomplexobj(a) else a, axis=axis, keepdims=True)
    m = xp.where(xp.isinf(m), 0, m)
    # PyTorch's steps, each rounded to a's dtype; only the sum accumulates in float32
    # for float16 (NOTE [ opmath ] in opmath.py).
    total = xp.sum(xp.exp(a - m), axis=axis, keepdims=True, dtype=dtypes.accumulate_dtype(a.dtype))
    out = xp.log(total.astype(a.dtype, copy=False)) + m
    if keepdim:
        return out
    return out.squeeze(axis) if axis is not None else out.reshape(())


def _logsumexp_backward(ctx, grad):
    (x,) = ctx.saved_inputs
    (y,) = ctx.saved_outputs
    dims, keepdim = ctx.attrs["dims"], ctx.attrs["keepdim"]
    softmax = (x - expand_reduced(y, x.shape, dims, keepdim)).exp()
    return (expand_reduced(grad, x.shape, dims, keepdim) * softmax,)


LOGSUMEXP = Op("aten::logsumexp", contiguous_result(_logsumexp_kernel), _logsumexp_backward, promote="int_to_float",
               save="both", jvp=REDUCTION)


def logsumexp(input, dim, keepdim=False):
    """``log(sum(exp(input), dim))`` computed without overflow; integers become floats.

    >>> import ember
    >>> ember.tensor([1000., 1000.]).logsumexp(0)
    tensor(1000.6932)
    """
    return LOGSUMEXP(input, dims=reduction_dims(dim, input.ndim), keepdim=keepdim)


def _norm_kernel(xp, a, p, dims, keepdim):
    axis = _axis(dims, a.ndim)
    if p == 2:
        return xp.sqrt(xp.sum(a * a, axis=axis, keepdims=keepdim))
    magnitude = xp.abs(a)
    if p == 1:
        return xp.sum(magnitude, axis=axis, keepdims=keepdim)
    if p == float("inf"):
        return xp.amax(magnitude, axis=axis, keepdims=keepdim)
    if p == float("-inf"):
        return xp.amin(magnitude, axis=axis, keepdims=keepdim)
    if p == 0:
        return xp.sum(a != 0, axis=axis, dtype=a.dtype, keepdims=keepdim)
    return xp.power(xp.sum(xp.power(magnitude, p), axis=axis, keepdims=keepdim), 1.0 / p)


def _norm_backward(ctx, grad):
    from ember.native.indexing.indexing import where

    (x,) = ctx.saved_inputs
    (y,) = ctx.saved_outputs
    p, dims, keepdim = ctx.attrs["p"], ctx.attrs["dims"], ctx.attrs["keepdim"]
    if p == 0:
        return (None,)  # a count of nonzeros: flat almost everywhere
    # Each product takes its factors in the order PyTorch's norm_backward does, since the
    # first operand that orders two dims decides the result's layout (NOTE [ The layout
    # of an elementwise result ] in memory_format.py): the input's factor first for p == 1
    # and general p, the spread gradient first for p == 2.
    if p == 1:
        return (x.sign() * expand_reduced(grad, x.shape, dims, keepdim),)
    if p in (float("inf"), float("-inf")):
        # Like amax: the elements whose magnitude is the norm share the gradient.
        g = expand_reduced(grad, x.shape, dims, keepdim)
        mask = x.abs() == expand_reduced(y, x.shape, dims, keepdim)
        return (x.sign() * mask * g / mask.sum(dims, keepdim=True),)
    if p == 2:  # PyTorch's order, grad * (x / norm), sets the layout; a zero norm has x == 0: 0 / 1
        safe_norm = expand_reduced(where(y == 0, 1.0, y), x.shape, dims, keepdim)
        return (expand_reduced(grad, x.shape, dims, keepdim) * (x / safe_norm),)
    # d/dx_i (sum |x|^p)^(1/p) = sign(x_i) |x_i|^(p-1) / y^(p-1); zero where x_i == 0
    # (for p < 1 the power is infinite there) and where the whole norm is zero.
    slope = where(x == 0, 0.0, x.sign() * x.abs() ** (p - 1))
    return (slope * expand_reduced(where(y == 0, 0.0, grad / y ** (p - 1)), x.shape, dims, keepdim),)


NORM = Op("aten::norm", contiguous_result(_norm_kernel), _norm_backward, promote=DEFAULT, save="both",
          backward_name="NormBackward1", opmath=True, jvp=REDUCTION)


def _check_norm_identity(input, dims, p, every_dim):
    # max, min and negative powers of no elements have no value to start from.
    name = str(int(p)) if abs(p) != float("inf") and p == int(p) else str(p)
    if every_dim:
        raise RuntimeError(f"linalg.vector_norm cannot compute the {name} norm on an empty tensor because the "
                           "operation does not have an identity")
    for d in dims:
        if input.shape[d] == 0:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {name} norm on the dimension {d}because "
                               "this dimension is empty and the operation does not have an identity")


def _nuclear_norm(input, dim, keepdim):
    # The sum of singular values is a matrix norm: torch.norm hands it to linalg.
    from ember.linalg import matrix_norm

    dim = tuple(range(input.ndim)) if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    if input.ndim >= 2 and len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    return matrix_norm(input, "nuc", dim, keepdim)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """Vector p-norm ``(sum |x|^p)^(1/p)`` over ``dim`` (every element by default).

    ``p`` may be any number, ``inf`` (largest magnitude), ``-inf`` (smallest), ``0``
    (count of nonzeros), ``"fro"`` (the 2-norm of the flattened values) or ``"nuc"``
    (a matrix's sum of singular values, over two dims).

    >>> import ember
    >>> ember.tensor([3., -4.]).norm()
    tensor(5.)
    """
    if dtype is not None:
        input = input.to(dtype)
    if input.dtype.category < dtypes.FLOATING:
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. "
                           f"Got {_legacy(input.dtype)}")
    if p == "fro" or p is None:
        p = 2
    if p == "nuc":
        return _nuclear_norm(input, dim, keepdim)
    if input.dtype.is_complex:  # a vector norm reads magnitudes; abs's gradient is grad * sgn(z), as torch's
        input = input.abs()
    dims = reduction_dims(dim, input.ndim)
    if (p < 0 or p == float("inf")) and input.numel() == 0:
        _check_norm_identity(input, dims, p, dim is None)
    return NORM(input, p=p, dims=dims, keepdim=keepdim)
