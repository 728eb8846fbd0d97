"""Conv-bn folding: an eval-mode batch norm after a convolution becomes part of the
convolution's weight and bias.

PyTorch counterpart: torch/fx/experimental/optimization.py (``fuse``) and
torch/nn/utils/fusion.py (``fuse_conv_bn_weights``) (v2.13).

``norm::batch_norm(y, w, b, mean, invstd)`` is ``y * scale + shift`` per channel with
``scale = invstd * w`` and ``shift = b - mean * scale``; for ``y = conv(x, W) + c``,
that is ``conv(x, W * scale) + (c * scale + shift)``: one op instead of two passes
over the activation.
"""


def fold_conv_bn(graph, attributes):
    """Rewrite ``graph`` in place; returns how many batch norms were folded. Needs the
    batch norm's parameters and statistics to be constants (run ``fold_constants``
    first)."""
    from ember.autograd.grad_mode import no_grad

    folded = 0
    for bn in graph.nodes:
        conv = bn.args[0] if bn.op == "call_function" and bn.args else None
        if (getattr(bn.target, "qualname", None) != "norm::batch_norm"
                or bn.kwargs.get("training")):
            continue
        if (getattr(getattr(conv, "target", None), "qualname", None)
                != "aten::convolution" or len(conv.users) != 1):
            continue
        if conv.kwargs.get("transposed") or conv.args[1].op != "get_attr":
            continue
        stats = bn.args[1:5]
        if not all(s is None or getattr(s, "op", None) == "get_attr" for s in stats):
            continue
        bias = conv.args[2]
        if bias is not None and bias.op != "get_attr":
            continue
        weight, bn_weight, bn_bias, mean, invstd = (
            None if n is None else attributes[n.target] for n in (conv.args[1], *stats))
        with no_grad():
            scale = invstd if bn_weight is None else invstd * bn_weight
            shift = -mean * scale if bn_bias is None else bn_bias - mean * scale
            new_weight = weight * scale.reshape((-1,) + (1,) * (weight.ndim - 1))
            new_bias = shift if bias is None else attributes[bias.target] * scale + shift
        attributes[f"_folded_{conv.name}_weight"] = new_weight
        attributes[f"_folded_{conv.name}_bias"] = new_bias
        with graph.inserting_before(conv):
            w_node = graph.get_attr(f"_folded_{conv.name}_weight")
            b_node = graph.get_attr(f"_folded_{conv.name}_bias")
        conv.args = (conv.args[0], w_node, b_node) + tuple(conv.args[3:])
        bn.replace_all_uses_with(conv)
        graph.erase_node(bn)
        folded += 1
    graph.eliminate_dead_code()
    return folded
