"""The batch rules: for an op, how to compute it on a whole batch at once.

PyTorch counterpart: aten/src/ATen/functorch/BatchRulesBinaryOps.cpp and its
neighbours, one file per family (BatchRulesReduceOps, BatchRulesViews,
BatchRulesLinearAlgebra, BatchRulesScatterOps, BatchRulesConvolution, BatchRulesNorm,
BatchRulesRandomness), each registering its rules in ``TORCH_LIBRARY_IMPL(aten,
FuncTorchBatched, m)`` (v2.13).

A rule is ``rule(op, inputs, attrs, info)``: ``info.level`` is the vmap level to
handle, ``info.size`` its batch size, ``info.randomness`` its mode. It unwraps the
inputs of that level (``unwrap``: the physical value, batch dim first), calls ember
ops on physical tensors and returns the output wrapped at the level; or returns
``NotImplemented`` to send this call to the per-sample loop. ``BATCH_RULES`` maps an
op's qualified name to its rule; ``ember.func.batch_rules.ops_with_rules()`` lists them
(the docs table is generated from it).
"""

BATCH_RULES = {}


def register(*qualnames):
    """Decorator: the rule serves every op named."""
    def add(rule):
        for name in qualnames:
            BATCH_RULES[name] = rule
        return rule
    return add


def ops_with_rules():
    """The qualified names of the ops that have a batch rule, sorted."""
    return sorted(BATCH_RULES)


from ember.func.batch_rules import linalg, loss, nn, pointwise, random, reduction, scatter, views  # noqa: E402  (each module registers its rules on import)

__all__ = ["BATCH_RULES", "register", "ops_with_rules", "linalg", "loss", "nn", "pointwise", "random", "reduction",
           "scatter", "views"]
