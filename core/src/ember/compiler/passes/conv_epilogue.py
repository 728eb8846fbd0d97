"""Epilogue folding: a ReLU, a residual add, or a residual add then a ReLU that follows a
compiled convolution runs inside the convolution's kernel.

PyTorch counterpart: torch/_inductor/fx_passes/mkldnn_fusion.py (convolution fused with
its unary and binary post-ops, as oneDNN's post-ops) (v2.13).

# NOTE [ The convolution's epilogue ]
# In a ResNet block, every convolution (its batch norm already folded into its weight
# and bias, passes/conv_bn_folding.py) is followed by a ReLU, or by the residual add and
# a ReLU. Run as separate ops, each is a pass over the whole activation. Folded into the
# kernel, the Winograd output transform adds the residual while it writes the output
# (the copy it makes anyway, so the add costs no pass of its own; where both operands of
# the add are convolutions, the Winograd one takes it) and the ReLU runs in
# place on the result while it is fresh; im2col adds and clamps the product it has just
# written. A pattern is folded only when the graph allows it: the convolution's result
# has no other reader (nothing else may see the value before the epilogue), the add is a
# plain `a + b` (alpha 1) of two values of one shape and dtype, and the add's result is
# read by the ReLU alone.
"""


def fold_conv_epilogues(graph, values):
    """Fold each ``relu(conv)``, ``conv + r`` and ``relu(conv + r)`` after a compiled
    convolution into it, in place; ``values`` are the nodes' arrays on the example
    inputs (shapes and dtypes). Returns how many patterns were folded."""
    from ember.compiler.passes.conv_layout import CompiledConv2d
    from ember.compiler.passes.winograd import WinogradConv2d

    folded = 0
    # Winograd kernels first: when both operands of an add are convolutions (a downsampling
    # block), the residual is best added by the one whose output copy adds it for free.
    nodes = sorted(graph.nodes, key=lambda n: not isinstance(n.target, WinogradConv2d))
    for node in nodes:
        if node.op != "call_function" or not isinstance(node.target, CompiledConv2d) or len(node.users) != 1:
            continue
        user = next(iter(node.users))
        residual = _residual(user, node, values)
        last = user
        steps = []
        if residual is not None:
            steps.append("add")
            follower = next(iter(user.users)) if len(user.users) == 1 else None
            if _is(follower, "aten::relu") and follower.args == (user,):
                steps.append("relu")
                last = follower
        elif _is(user, "aten::relu") and user.args == (node,) and not user.kwargs:
            steps.append("relu")
        if not steps:
            continue
        node.target.epilogue = tuple(steps)
        # the folded node goes where the add is: the residual may be computed after the
        # convolution (a downsampling shortcut is), and everything it reads is before
        with graph.inserting_before(user):
            new = graph.call_function(node.target, tuple(node.args[:3]) + ((residual,) if residual is not None else ()))
        values[new] = values[last]
        last.replace_all_uses_with(new)
        for dead in dict.fromkeys([last, user, node]):
            graph.erase_node(dead)
        folded += 1
    return folded


def _is(node, qualname):
    return node is not None and node.op == "call_function" and getattr(node.target, "qualname", None) == qualname


def _residual(add, conv, values):
    """The other operand of ``add`` when it is ``conv + r`` or ``r + conv`` of one shape
    and dtype, else None."""
    if not _is(add, "aten::add") or len(add.args) != 2 or add.args.count(conv) != 1:
        return None
    if any(k != "alpha" or v != 1 for k, v in add.kwargs.items()):
        return None
    other = add.args[1] if add.args[0] is conv else add.args[0]
    if not hasattr(other, "op"):
        return None
    mine, theirs, result = values.get(conv), values.get(other), values.get(add)
    shapes = {getattr(v, "shape", None) for v in (mine, theirs, result)}
    dtypes = {getattr(v, "dtype", None) for v in (mine, theirs, result)}
    return other if len(shapes) == 1 and len(dtypes) == 1 and None not in shapes else None
