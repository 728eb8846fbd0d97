"""The masked normalizations, which keep the input's shape: ``cumsum``, ``cumprod``,
``softmax``, ``log_softmax``, ``softmin`` and ``normalize`` along one dimension, and the
masked binary ``logaddexp``.

PyTorch counterpart: torch/masked/_ops.py (v2.13), strided tensors only.

As the reductions (NOTE [ Masking by the identity ] in mask.py): a masked-out element
becomes the identity of the reduction behind the normalization (0 for cumsum and
normalize, 1 for cumprod, -inf for softmax and log_softmax, inf for softmin) and the
ordinary op runs. A masked-out element therefore still has an output (a softmax gives
it 0, a cumsum repeats the running sum), and a fully masked-out row of a softmax is NaN.
"""

import ember
from ember.masked.mask import canonical_dim, combine
from ember.masked.reductions import norm


def _along(op, identity, input, dim, dtype, mask):
    """``op`` along one dimension of the input filled with the identity of ``identity``
    (a reduction's name), computed in ``dtype`` (the input's by default)."""
    dtype = input.dtype if dtype is None else dtype
    return op(combine(identity, input, mask), canonical_dim(dim, input.ndim)[0], dtype=dtype)


def cumsum(input, dim, *, dtype=None, mask=None):
    """The running sum along ``dim``, masked-out elements counting as 0.

    Args:
        input (Tensor): the tensor.
        dim (int): the dimension to run along.
        dtype (ember.dtype, optional): the result's dtype (``input``'s by default).
        mask (Tensor, optional): True where an element takes part, broadcastable to ``input``.

    Returns:
        Tensor: the running sums, ``input``'s shape.

    >>> import ember
    >>> ember.masked.cumsum(ember.tensor([1., 2., 3.]), 0, mask=ember.tensor([True, False, True]))
    tensor([1., 1., 4.])
    """
    return _along(ember.cumsum, "sum", input, dim, dtype, mask).to(dtype=dtype or input.dtype)


def cumprod(input, dim, *, dtype=None, mask=None):
    """The running product along ``dim``, masked-out elements counting as 1. As :func:`cumsum`.

    >>> import ember
    >>> ember.masked.cumprod(ember.tensor([2., 5., 3.]), 0, mask=ember.tensor([True, False, True]))
    tensor([2., 2., 6.])
    """
    return _along(ember.cumprod, "prod", input, dim, dtype, mask).to(dtype=dtype or input.dtype)


def softmax(input, dim, *, dtype=None, mask=None):
    """``exp(x) / sum(exp(x))`` along ``dim`` over the masked-in elements; masked-out
    elements get 0, a fully masked-out row NaN.

    >>> import ember
    >>> ember.masked.softmax(ember.tensor([1., 9., 1.]), 0, mask=ember.tensor([True, False, True]))
    tensor([0.5000, 0.0000, 0.5000])
    """
    return _along(ember.nn.functional.softmax, "amax", input, dim, dtype, mask)


def log_softmax(input, dim, *, dtype=None, mask=None):
    """The logarithm of :func:`softmax`: masked-out elements get -inf.

    >>> import ember
    >>> ember.masked.log_softmax(ember.tensor([1., 9., 1.]), 0, mask=ember.tensor([True, False, True]))
    tensor([-0.6931,    -inf, -0.6931])
    """
    return _along(ember.nn.functional.log_softmax, "amax", input, dim, dtype, mask)


def softmin(input, dim, *, dtype=None, mask=None):
    """``softmax(-x)`` along ``dim`` over the masked-in elements (masked-out ones are
    +inf, so they get 0).

    >>> import ember
    >>> ember.masked.softmin(ember.tensor([1., -9., 1.]), 0, mask=ember.tensor([True, False, True]))
    tensor([0.5000, 0.0000, 0.5000])
    """
    return _along(ember.nn.functional.softmin, "amin", input, dim, dtype, mask)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    """``x / max(norm(x), eps)`` along ``dim``, with the masked ``ord``-norm of the
    masked-in elements; masked-out elements give 0.

    >>> import ember
    >>> ember.masked.normalize(ember.tensor([3., 9., 4.]), 2.0, 0, mask=ember.tensor([True, False, True]))
    tensor([0.6000, 0.0000, 0.8000])
    """
    dtype = input.dtype if dtype is None else dtype
    magnitude = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    denominator = ember.maximum(magnitude, magnitude.new_full((), eps))
    return ember.divide(combine("sum", input, mask), denominator)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    """``log(exp(input) + exp(other))`` elementwise, each operand's masked-out elements
    counting as -inf (so an element masked out of one operand gives the other's).

    >>> import ember
    >>> m = ember.tensor([True, False, True])
    >>> ember.masked.logaddexp(ember.tensor([-100., -200., -300.]), ember.tensor([-1., -2., -3.]), input_mask=m,
    ...                        other_mask=m)
    tensor([-1., -inf, -3.])
    """
    dtype = input.dtype if dtype is None else dtype
    both = ember.logaddexp(combine("logaddexp", input, input_mask), combine("logaddexp", other, other_mask))
    return both.to(dtype=dtype)
