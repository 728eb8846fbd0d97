"""Winograd convolution: 3x3, stride-1 convolutions computed with F(2x2, 3x3), 16 matrix
products of (out channels, in channels) instead of one with nine times the columns.

PyTorch counterpart: the Winograd kernels oneDNN/NNPACK pick for torch's CPU
convolutions (aten/src/ATen/native/mkldnn/Conv.cpp) (v2.13); this pass is ember's own,
written with the backend's array operations.

# NOTE [ Winograd F(2x2, 3x3) ]
# Every 2x2 block of outputs is read from a 4x4 tile of the padded input d:
#     Y = A^T [ (G g G^T) * (B^T d B) ] A
# with G (4x3), B^T (4x4), A^T (2x4) Lavin and Gray's small matrices. U = G g G^T is
# computed once per weight (compile time); V = B^T d B is additions only; the product
# `*` over the 16 tile positions, summed over input channels, is 16 matrix products
# (O, C) @ (C, tiles). That is 16 multiplies per 4 outputs per channel pair instead of
# 36: 2.25x fewer, for additions that are cheap beside them. Float32 results differ
# from the direct convolution by rounding (about 1e-6 relative), as oneDNN's do.
"""

import numpy as np

_G = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])


def winograd_weight(weight):
    """``U = G g G^T`` as ``(16, O, C)``, from an ``(O, C, 3, 3)`` array."""
    u = np.einsum("ik,ockl,jl->ijoc", _G, np.asarray(weight, dtype=np.float64), _G)
    return u.reshape(16, weight.shape[0], weight.shape[1]).astype(weight.dtype)


class WinogradConv2d:
    """A 3x3 stride-1 convolution by F(2x2, 3x3); callable on tensors like an op
    (``(input, U, bias)``), and on arrays through ``array_kernel(xp)``."""

    __name__ = "winograd_conv2d"
    qualname = None

    def __init__(self, padding):
        self.padding = tuple(padding)

    def __repr__(self):
        return f"<winograd 3x3 conv, padding={self.padding}>"

    def array_kernel(self, xp):
        padding = self.padding

        def run(x, u, bias):
            return _winograd(xp, x, u, bias, padding)
        return run

    def __call__(self, x, u, bias):
        from ember.dispatcher import _wrap

        xp = x._device.backend.xp
        out = _winograd(xp, x._data, u._data, None if bias is None else bias._data, self.padding)
        return _wrap(out, x._device)


def _winograd(xp, x, u, bias, padding):
    N, C, H, W = x.shape
    O = u.shape[1]
    ph, pw = padding
    OH, OW = H + 2 * ph - 2, W + 2 * pw - 2
    th, tw = (OH + 1) // 2, (OW + 1) // 2
    # The padded image, channel-major (C, N, ...), covers every 4x4 tile: 2 * tiles + 2
    # rows and columns. Channel-major makes V's (C, N * tiles) matrices plain slices.
    d = xp.zeros((C, N, 2 * th + 2, 2 * tw + 2), x.dtype)
    d[:, :, ph:ph + H, pw:pw + W] = x.transpose(1, 0, 2, 3)
    v = xp.empty((4, 4, C, N, th, tw), x.dtype)
    rows = [d[:, :, i:i + 2 * th:2] for i in range(4)]  # (C, N, th, 2*tw+2): row i of each tile
    for k, t in enumerate(_transform_b(xp, rows)):
        cols = [t[..., j:j + 2 * tw:2] for j in range(4)]
        xp.subtract(cols[0], cols[2], out=v[k, 0])
        xp.add(cols[1], cols[2], out=v[k, 1])
        xp.subtract(cols[2], cols[1], out=v[k, 2])
        xp.subtract(cols[1], cols[3], out=v[k, 3])
    products = xp.matmul(u, v.reshape(16, C, N * th * tw)).reshape(4, 4, O, N, th, tw)
    out = xp.empty((N, O, 2 * th, 2 * tw), x.dtype)
    halves = _transform_a(xp, [products[i] for i in range(4)])  # two (4, O, N, th, tw)
    for i, half in enumerate(halves):
        for j, piece in enumerate(_transform_a(xp, [half[k] for k in range(4)])):
            out[:, :, i::2, j::2] = piece.transpose(1, 0, 2, 3)
    out = out[:, :, :OH, :OW] if (OH % 2 or OW % 2) else out
    if bias is not None:
        out += bias.reshape(1, -1, 1, 1)
    return out


def _transform_b(xp, p):
    """B^T applied along one axis of the tile: four outputs from four inputs."""
    return (p[0] - p[2], p[1] + p[2], p[2] - p[1], p[1] - p[3])


def _transform_a(xp, p):
    """A^T applied along one axis: two outputs from four inputs."""
    return (p[0] + p[1] + p[2], p[1] - p[2] - p[3])


def use_winograd(graph, attributes):
    """Replace each 3x3, stride-1, undilated, ungrouped float convolution with a constant
    weight by ``WinogradConv2d``; returns how many."""
    replaced = 0
    for node in graph.nodes:
        if getattr(node.target, "qualname", None) != "aten::convolution" or node.op != "call_function":
            continue
        k = node.kwargs
        weight_node = node.args[1]
        if (k.get("transposed") or k.get("groups") != 1 or tuple(k.get("stride", ())) != (1, 1)
                or tuple(k.get("dilation", ())) != (1, 1) or getattr(weight_node, "op", None) != "get_attr"):
            continue
        weight = attributes[weight_node.target]
        if weight.ndim != 4 or tuple(weight.shape[2:]) != (3, 3) or weight.dtype.is_floating_point is False:
            continue
        path = f"_winograd_{node.name}"
        from ember.dispatcher import _wrap

        attributes[path] = _wrap(winograd_weight(weight.detach().numpy()), weight.device) \
            if weight.device.type == "cpu" else _to_device(winograd_weight(weight.detach().cpu().numpy()), weight)
        with graph.inserting_before(node):
            u = graph.get_attr(path)
            new = graph.call_function(WinogradConv2d(k["padding"]), (node.args[0], u, node.args[2]))
        node.replace_all_uses_with(new)
        graph.erase_node(node)
        replaced += 1
    graph.eliminate_dead_code()
    return replaced


def _to_device(array, like):
    import ember

    return ember.from_numpy(array).to(like.device)
