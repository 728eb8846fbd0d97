"""Batch rules of the pointwise ops: unary, binary, ternary, where, clamp.

PyTorch counterpart: aten/src/ATen/functorch/BatchRulesUnaryOps.cpp and
BatchRulesBinaryOps.cpp (``_binary_pointwise_batch_rule``: the batch dims moved to the
front and every batched operand padded to the result's logical rank) (v2.13).
"""

from ember import dispatcher
from ember.func.batch_rules import register
from ember.func.batch_rules._helpers import logical_rank, pad_to_rank, unwrap, wrap

# Pointwise ops the registry does not flag `elementwise` (that flag is about the
# layout of the result): each is computed element by element, with its attributes
# (exponents, eps, modes) the same for every sample. Ops of plugins are named too
# (ember-activation's activations), since a rule is found by the op's name.
POINTWISE = [
    "aten::where", "aten::acosh", "aten::asinh", "aten::atanh", "aten::angle", "aten::deg2rad", "aten::rad2deg",
    "aten::digamma", "aten::lgamma", "aten::polygamma", "aten::i0", "aten::igamma", "aten::igammac",
    "aten::logit", "aten::sinc", "aten::hypot", "aten::heaviside", "aten::logaddexp", "aten::logaddexp2",
    "aten::nextafter", "aten::gcd", "aten::lcm", "aten::nan_to_num", "aten::signbit", "aten::positive",
    "aten::conj_physical", "aten::_to_copy", "aten::clone", "aten::masked_fill.Scalar",
    "aten::masked_fill.Tensor", "aten::special_entr", "aten::special_erfcx", "aten::special_i0e", "aten::special_i1",
    "aten::special_i1e", "aten::special_log_ndtr", "aten::special_ndtr", "aten::special_ndtri",
    "aten::special_xlog1py", "aten::special_zeta", "aten::complex", "aten::polar", "aten::real", "aten::imag",
    "activation::gelu", "activation::silu", "activation::elu", "activation::celu", "activation::leaky_relu",
    "activation::hardtanh", "activation::hardsigmoid", "activation::hardswish", "activation::mish",
    "activation::softplus", "activation::log_sigmoid", "activation::hardshrink", "activation::softshrink",
    "activation::threshold",
]


def pointwise(op, inputs, attrs, info):
    """Pad each batched operand to the logical rank of the result (size-1 dims after
    the batch), leave unbatched ones as they are: NumPy's broadcasting from the right
    then lines up every sample, and the batch dim stays first."""
    rank = 0
    for x in inputs:
        rank = max(rank, logical_rank(x))
    physical = []
    for x in inputs:
        value, batched = unwrap(x, info.level)
        physical.append(pad_to_rank(value, rank) if batched else x)
    return wrap(op(*physical, **attrs), info.level)


def _register_flagged():
    # every op the registry flags elementwise (add, mul, exp, ...), whatever defines it
    names = [op.qualname for op in dispatcher._ALL_OPS if op.elementwise]
    register(*names, *POINTWISE)(pointwise)


_register_flagged()


@register("aten::copy")
def copy(op, inputs, attrs, info):
    """``self`` takes ``src``'s values broadcast to its shape: a batched ``src`` makes
    every sample of ``self`` (an unbatched one expanded), which an in-place copy into an
    unbatched tensor then refuses, as torch does."""
    from ember.func.batch_rules._helpers import materialize

    target, source = inputs
    source_value, source_batched = unwrap(source, info.level)
    if source_batched:
        source_value = pad_to_rank(source_value, logical_rank(target))
    return wrap(op(materialize(target, info), source_value, **attrs), info.level)
