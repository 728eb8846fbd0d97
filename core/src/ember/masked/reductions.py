"""The masked reductions: ``sum``, ``prod``, ``amax``, ``amin``, ``argmax``, ``argmin``,
``mean``, ``median``, ``logsumexp``, ``norm``, ``var`` and ``std`` over the elements a
boolean ``mask`` keeps.

PyTorch counterpart: torch/masked/_ops.py (v2.13), strided tensors only.

Each is the ordinary ember reduction of the input with its masked-out elements replaced
by the reduction's identity (NOTE [ Masking by the identity ] in mask.py), so autograd
needs nothing of its own. ``mask`` broadcasts to the input; None keeps every element.
A fully masked-out row gives the identity (0 for sum, 1 for prod, -inf for a float
amax, the dtype's lowest value for an integer one, the index of the row's first
element for argmax), and NaN for mean, median, var and std, which have none.
"""

import ember
from ember import dtypes
from ember.masked.mask import canonical_dim, combine, input_mask

# Integer and boolean dtypes a sum or product promotes to int64, as the plain ops do.
_PROMOTED_TO_INT64 = {"bool", "uint8", "int8", "int16", "int32"}


def _accumulate_dtype(input, dtype):
    if dtype is not None:
        return dtype
    return dtypes.int64 if input.dtype.name in _PROMOTED_TO_INT64 else input.dtype


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The sum of the masked-in elements over ``dim`` (every dimension when None).

    Args:
        input (Tensor): the tensor to reduce.
        dim (int or tuple of ints, optional): the dimensions to reduce.
        keepdim (bool): keep the reduced dimensions with size 1.
        dtype (ember.dtype, optional): the result's dtype (int64 for integer and bool inputs).
        mask (Tensor, optional): True where an element takes part, broadcastable to ``input``.

    Returns:
        Tensor: the sums; 0 where every element is masked out.

    >>> import ember
    >>> ember.masked.sum(ember.tensor([[1., 2.], [3., 4.]]), 1, mask=ember.tensor([[True, False], [False, False]]))
    tensor([1., 0.])
    """
    dtype = _accumulate_dtype(input, dtype)
    dims = canonical_dim(dim, input.ndim)
    return ember.sum(combine("sum", input, mask), dims, bool(keepdim), dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The product of the masked-in elements over ``dim``; 1 where every element is
    masked out. Arguments as :func:`sum`.

    >>> import ember
    >>> ember.masked.prod(ember.tensor([2., 3., 4.]), mask=ember.tensor([True, False, True]))
    tensor(8.)
    """
    dtype = _accumulate_dtype(input, dtype)
    result = combine("prod", input, mask).to(dtype=dtype)
    for d in reversed(canonical_dim(dim, input.ndim)):  # prod reduces one dimension at a time
        result = result.prod(dim=d, keepdim=bool(keepdim))
    return result


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The largest masked-in element over ``dim``; -inf (the dtype's lowest value for
    integers) where every element is masked out. Arguments as :func:`sum`; the result
    keeps ``input``'s dtype unless ``dtype`` is given.

    >>> import ember
    >>> ember.masked.amax(ember.tensor([2., 3., 4.]), mask=ember.tensor([True, True, False]))
    tensor(3.)
    """
    return _extreme(ember.amax, "amax", input, canonical_dim(dim, input.ndim), keepdim, dtype, mask)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The smallest masked-in element over ``dim``; inf (the dtype's highest value for
    integers) where every element is masked out. Arguments as :func:`amax`.

    >>> import ember
    >>> ember.masked.amin(ember.tensor([2., 3., 4.]), mask=ember.tensor([False, True, True]))
    tensor(3.)
    """
    return _extreme(ember.amin, "amin", input, canonical_dim(dim, input.ndim), keepdim, dtype, mask)


def _extreme(reduce, name, input, dim, keepdim, dtype, mask):
    """amax, amin, argmax or argmin (``reduce``) of the identity-filled input over
    ``dim``, cast to ``dtype`` (the input's by default)."""
    dtype = input.dtype if dtype is None else dtype
    return reduce(combine(name, input, mask), dim, bool(keepdim)).to(dtype=dtype)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The index of the largest masked-in element along ``dim`` (of the flattened input
    when None), in ``input``'s dtype as PyTorch gives it (not int64) unless ``dtype`` is
    given. A fully masked-out row gives 0, its first index.

    >>> import ember
    >>> ember.masked.argmax(ember.tensor([5., 3., 4.]), mask=ember.tensor([False, True, True]))
    tensor(2.)
    """
    return _extreme(ember.argmax, "argmax", input, dim, keepdim, dtype, mask)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The index of the smallest masked-in element along ``dim``. As :func:`argmax`.

    >>> import ember
    >>> ember.masked.argmin(ember.tensor([1., 3., 4.]), mask=ember.tensor([False, True, True]))
    tensor(1.)
    """
    return _extreme(ember.argmin, "argmin", input, dim, keepdim, dtype, mask)


def _count(input, dim, keepdim, mask):
    """How many elements take part in each reduced row, as int64."""
    if mask is None:
        return ember.ones(tuple(input.shape), dtype=dtypes.int64, device=input.device).sum(
            canonical_dim(dim, input.ndim), keepdim=keepdim)
    return mask.sum(canonical_dim(dim, input.ndim), keepdim=keepdim)


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The mean of the masked-in elements over ``dim``: their sum over their count, NaN
    where every element is masked out. ``input`` (or ``dtype``) must be floating or complex.

    >>> import ember
    >>> ember.masked.mean(ember.tensor([2., 3., 7.]), mask=ember.tensor([True, False, True]))
    tensor(4.5000)
    """
    source = "Input" if dtype is None else "Optional"
    dtype = input.dtype if dtype is None else dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"mean(): Could not infer output dtype. {source} dtype must be either a floating point or "
                         f"complex dtype. Got: torch.{dtype.name}")
    mask = None if mask is None else input_mask(input, mask)
    total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=mask)
    return total / _count(input, dim, bool(keepdim), mask)


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    """The median of the masked-in elements along one dimension ``dim`` (the lower of
    the two middle values for an even count), NaN where every element is masked out.
    Integer inputs are computed in float32 and cast back, so a fully masked-out row is
    an error for them.

    >>> import ember
    >>> ember.masked.median(ember.tensor([9., 1., 5., 3.]), mask=ember.tensor([False, True, True, True]))
    tensor(3.)
    """
    dtype = input.dtype if dtype is None else dtype
    dim = canonical_dim(dim, input.ndim)[0]
    is_float = input.dtype.is_floating_point
    if not is_float:
        input = input.to(dtype=dtypes.float32)
    # the identity is NaN, which nanmedian skips
    output = ember.nanmedian(combine("median", input, mask), dim, keepdim).values
    if is_float:
        return output
    if ember.isnan(output).any():
        raise ValueError("masked median expects no fully masked out rows if dtype is not floating point")
    return output.to(dtype=dtype)


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """``log(sum(exp(x)))`` over the masked-in elements, -inf where every element is
    masked out; cast to ``input``'s dtype (or ``dtype``) at the end, integers included.

    >>> import ember
    >>> ember.masked.logsumexp(ember.tensor([0., 0., 5.]), mask=ember.tensor([True, True, False]))
    tensor(0.6931)
    """
    dtype = input.dtype if dtype is None else dtype
    dims = canonical_dim(dim, input.ndim)
    return ember.logsumexp(combine("logsumexp", input, mask), dims, keepdim=keepdim).to(dtype=dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The vector ``ord``-norm of the masked-in elements over ``dim``
    (:func:`ember.linalg.vector_norm`); 0 where every element is masked out (inf for
    ``ord=-inf``).

    >>> import ember
    >>> ember.masked.norm(ember.tensor([3., 9., 4.]), 2.0, mask=ember.tensor([True, False, True]))
    tensor(5.)
    """
    dtype = input.dtype if dtype is None else dtype
    masked = combine("norm", input, mask, ord)
    return ember.linalg.vector_norm(masked, ord, canonical_dim(dim, input.ndim), bool(keepdim), dtype=dtype)


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    """The variance of the masked-in elements over ``dim``: the mean squared distance
    from their mean, divided by ``count - correction`` (``correction`` 1 by default, or
    ``1 if unbiased else 0``), floored at zero count; NaN where every element is masked out.

    >>> import ember
    >>> ember.masked.var(ember.tensor([1., 100., 3.]), mask=ember.tensor([True, False, True]))
    tensor(2.)
    """
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt=False)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    """The standard deviation: the square root of :func:`var`.

    >>> import ember
    >>> ember.masked.std(ember.tensor([1., 100., 5.]), mask=ember.tensor([True, False, True]))
    tensor(2.8284)
    """
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt=True)


def _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt):
    """Two passes: the masked mean (kept dimensions, to broadcast), then the masked sum
    of squared distances from it over the corrected count. Integer inputs are computed
    in float32."""
    if unbiased is not None and correction is not None:
        raise ValueError("Only one of unbiased and correction may be given")
    correction = float(correction) if correction is not None else 1.0 if unbiased is None or unbiased else 0.0
    if dtype is None:
        dtype = input.dtype if input.dtype.is_floating_point or input.dtype.is_complex else dtypes.float32
    compute_dtype = dtype if dtype.is_floating_point or dtype.is_complex else dtypes.float32
    mask = None if mask is None else input_mask(input, mask)
    count = _count(input, dim, True, mask)
    centred = input - sum(input, dim, keepdim=True, dtype=dtype, mask=mask) / count
    total = sum(centred * centred.conj(), dim, keepdim=keepdim, dtype=compute_dtype, mask=mask)
    count = count.reshape(tuple(total.shape))
    if correction != 0:
        count = ember.clamp_min(count.to(dtype=compute_dtype.to_real()) - correction, 0)
    output = (total / count).to(dtype=dtype)
    return ember.sqrt(output) if take_sqrt else output
