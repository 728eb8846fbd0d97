"""Batch rules of the products: matmul, mm, bmm, mv, dot, linear, addmm, einsum.

PyTorch counterpart: aten/src/ATen/functorch/BatchRulesLinearAlgebra.cpp (``mm``,
``mv``, ``dot``, ``bmm`` as one broadcasting matmul of the physical operands) and
BatchRulesDecompositions.cpp (``linear``, ``addmm``, ``einsum``) (v2.13).
"""

import string

from ember.func.batch_rules import register
from ember.func.batch_rules._helpers import logical_rank, pad_to_rank, unwrap, wrap


@register("aten::matmul", "aten::mm", "aten::bmm", "aten::mv", "aten::dot")
def matmul(op, inputs, attrs, info):
    """One broadcasting matmul of the physical operands. A 1-d sample becomes a row (the
    first operand) or a column (the second), as matmul reads it, and that dim is dropped
    after; each batched operand is padded to the other's rank, so the batch dim is one
    more broadcast dim in front of the matrices. An unbatched weight stays one matrix:
    ``x @ W`` over a batch of ``x`` is one product of (B*n, k) with (k, m)."""
    from ember.native.linalg.products import matmul as physical_matmul

    a, b = inputs
    a_value, a_batched = unwrap(a, info.level)
    b_value, b_batched = unwrap(b, info.level)
    a_rank, b_rank = logical_rank(a), logical_rank(b)
    if a_rank == 1:
        a_value = a_value.unsqueeze(-2)
    if b_rank == 1:
        b_value = b_value.unsqueeze(-1)
    rank = max(a_rank, b_rank, 2)
    if a_batched:
        a_value = pad_to_rank(a_value, rank)
    if b_batched:
        b_value = pad_to_rank(b_value, rank)
    if not b_batched and b_rank <= 2:  # (B, ..., n, k) @ (k, m): one product of the stacked rows
        rows = a_value.reshape(-1, a_value.shape[-1])
        out = physical_matmul(rows, b_value).reshape(tuple(a_value.shape[:-1]) + (b_value.shape[-1],))
    else:
        out = physical_matmul(a_value, b_value)
    if a_rank == 1:
        out = out.squeeze(-2)
    if b_rank == 1:
        out = out.squeeze(-1)
    return wrap(out, info.level)


@register("aten::linear")
def linear(op, inputs, attrs, info):
    """A batch of inputs through one weight is ``linear`` of the physical input (its
    rows are the batch's rows); a batched weight (an ensemble) is ``x @ W^T + b``."""
    x, weight, bias = inputs
    if not unwrap(weight, info.level)[1] and (bias is None or not unwrap(bias, info.level)[1]):
        return wrap(op(unwrap(x, info.level)[0], weight, bias), info.level)
    from ember.native.linalg.products import matmul as logical_matmul

    out = logical_matmul(x, weight.transpose(-1, -2))
    return out if bias is None else out + bias


@register("aten::addmm", "aten::addmv", "aten::baddbmm")
def addmm(op, inputs, attrs, info):
    """``beta * input + alpha * (m1 @ m2)`` from batched ops; beta 0 ignores the input."""
    from ember.native.linalg.products import matmul as logical_matmul

    bias, m1, m2 = inputs
    out = logical_matmul(m1, m2)
    if attrs.get("alpha", 1) != 1:
        out = out * attrs["alpha"]
    beta = attrs.get("beta", 1)
    if beta == 0:  # the input is ignored, NaNs included (torch's rule)
        return out
    return out + (bias if beta == 1 else bias * beta)


@register("aten::einsum")
def einsum(op, inputs, attrs, info):
    """A new subscript letter for the batch, in front of each batched operand's term and
    of the output."""
    terms, output = attrs["terms"], attrs["output"]
    used = set("".join(terms) + output)
    letter = next(c for c in string.ascii_letters if c not in used)
    physical, new_terms = [], []
    for x, term in zip(inputs, terms):
        value, batched = unwrap(x, info.level)
        physical.append(value)
        new_terms.append(letter + term if batched else term)
    return wrap(op(*physical, terms=tuple(new_terms), output=letter + output), info.level)
