"""``renorm``: rescale each slice along a dim whose p-norm exceeds ``maxnorm`` down to
that norm (slices within it are left alone).

PyTorch counterpart: aten/src/ATen/native/Normalization.cpp (``renorm``) and
``renorm_backward`` in torch/csrc/autograd/FunctionsManual.cpp (v2.13).

``out = x * factor``, ``factor = maxnorm / (norm + 1e-7)`` where ``norm > maxnorm``,
else 1; ``norm`` is the p-norm of the slice ``x.select(dim, i)``. The 1e-7 is
PyTorch's, so a slice lands just inside ``maxnorm``. Composed of ``norm``, ``where``
and ``mul``: the gradient also flows through the norm, as PyTorch's
``renorm_backward`` does.
"""

from ember.native.indexing.indexing import where
from ember.tensor import _wrap_dim


def _check(input, p, dim, maxnorm):
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        from ember import dtypes

        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{dtypes.SCALAR_TYPE_NAMES[input.dtype.name]}")
    return _wrap_dim(dim, input.ndim)


def renorm(input, p, dim, maxnorm):
    """Each slice along ``dim`` rescaled to p-norm at most ``maxnorm``.

    >>> import ember
    >>> ember.tensor([[3., 4.], [0.3, 0.4]]).renorm(2, 0, 1.0)
    tensor([[0.6000, 0.8000],
            [0.3000, 0.4000]])
    """
    dim = _check(input, p, dim, maxnorm)
    others = [d for d in range(input.ndim) if d != dim]
    norm = input.norm(p, dim=others, keepdim=True)
    factor = where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    return input * factor


def renorm_(input, p, dim, maxnorm):
    """In-place :func:`renorm`. The result is computed from a copy, because the norm's
    gradient reads the input's old values, which the write replaces."""
    from ember.native.support._inplace import check_inplace, write_result

    check_inplace(input)
    return write_result(input, renorm(input.clone(), p, dim, maxnorm))
