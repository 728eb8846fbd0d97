"""Matrix products: ``matmul`` (with broadcasting), ``mm bmm addmm outer dot einsum``.

PyTorch counterpart: aten/src/ATen/native/LinearAlgebra.cpp (``matmul`` and its
1-d/2-d/batched cases, ``addmm``, ``einsum``) and derivatives.yaml (v2.13).

``matmul`` follows NumPy's rules, which PyTorch shares: 1-d operands gain and then
lose a dimension, batch dimensions broadcast. The backward reduces the gradient of a
broadcast batch back to the operand's shape (the engine's ``sum_to_size``).
"""

from ember.dispatcher import DEFAULT, Op


def _matmul_kernel(xp, a, b):
    return xp.matmul(a, b)


def _matmul_backward(ctx, grad):
    a, b = ctx.saved_inputs
    need_a, need_b = ctx.needs_input_grad
    grad_a = grad_b = None
    if a.ndim == 1 and b.ndim == 1:
        return (grad * b if need_a else None), (grad * a if need_b else None)
    # Lift 1-d operands to matrices so one formula serves every case.
    a2 = a.unsqueeze(0) if a.ndim == 1 else a
    b2 = b.unsqueeze(-1) if b.ndim == 1 else b
    g = grad
    if a.ndim == 1:
        g = g.unsqueeze(-2)
    if b.ndim == 1:
        g = g.unsqueeze(-1)
    if need_a:
        grad_a = g.matmul(b2.mT)
        if a.ndim == 1:
            grad_a = grad_a.sum_to_size(1, a.shape[0]).reshape(a.shape) if grad_a.ndim > 2 else grad_a.squeeze(-2)
    if need_b:
        grad_b = a2.mT.matmul(g)
        if b.ndim == 1:
            grad_b = grad_b.sum_to_size(b.shape[0], 1).reshape(b.shape) if grad_b.ndim > 2 else grad_b.squeeze(-1)
    return grad_a, grad_b


MATMUL = Op("aten::matmul", _matmul_kernel, _matmul_backward, promote=DEFAULT, save="inputs")
# The same product under the names PyTorch's matmul decomposes into, so that grad_fn
# reads MmBackward0, MvBackward0, DotBackward0 and BmmBackward0 as in PyTorch.
MM = Op("aten::mm", _matmul_kernel, _matmul_backward, promote=DEFAULT, save="inputs")
MV = Op("aten::mv", _matmul_kernel, _matmul_backward, promote=DEFAULT, save="inputs")
DOT = Op("aten::dot", _matmul_kernel, _matmul_backward, promote=DEFAULT, save="inputs")
BMM = Op("aten::bmm", _matmul_kernel, _matmul_backward, promote=DEFAULT, save="inputs")
_MATMUL_BY_NDIM = {(2, 2): MM, (2, 1): MV, (1, 1): DOT}


def _check_matmul(a, b):
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and {b.ndim}D")
    k_a = a.shape[-1]
    k_b = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if k_a != k_b:
        rows_a = a.shape[-2] if a.ndim > 1 else 1
        cols_b = b.shape[-1] if b.ndim > 1 else 1
        if a.ndim == 1 and b.ndim == 1:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{k_a}] and src [{k_b}] to have the "
                               "same number of elements, but got {} and {} elements respectively".format(k_a, k_b))
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows_a}x{k_a} and {k_b}x{cols_b})")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {a.dtype.name} != {b.dtype.name}")


def matmul(input, other):
    """Matrix product with NumPy's broadcasting rules.

    >>> import ember
    >>> ember.ones(2, 3).matmul(ember.ones(3)).tolist()
    [3.0, 3.0]
    """
    _check_matmul(input, other)
    return _MATMUL_BY_NDIM.get((input.ndim, other.ndim), MATMUL)(input, other)


def mm(input, mat2):
    """Product of two matrices (2-d only)."""
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    _check_matmul(input, mat2)
    return MM(input, mat2)


def bmm(input, mat2):
    """Batched product of (b, n, m) and (b, m, p) tensors (no broadcasting)."""
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if input.shape[0] != mat2.shape[0]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{input.shape[0]}, "
                           f"{input.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}].")
    _check_matmul(input, mat2)
    return BMM(input, mat2)


def mv(input, vec):
    """Matrix-vector product of a (n, m) and a (m,) tensor."""
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    _check_matmul(input, vec)
    return MV(input, vec)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)``."""
    product = mm(mat1, mat2)
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        return product + input * 0
    return product + (input if beta == 1 else input * beta)


def addmv(input, mat, vec, *, beta=1, alpha=1):
    return addmm(input.unsqueeze(-1) if input.ndim == 1 else input, mat, vec.unsqueeze(1), beta=beta, alpha=alpha).squeeze(-1) \
        if input.ndim == 1 else addmm(input, mat, vec.unsqueeze(1), beta=beta, alpha=alpha).squeeze(-1)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    product = bmm(batch1, batch2)
    if alpha != 1:
        product = product * alpha
    return product + (input if beta == 1 else input * beta)


def outer(input, vec2):
    """Outer product of two 1-d tensors."""
    if input.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError("outer: expected 1-D tensors")
    return input.unsqueeze(1) * vec2.unsqueeze(0)


ger = outer


def dot(input, other):
    """Inner product of two 1-d tensors of the same dtype."""
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {input.dtype.name.capitalize()} "
                           f"and {other.dtype.name.capitalize()}")
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src "
                           f"[{other.shape[0]}] to have the same number of elements, but got {input.shape[0]} and "
                           f"{other.shape[0]} elements respectively")
    return DOT(input, other)


inner = dot


def vdot(input, other):
    return dot(input, other)
