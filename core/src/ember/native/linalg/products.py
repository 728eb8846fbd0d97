"""Matrix products: ``matmul`` (with broadcasting), ``mm mv bmm dot addmm addmv
baddbmm addbmm addr outer einsum``.

PyTorch counterpart: aten/src/ATen/native/LinearAlgebra.cpp (``matmul`` and its
1-d/2-d/batched cases, ``addmm``, ``einsum``) and derivatives.yaml (v2.13).

``matmul`` follows NumPy's rules, which PyTorch shares: a 1-d first operand gains a
leading dim of size 1, a 1-d second operand a trailing one, and both lose it again
in the result; batch dimensions broadcast. The backward reduces the gradient of a
broadcast batch back to the operand's shape (the engine's ``sum_to_size``).
"""

import math

from ember import dtypes
from ember.amp.state import autocast_state, composite_inputs
from ember.autograd.forward_grad import MULTILINEAR, bilinear_plus_bias
from ember.dispatcher import NONE, Op
from ember.dtypes import C_TYPE_NAMES
from ember.native.linalg.outer_product import is_outer, outer_product


def matrix_product(xp, a, b):
    """``a @ b`` on arrays: ``xp.matmul``, or one multiply when there is nothing to sum."""
    if is_outer(a, b):  # NOTE [ Products with one summand ]
        return outer_product(xp, a, b)
    return xp.matmul(a, b)


def _matmul_backward(ctx, grad):
    a, b = ctx.saved_inputs
    need_a, need_b = ctx.needs_input_grad
    if a.ndim == 1 and b.ndim == 1:
        return (grad * b if need_a else None), (grad * a if need_b else None)
    # Lift 1-d operands to matrices so that one formula serves every case:
    # dA = dC @ B^T and dB = A^T @ dC, summed over broadcast batch dims by the engine.
    a2 = a.unsqueeze(0) if a.ndim == 1 else a
    b2 = b.unsqueeze(-1) if b.ndim == 1 else b
    g = grad
    if a.ndim == 1:
        g = g.unsqueeze(-2)
    if b.ndim == 1:
        g = g.unsqueeze(-1)
    grad_a = grad_b = None
    if need_a:
        grad_a = g.matmul(b2.mT)
        if a.ndim == 1:  # (..., 1, k): sum the batch away, drop the lifted dim
            grad_a = grad_a.sum_to_size(1, a.shape[0]).reshape(a.shape)
    if need_b:
        # A transposed operand (x @ W.t()) gets its gradient as a transposed product,
        # so that after TBackward W.grad is contiguous like W and can be stolen
        # instead of copied (NOTE [ Stealing the incoming gradient ]).
        grad_b = g.mT.matmul(a2).mT if _is_transposed(b2) else a2.mT.matmul(g)
        if b.ndim == 1:
            grad_b = grad_b.sum_to_size(b.shape[0], 1).reshape(b.shape)
    return grad_a, grad_b


def _is_transposed(t):
    return t.ndim == 2 and not t.is_contiguous() and t._data.flags.f_contiguous


# Operands have one dtype (checked below), so no promotion pass is needed.
MATMUL = Op("aten::matmul", matrix_product, _matmul_backward, promote=NONE, save="inputs", opmath=True, jvp=MULTILINEAR)
# The same product under the names PyTorch's matmul decomposes into, so that grad_fn
# reads MmBackward0, MvBackward0, DotBackward0 and BmmBackward0 as in PyTorch.
MM = Op("aten::mm", matrix_product, _matmul_backward, promote=NONE, save="inputs", opmath=True, jvp=MULTILINEAR)
MV = Op("aten::mv", matrix_product, _matmul_backward, promote=NONE, save="inputs", opmath=True, jvp=MULTILINEAR)
DOT = Op("aten::dot", matrix_product, _matmul_backward, promote=NONE, save="inputs", opmath=True, jvp=MULTILINEAR)
BMM = Op("aten::bmm", matrix_product, _matmul_backward, promote=NONE, save="inputs", opmath=True, jvp=MULTILINEAR)
_MATMUL_BY_NDIM = {(2, 2): MM, (2, 1): MV, (1, 1): DOT}

def _type_name(dtype):
    from ember.native.support._inplace import _type_name

    return _type_name(dtype)


def _check_dtypes(a, b):
    if a.dtype is not b.dtype and not autocast_state.enabled:  # under autocast the dispatcher casts both
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {C_TYPE_NAMES[a.dtype.name]} != "
                           f"{C_TYPE_NAMES[b.dtype.name]}")
    if a.dtype.name == "bool":
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")


def _check_matmul(a, b, dtypes=True):
    """PyTorch's errors for operands that do not multiply, naming both shapes (and
    their dtypes, unless ``dtypes`` is False: mv and addmv name them otherwise)."""
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and {b.ndim}D")
    k_a = a.shape[-1]
    k_b = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if k_a != k_b:
        if a.ndim == 1 and b.ndim == 1:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{k_a}] and src [{k_b}] to have the "
                               f"same number of elements, but got {k_a} and {k_b} elements respectively")
        if b.ndim == 1:
            rows = 1
            for s in a.shape[:-1]:
                rows *= s
            raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{k_a}), vec ({k_b})")
        rows_a = a.shape[-2] if a.ndim > 1 else 1
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows_a}x{k_a} and {k_b}x{b.shape[-1]})")
    _check_batch_broadcast(a.shape[:-2], b.shape[:-2])
    if dtypes:
        _check_dtypes(a, b)


def _check_addmv_dtypes(input, mat, vec):
    """mv and addmv are not on autocast's lists (PyTorch's CPU ones): their operands
    must agree under autocast too."""
    if not input.dtype is mat.dtype is vec.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_type_name(input.dtype)}, "
                           f"{_type_name(mat.dtype)}, and {_type_name(vec.dtype)}")


def _check_batch_broadcast(batch_a, batch_b):
    for i in range(1, min(len(batch_a), len(batch_b)) + 1):
        sa, sb = batch_a[-i], batch_b[-i]
        if sa != sb and sa != 1 and sb != 1:
            dim = max(len(batch_a), len(batch_b)) - i
            raise RuntimeError(f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                               f"non-singleton dimension {dim}")


def matmul(input, other):
    """Matrix product with NumPy's broadcasting rules:

    - 1-d @ 1-d: the dot product (a 0-d tensor);
    - 2-d @ 2-d: the matrix product;
    - 1-d operands are treated as a row (first) or a column (second) vector and that
      dim is dropped from the result;
    - N-d operands are stacks of matrices in the last two dims; the batch dims broadcast.

    >>> import ember
    >>> ember.ones(2, 3).matmul(ember.ones(3))
    tensor([3., 3.])
    """
    if input.is_sparse or other.is_sparse:
        from ember.native.sparse import sparse_math

        return sparse_math.matmul(input, other)
    _check_matmul(input, other)
    return _MATMUL_BY_NDIM.get((input.ndim, other.ndim), MATMUL)(input, other)


def mm(input, mat2):
    """Product of two matrices (2-d only, no broadcasting).

    >>> import ember
    >>> ember.mm(ember.ones(2, 3), ember.ones(3, 4)).shape
    ember.Size([2, 4])
    """
    if input.is_sparse or mat2.is_sparse:  # ember/native/sparse/sparse_math.py
        from ember.native.sparse import sparse_math

        return sparse_math.mm(input, mat2)
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    _check_matmul(input, mat2)
    return MM(input, mat2)


def bmm(input, mat2):
    """Batched product of (b, n, m) and (b, m, p) tensors (no broadcasting)."""
    _check_bmm(input, mat2)
    return BMM(input, mat2)


def _check_bmm(batch1, batch2):
    """The shape and dtype checks of ``bmm`` and ``baddbmm``, with PyTorch's messages."""
    if batch1.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if batch2.shape[:2] != (batch1.shape[0], batch1.shape[2]):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{batch1.shape[0]}, "
                           f"{batch1.shape[2]}] but got: [{batch2.shape[0]}, {batch2.shape[1]}].")
    _check_dtypes(batch1, batch2)


def mv(input, vec):
    """Matrix-vector product of a (n, m) and a (m,) tensor."""
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    _check_matmul(input, vec, dtypes=False)
    _check_addmv_dtypes(vec, input, vec)  # torch's mv is an addmv into a result of vec's dtype
    return MV(input, vec)


def _addmm_kernel(xp, bias, a, b, beta, alpha):
    # One product, then in-place scaling and bias on the fresh result: no temporaries.
    out = matrix_product(xp, a, b)
    if out.dtype.kind in "iu":  # integer products take the scalars truncated to integers, as in PyTorch
        beta, alpha = int(beta), int(alpha)
    if alpha != 1:
        out *= alpha
    return _add_bias(out, bias, beta)


def _add_bias(out, bias, beta):
    if beta != 0:  # beta == 0 ignores the bias entirely, even its NaNs (PyTorch's rule)
        out += bias if beta == 1 else beta * bias
    return out


def _bias_grad_and_scaled(ctx, grad):
    """The bias's gradient (None when not needed) and ``alpha * grad``, which the
    product's operands' gradients start from."""
    beta, alpha = ctx.attrs["beta"], ctx.attrs["alpha"]
    grad_bias = (grad * beta if beta != 1 else grad) if ctx.needs_input_grad[0] else None
    return grad_bias, grad * alpha if alpha != 1 else grad


def _addmm_backward(ctx, grad):
    _, a, b = ctx.saved_inputs
    _, need_a, need_b = ctx.needs_input_grad
    grad_bias, scaled = _bias_grad_and_scaled(ctx, grad)
    if need_a:  # addmv's b is a vector: the outer product
        grad_a = scaled.unsqueeze(-1) * b if b.ndim == 1 else scaled.matmul(b.mT)
    else:
        grad_a = None
    grad_b = a.mT.matmul(scaled) if need_b else None
    return grad_bias, grad_a, grad_b


ADDMM = Op("aten::addmm", _addmm_kernel, _addmm_backward, promote=NONE, save="inputs", opmath=True,
           jvp=bilinear_plus_bias(0))
BADDBMM = Op("aten::baddbmm", _addmm_kernel, _addmm_backward, promote=NONE, save="inputs", opmath=True,
             jvp=bilinear_plus_bias(0))

# addmv runs addmm's kernel (matmul of a matrix and a vector is a vector); an op of its
# own, which is on no autocast list
ADDMV = Op("aten::addmv", _addmm_kernel, _addmm_backward, promote=NONE, save="inputs", opmath=True,
           jvp=bilinear_plus_bias(0))


def _check_bias(input, shape, name, other):
    from ember.native.shape.shape import broadcast_shapes

    if input.dtype is not other.dtype and not autocast_state.enabled:
        raise RuntimeError(f"self and {name} must have the same dtype, but got {_type_name(input.dtype)} and "
                           f"{_type_name(other.dtype)}")
    if tuple(broadcast_shapes(input.shape, shape)) != tuple(shape):
        input.expand(shape)  # raises PyTorch's "The expanded size of the tensor ..." error


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)``, one fused op; ``input`` broadcasts
    to the (n, p) result. With ``beta=0`` the input is ignored (NaN included).

    >>> import ember
    >>> ember.addmm(ember.ones(3), ember.ones(2, 4), ember.ones(4, 3), alpha=0.5)
    tensor([[3., 3., 3.],
            [3., 3., 3.]])
    """
    if mat1.is_sparse:  # ember/native/sparse/sparse_math.py
        from ember.native.sparse import sparse_math

        return sparse_math.addmm(input, mat1, mat2, beta=beta, alpha=alpha)
    if mat1.ndim != 2:
        raise RuntimeError("mat1 must be a matrix, got {}-D tensor".format(mat1.ndim))
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix, got {}-D tensor".format(mat2.ndim))
    _check_matmul(mat1, mat2)
    _check_bias(input, (mat1.shape[0], mat2.shape[1]), "mat2", mat2)
    return ADDMM(input, mat1, mat2, beta=beta, alpha=alpha)


def addmv(input, mat, vec, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat @ vec)``: :func:`addmm` with ``vec`` as a column."""
    if mat.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, {vec.ndim}")
    _check_matmul(mat, vec, dtypes=False)
    _check_addmv_dtypes(input, mat, vec)
    _check_bias(input, (mat.shape[0],), "vec", vec)
    return ADDMV(input, mat, vec, beta=beta, alpha=alpha)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * bmm(batch1, batch2)``, one fused op."""
    _check_bmm(batch1, batch2)
    _check_bias(input, (batch1.shape[0], batch1.shape[1], batch2.shape[2]), "batch2", batch2)
    return BADDBMM(input, batch1, batch2, beta=beta, alpha=alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * sum_b batch1[b] @ batch2[b]``: the batch of products
    summed, computed as one matrix product (the batches laid side by side along the
    inner dim, which sums them).

    >>> import ember
    >>> ember.addbmm(ember.zeros(2, 2), ember.ones(3, 2, 4), ember.ones(3, 4, 2))
    tensor([[12., 12.],
            [12., 12.]])
    """
    for name, t in (("batch1", batch1), ("batch2", batch2)):
        if t.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {batch1.shape[0]} and "
                           f"{batch2.shape[0]}")
    batches, rows, inner = batch1.shape
    if batch2.shape[1] != inner:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({rows}x{inner} and {batch2.shape[1]}x"
                           f"{batch2.shape[2]})")
    _check_bias(input, (rows, batch2.shape[2]), "mat2", batch2)
    _check_dtypes(batch1, batch2)
    side_by_side = batch1.transpose(0, 1).reshape(rows, batches * inner)
    return ADDMM(input, side_by_side, batch2.reshape(batches * inner, batch2.shape[2]), beta=beta, alpha=alpha)


def _check_scalars(dtype, beta, alpha):
    for name, value in (("beta", beta), ("alpha", alpha)):
        if not dtype.is_floating_point and isinstance(value, float):
            raise RuntimeError(f"For integral input tensors, argument {name} must not be a floating point number.")
        if dtype.name != "bool" and isinstance(value, bool):
            raise RuntimeError(f"Boolean {name} only supported for Boolean results.")


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """``beta * input + alpha * outer(vec1, vec2)`` (dtypes promote; for bool, ``or`` and
    ``and``).

    >>> import ember
    >>> ember.addr(ember.zeros(2, 2), ember.tensor([1., 2.]), ember.tensor([3., 4.]))
    tensor([[3., 4.],
            [6., 8.]])
    """
    for name, t in (("vec1", vec1), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {t.ndim}-D")
    dtype = dtypes.promote_types(dtypes.promote_types(input.dtype, vec1.dtype), vec2.dtype)
    _check_scalars(dtype, beta, alpha)
    if dtype.name == "bool":  # a nonzero scalar is True: `beta and input or alpha and vec1 vec2`
        beta, alpha = bool(beta), bool(alpha)
    input.expand(vec1.shape[0], vec2.shape[0])  # raises PyTorch's error for a bias that does not broadcast
    return ADDR(input.to(dtype), vec1.to(dtype), vec2.to(dtype), beta=beta, alpha=alpha)


def _addr_kernel(xp, bias, vec1, vec2, beta, alpha):
    # The outer product directly (a matrix product with an inner size of 1 is slower),
    # alpha folded into the shorter vector, then the bias added in place.
    if vec1.dtype.kind in "iu":
        beta, alpha = int(beta), int(alpha)
    if vec1.shape[0] <= vec2.shape[0]:
        out = xp.multiply.outer(vec1 * alpha if alpha != 1 else vec1, vec2)
    else:
        out = xp.multiply.outer(vec1, vec2 * alpha if alpha != 1 else vec2)
    return _add_bias(out, bias, beta)


def _addr_backward(ctx, grad):
    _, vec1, vec2 = ctx.saved_inputs
    _, need_vec1, need_vec2 = ctx.needs_input_grad
    grad_bias, scaled = _bias_grad_and_scaled(ctx, grad)
    return grad_bias, (scaled.mv(vec2) if need_vec1 else None), (scaled.t().mv(vec1) if need_vec2 else None)


ADDR = Op("aten::addr", _addr_kernel, _addr_backward, promote=NONE, save="inputs")


def outer(input, vec2):
    """Outer product of two 1-d tensors: ``out[i, j] = input[i] * vec2[j]`` (dtypes promote).

    >>> import ember
    >>> ember.outer(ember.tensor([1., 2.]), ember.tensor([1., 10., 100.]))
    tensor([[  1.,  10., 100.],
            [  2.,  20., 200.]])
    """
    for name, t in (("self", input), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D")
    return input.unsqueeze(1) * vec2.unsqueeze(0)


ger = outer


def dot(input, other):
    """Inner product of two 1-d tensors of the same dtype and size.

    >>> import ember
    >>> ember.dot(ember.tensor([1., 2.]), ember.tensor([3., 4.]))
    tensor(11.)
    """
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {_type_name(input.dtype)} "
                           f"and {_type_name(other.dtype)}")
    _check_matmul(input, other)
    return DOT(input, other)


def inner(input, other):
    """Sum of products over the last dim of both: ``out[i..., j...] = sum_k input[i..., k]
    * other[j..., k]``; a 0-d operand multiplies instead.

    >>> import ember
    >>> ember.inner(ember.ones(2, 3), ember.ones(4, 3)).shape
    ember.Size([2, 4])
    """
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    if input.dtype is not other.dtype:
        raise RuntimeError("both inputs should have same dtype")
    # One matrix product: every leading index of one against every leading index of the other.
    rows, cols = tuple(input.shape[:-1]), tuple(other.shape[:-1])
    k = input.shape[-1]
    out = input.reshape(math.prod(rows), k).matmul(other.reshape(math.prod(cols), k).mT)
    return out.reshape(rows + cols)


def vdot(input, other):
    """``dot(conj(input), other)``: the inner product of complex vectors."""
    return dot(input.conj(), other)


# --- einsum ---------------------------------------------------------------------

# NOTE [ einsum and its backward ]
# The front end rewrites the equation into a canonical one: every "..." replaced by
# letters of its own (right-aligned, so that ellipsis dims broadcast), and the output
# written out. The kernel is one xp.einsum call. The gradient of operand i is again
# an einsum: of the output gradient with all the other operands, giving operand i's
# subscripts. Two cases need care:
#   - a letter repeated in operand i ("ii->", a trace or diagonal): its second
#     occurrence gets a fresh letter and an identity matrix joins the operands, so
#     the gradient lands on the diagonal only;
#   - a letter that only operand i has (summed away, as j in "ij->i"): it cannot be
#     an output subscript of the gradient's einsum, so the gradient is computed
#     without it and then expanded along it.
# Operand dims of size 1 that broadcast against larger ones get a gradient of the
# larger size, which the engine sums back down (``sum_to_size``).

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _einsum_kernel(xp, *arrays, terms, output):
    out = xp.einsum(",".join(terms) + "->" + output, *arrays, optimize=len(arrays) > 2)
    # NumPy may return a view of an operand (transpose, diagonal); ops return new memory.
    for a in arrays:
        if xp.may_share_memory(out, a):
            return out.copy()
    return out


def _einsum_backward(ctx, grad):
    terms, output = ctx.attrs["terms"], ctx.attrs["output"]
    operands = ctx.saved_inputs
    return tuple(_einsum_operand_grad(grad, output, operands, terms, i) if need else None
                 for i, need in enumerate(ctx.needs_input_grad))


def _einsum_operand_grad(grad, output, operands, terms, i):
    from ember.native.factory import eye

    term, x = terms[i], operands[i]
    used = set(output).union(*terms)
    fresh = (c for c in _LETTERS if c not in used)
    # A repeated letter becomes a fresh one tied to the first by an identity matrix.
    target, eyes, seen = [], [], set()
    for c, size in zip(term, x.shape):
        if c in seen:
            c_new = next(fresh)
            eyes.append((c, c_new, size))
            target.append(c_new)
        else:
            seen.add(c)
            target.append(c)
    subscripts = [output] + [t for j, t in enumerate(terms) if j != i]
    inputs = [grad] + [o for j, o in enumerate(operands) if j != i]
    for c, c_new, size in eyes:
        subscripts.append(c + c_new)
        inputs.append(eye(size, dtype=grad.dtype, device=grad.device))
    available = set("".join(subscripts))
    kept = "".join(c for c in target if c in available)
    result = EINSUM(*inputs, terms=tuple(subscripts), output=kept)
    if len(kept) == len(target):
        return result
    # Letters only operand i has: the gradient is constant along them.
    shape = []
    for position, c in enumerate(target):
        if c not in available:
            result = result.unsqueeze(position)
        shape.append(result.shape[position] if c in available else x.shape[position])
    return result.expand(shape)


EINSUM = Op("aten::einsum", _einsum_kernel, _einsum_backward, promote=NONE, save="inputs", opmath=True, jvp=MULTILINEAR)


def _parse_einsum(equation, shapes):
    """Canonical ``(terms, output)``: one subscript string per operand and the
    output's, with ellipses replaced by letters; PyTorch's errors for bad equations."""
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(shapes):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    for position, c in enumerate(equation):
        if c not in _LETTERS and c not in ".,->":
            raise RuntimeError(f"einsum(): invalid subscript given at index {position} in the equation string, "
                               "subscripts must be in [a-zA-Z]")
    ellipsis_ndim = 0
    for i, (term, shape) in enumerate(zip(terms, shapes)):
        named = len(term.replace("...", ""))
        if "..." in term:
            if named > len(shape):
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({named}) is more than the "
                                   f"number of dimensions ({len(shape)}) for operand {i}")
            ellipsis_ndim = max(ellipsis_ndim, len(shape) - named)
        elif named != len(shape):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({named}) does not match the "
                               f"number of dimensions ({len(shape)}) for operand {i} and no ellipsis was given")
    spare = [c for c in _LETTERS if c not in equation][:ellipsis_ndim]
    ellipsis = "".join(spare)
    terms = [t.replace("...", ellipsis[ellipsis_ndim - (len(shape) - len(t) + 3):]) if "..." in t else t
             for t, shape in zip(terms, shapes)]
    if arrow:
        output = rhs.replace("...", ellipsis)
        for c in output:
            if output.count(c) > 1:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the output")
            if not any(c in t for t in terms):
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any "
                                   "input operand")
    else:  # implicit output: the ellipsis dims, then the letters used once, in order
        letters = "".join(terms)
        output = ellipsis + "".join(sorted(c for c in set(letters) if letters.count(c) == 1 and c not in ellipsis))
    _check_einsum_sizes(terms, shapes)
    return terms, output


def _check_einsum_sizes(terms, shapes):
    sizes = {}
    for i, (term, shape) in enumerate(zip(terms, shapes)):
        own = {}
        for c, size in zip(term, shape):
            if c in own and own[c] != size:
                raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {i} but the sizes don't "
                                   f"match, {own[c]} != {size}")
            own[c] = size
        for c, size in own.items():
            seen = sizes.get(c, 1)
            if size != seen and size != 1 and seen != 1:
                raise RuntimeError(f"einsum(): subscript {c} has size {size} for operand {i} which does not "
                                   f"broadcast with previously seen size {seen}")
            sizes[c] = max(seen, size) if size != 1 else seen


def _sublist_equation(arguments):
    """``(equation, operands)`` of einsum's sublist form, ``operand, sublist, operand,
    sublist, ..., [output sublist]``: each sublist holds ints in [0, 52) (0-25 are
    written A-Z, 26-51 a-z, as in PyTorch, so the implicit output's alphabetical order
    is the ints' order) and ``...``."""
    def letters(sublist):
        out = []
        for s in sublist:
            if s is Ellipsis:
                out.append("...")
            elif isinstance(s, int) and 0 <= s < 52:
                out.append(chr(ord("A") + s) if s < 26 else chr(ord("a") + s - 26))
            else:
                raise RuntimeError("einsum(): expected subscript to be within the range [0, 52), but got "
                                   f"{s}" if isinstance(s, int) else "einsum(): expected sublist elements to be "
                                   f"int or Ellipsis, got {type(s).__name__}")
        return "".join(out)

    pairs = len(arguments) // 2
    operands, terms = arguments[0:2 * pairs:2], [letters(s) for s in arguments[1:2 * pairs:2]]
    if len(arguments) % 2 == 0:  # no output sublist: the implicit output
        return ",".join(terms), operands
    return ",".join(terms) + "->" + letters(arguments[-1]), operands


def _contracts(terms, output):
    """Whether a letter summed away appears in two operands (a product PyTorch computes
    with bmm; other sums are sums, and products without a sum are mul)."""
    seen = set()
    for term in terms:
        for letter in set(term):
            if letter in seen and letter not in output:
                return True
            seen.add(letter)
    return False


def einsum(equation, *operands):
    """Sum of products over the subscripts of ``equation`` (Einstein notation).

    ``"ij,jk->ik"`` is a matrix product, ``"bij,bjk->bik"`` a batched one, ``"ii->"``
    a trace, ``"ii->i"`` a diagonal, ``"...ij->...ji"`` a batched transpose; without
    ``->`` the output holds the letters used once, in alphabetical order. Any number
    of operands; letters of size 1 broadcast. Differentiable in every operand. The
    sublist form ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` names subscripts by ints.

    >>> import ember
    >>> ember.einsum("ij,j->i", ember.ones(2, 3), ember.tensor([1., 2., 3.]))
    tensor([6., 6.])
    """
    if not isinstance(equation, str):  # the sublist form: einsum(a, [0, 1], b, [1, 2], [0, 2])
        equation, operands = _sublist_equation((equation,) + operands)
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return _einsum(equation, operands, autocast_state.enabled)


def _einsum(equation, operands, autocasts=False):
    """einsum of a list of operands; ``autocasts``: as the public einsum under autocast
    (a composite's own einsum, as bilinear's, is not PyTorch's einsum)."""
    terms, output = _parse_einsum(equation, [t.shape for t in operands])
    contracts = _contracts(terms, output)
    if autocasts and contracts:
        # PyTorch's einsum contracts a pair of operands with bmm, which autocast casts
        operands = composite_inputs("bmm", *operands)
    for t in operands[1:]:
        if t.dtype is not operands[0].dtype:
            if not contracts:  # PyTorch multiplies them (mul): dtypes promote
                return EINSUM(*_promoted(operands), terms=tuple(terms), output=output)
            raise RuntimeError(f"expected scalar type {_type_name(operands[0].dtype)} but found "
                               f"{_type_name(t.dtype)}")
    return EINSUM(*operands, terms=tuple(terms), output=output)


def _promoted(operands):
    from ember.dtypes import promote_types

    common = operands[0].dtype
    for t in operands[1:]:
        common = promote_types(common, t.dtype)
    return [t.to(common) for t in operands]
