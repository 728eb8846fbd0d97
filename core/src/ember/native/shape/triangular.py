"""Triangular parts of matrices: ``tril`` (on and below a diagonal) and ``triu`` (on and
above), with their in-place forms.

PyTorch counterpart: aten/src/ATen/native/TriangularOps.cpp and the ``tril``/``triu``
entries of derivatives.yaml (v2.13).

Both work on the last two dims (the others are batch dims); ``diagonal`` shifts the
boundary: 0 is the main diagonal, > 0 above it, < 0 below. The gradient is the same
triangle of the incoming gradient.
"""

from ember.dispatcher import NONE, Op
from ember.native.support._inplace import inplace


def _tril_backward(ctx, grad):
    return (TRIL(grad, diagonal=ctx.attrs["diagonal"]),)


def _triu_backward(ctx, grad):
    return (TRIU(grad, diagonal=ctx.attrs["diagonal"]),)


TRIL = Op("aten::tril", lambda xp, a, diagonal: xp.tril(a, diagonal), _tril_backward, promote=NONE)
TRIU = Op("aten::triu", lambda xp, a, diagonal: xp.triu(a, diagonal), _triu_backward, promote=NONE)


def _check(input, name):
    if input.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")


def tril(input, diagonal=0):
    """The lower triangle: elements on and below diagonal ``diagonal``, zeros above.

    >>> import ember
    >>> ember.ones(3, 3).tril()
    tensor([[1., 0., 0.],
            [1., 1., 0.],
            [1., 1., 1.]])
    """
    _check(input, "tril")
    return TRIL(input, diagonal=int(diagonal))


def triu(input, diagonal=0):
    """The upper triangle: elements on and above diagonal ``diagonal``, zeros below.

    >>> import ember
    >>> ember.ones(2, 3).triu(1)
    tensor([[0., 1., 1.],
            [0., 0., 1.]])
    """
    _check(input, "triu")
    return TRIU(input, diagonal=int(diagonal))


def tril_(input, diagonal=0):
    _check(input, "tril")
    return inplace(input, TRIL, (input,), {"diagonal": int(diagonal)})


def triu_(input, diagonal=0):
    _check(input, "triu")
    return inplace(input, TRIU, (input,), {"diagonal": int(diagonal)})
