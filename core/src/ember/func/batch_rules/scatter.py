"""Batch rules of gather, scatter and embedding lookups.

PyTorch counterpart: aten/src/ATen/functorch/BatchRulesScatterOps.cpp (``gather``,
``scatter``: every operand given the batch dim, the dim moved past it) and
BatchRulesModules.cpp (``embedding``) (v2.13).
"""

from ember.func.batch_rules import register
from ember.func.batch_rules._helpers import logical_rank, materialize, physical_dim, unwrap, wrap


@register("aten::gather", "aten::scatter", "aten::scatter_add")
def gather_scatter(op, inputs, attrs, info):
    """Self, index (and src) all given the batch: the index addresses each sample's own
    rows, since gather and scatter pair the index with self in every dim but ``dim``."""
    rank = logical_rank(inputs[0])
    if rank == 0 or any(logical_rank(x) != rank for x in inputs[1:] if hasattr(x, "dim")):
        return NotImplemented
    physical = [materialize(x, info) if hasattr(x, "dim") else x for x in inputs]
    return wrap(op(*physical, **dict(attrs, dim=physical_dim(attrs["dim"], rank))), info.level)


@register("aten::embedding")
def embedding(op, inputs, attrs, info):
    """A batch of indices into one table is one lookup of the physical indices; a
    batched table takes the loop."""
    weight, indices = inputs
    if unwrap(weight, info.level)[1]:
        return NotImplemented
    return wrap(op(weight, unwrap(indices, info.level)[0], **attrs), info.level)
