"""How each ember op of a traced graph becomes ONNX nodes.

PyTorch counterpart: torch/onnx/symbolic_opset9.py .. symbolic_opset18.py (one
``symbolic`` function per aten op, registered by name) (v2.13). ember keeps one table,
``SYMBOLICS``, from an op's qualified name to a function ``fn(g, node)`` that emits the
ONNX nodes through the ``GraphContext`` ``g`` (ember/onnx/utils.py) and returns the ONNX
value name(s) of the op's output(s).
"""

import math

import numpy as np

SYMBOLICS = {}


def symbolic(*qualnames):
    def register(fn):
        for q in qualnames:
            SYMBOLICS[q] = fn
        return fn
    return register


def _binary(onnx_type):
    def convert(g, node):
        a, b = node.args
        return g.op(onnx_type, g.value(a, like=node), g.value(b, like=node))
    return convert


for _q, _t in (("aten::add", "Add"), ("aten::sub", "Sub"), ("aten::mul", "Mul"), ("aten::div", "Div"),
               ("aten::matmul", "MatMul"), ("aten::mm", "MatMul"), ("aten::bmm", "MatMul"),
               ("aten::maximum", "Max"), ("aten::minimum", "Min"), ("aten::pow", "Pow")):
    SYMBOLICS[_q] = _binary(_t)


def _compare(onnx_type, negate=False):
    def convert(g, node):
        a, b = node.args
        common = _common_like(g, node)
        out = g.op(onnx_type, g.value(a, like=common), g.value(b, like=common))
        return g.op("Not", out) if negate else out
    return convert


def _common_like(g, node):
    # Comparisons output bool: their operands' dtype comes from the tensor operand.
    return next(a for a in node.args if hasattr(a, "op"))


SYMBOLICS.update({"aten::eq": _compare("Equal"), "aten::ne": _compare("Equal", negate=True),
                  "aten::lt": _compare("Less"), "aten::le": _compare("LessOrEqual"),
                  "aten::gt": _compare("Greater"), "aten::ge": _compare("GreaterOrEqual")})


def _unary(onnx_type):
    def convert(g, node):
        return g.op(onnx_type, g.value(node.args[0]))
    return convert


for _q, _t in (("aten::relu", "Relu"), ("aten::sigmoid", "Sigmoid"), ("aten::tanh", "Tanh"), ("aten::exp", "Exp"),
               ("aten::log", "Log"), ("aten::sqrt", "Sqrt"), ("aten::neg", "Neg"), ("aten::abs", "Abs"),
               ("aten::erf", "Erf"), ("aten::logical_not", "Not"), ("aten::clone", "Identity"),
               ("aten::reciprocal", "Reciprocal"), ("aten::contiguous", "Identity")):
    SYMBOLICS[_q] = _unary(_t)


@symbolic("aten::rsqrt")
def _rsqrt(g, node):
    return g.op("Reciprocal", g.op("Sqrt", g.value(node.args[0])))


@symbolic("activation::silu")
def _silu(g, node):
    x = g.value(node.args[0])
    return g.op("Mul", x, g.op("Sigmoid", x))


@symbolic("activation::gelu")
def _gelu(g, node):
    x = g.value(node.args[0])
    if node.kwargs.get("approximate", "none") == "tanh":
        # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        cube = g.op("Mul", g.op("Mul", x, x), x)
        inner = g.op("Mul", g.op("Add", x, g.op("Mul", cube, g.scalar(0.044715, node))),
                     g.scalar(math.sqrt(2 / math.pi), node))
        return g.op("Mul", g.op("Mul", x, g.scalar(0.5, node)), g.op("Add", g.op("Tanh", inner), g.scalar(1.0, node)))
    erf = g.op("Erf", g.op("Div", x, g.scalar(math.sqrt(2.0), node)))
    return g.op("Mul", g.op("Mul", x, g.scalar(0.5, node)), g.op("Add", erf, g.scalar(1.0, node)))


@symbolic("aten::softmax", "aten::_safe_softmax")
def _softmax(g, node):
    out = g.op("Softmax", g.value(node.args[0]), axis=node.kwargs.get("dim", node.args[1] if len(node.args) > 1
                                                                        else -1))
    if node.target.qualname == "aten::_safe_softmax":
        # A row of -inf gives 0 in ember (PyTorch's _safe_softmax) and NaN in ONNX's Softmax.
        out = g.op("Where", g.op("IsNaN", out), g.scalar(0.0, node), out)
    return out


@symbolic("aten::log_softmax")
def _log_softmax(g, node):
    return g.op("LogSoftmax", g.value(node.args[0]), axis=node.kwargs.get("dim", -1))


@symbolic("aten::where", "aten::masked_fill.Scalar", "aten::masked_fill.Tensor")
def _where(g, node):
    cond, a, b = node.args
    return g.op("Where", g.value(cond), g.value(a, like=node), g.value(b, like=node))


@symbolic("aten::linear")
def _linear(g, node):
    x, weight, bias = node.args
    out = g.op("MatMul", g.value(x), g.transposed_constant(weight) if g.is_constant(weight)
               else g.op("Transpose", g.value(weight), perm=[1, 0]))
    return out if bias is None else g.op("Add", out, g.value(bias))


@symbolic("aten::convolution")
def _convolution(g, node):
    x, weight, bias = node.args
    k = node.kwargs
    dims = len(k["stride"])
    inputs = [g.value(x), g.value(weight)] + ([g.value(bias)] if bias is not None
                                              else [])
    attrs = dict(strides=list(k["stride"]), pads=list(k["padding"]) * 2,
                 dilations=list(k["dilation"]), group=k["groups"],
                 kernel_shape=list(g.meta(weight).shape[2:2 + dims]))
    if k["transposed"]:
        return g.op("ConvTranspose", *inputs, output_padding=list(k["output_padding"]),
                    **attrs)
    return g.op("Conv", *inputs, **attrs)


@symbolic("aten::max_pool2d_with_indices")
def _max_pool(g, node):
    k = node.kwargs
    if any(d != 1 for d in k["dilation"]):
        attrs = {"dilations": list(k["dilation"])}
    else:
        attrs = {}
    out = g.op("MaxPool", g.value(node.args[0]), kernel_shape=list(k["kernel_size"]), strides=list(k["stride"]),
               pads=list(k["padding"]) * 2, ceil_mode=int(k["ceil_mode"]), **attrs)
    return [out, None]  # the indices: ember reads them only for backward and max_unpool


@symbolic("aten::max_pool2d")
def _max_pool_values(g, node):
    return _max_pool(g, node)[0]  # ember's pooling without indices (inference)


@symbolic("aten::avg_pool2d")
def _avg_pool(g, node):
    k = node.kwargs
    return g.op("AveragePool", g.value(node.args[0]), kernel_shape=list(k["kernel_size"]), strides=list(k["stride"]),
                pads=list(k["padding"]) * 2, ceil_mode=int(k.get("ceil_mode", False)),
                count_include_pad=int(k.get("count_include_pad", True)))


@symbolic("aten::adaptive_avg_pool2d")
def _global_avg_pool(g, node):
    # ember records this op only for the (1, 1) output (NOTE [ Global average pooling as
    # one matrix-vector product ] in ember/native/pooling/pooling.py), which is ONNX's global pool
    return g.op("GlobalAveragePool", g.value(node.args[0]))


@symbolic("aten::mean.dim", "aten::mean")
def _mean(g, node):
    x = node.args[0]
    dims = node.kwargs.get("dims", node.kwargs.get("dim"))
    if dims is None:
        dims = list(range(g.meta(x).ndim))
    dims = [dims] if isinstance(dims, int) else list(dims)
    return g.reduce("ReduceMean", g.value(x), dims, node.kwargs.get("keepdim", False))


@symbolic("aten::sum.dim_IntList")
def _sum(g, node):
    dims = node.kwargs.get("dims", node.kwargs.get("dim"))
    dims = [dims] if isinstance(dims, int) else list(dims)
    return g.reduce("ReduceSum", g.value(node.args[0]), dims, node.kwargs.get("keepdim", False))


@symbolic("aten::_to_copy")
def _to_copy(g, node):
    # Tensor.to(dtype): ONNX's Cast (a device move is no node)
    target = node.kwargs["dtype"].np
    if target == g.meta(node.args[0]).dtype:
        return g.op("Identity", g.value(node.args[0]))
    return g.op("Cast", g.value(node.args[0]), to=g.onnx.helper.np_dtype_to_tensor_dtype(target))


@symbolic("aten::max_all", "aten::min_all")
def _extreme_all(g, node):
    # torch.max(x) with no dim: the largest element, a 0-d tensor (torchvision's
    # batched_nms reads it to offset each class's boxes)
    x = node.args[0]
    axes = list(range(g.meta(x).ndim))
    return g.reduce("ReduceMax" if node.target.qualname == "aten::max_all" else "ReduceMin", g.value(x), axes, False)


@symbolic("aten::view", "aten::reshape", "aten::_reshape_alias", "aten::_unsafe_view")
def _reshape(g, node):
    return g.op("Reshape", g.value(node.args[0]), g.int_list(node, "shape"))


@symbolic("aten::permute")
def _permute(g, node):
    return g.op("Transpose", g.value(node.args[0]), perm=list(node.kwargs["dims"]))


@symbolic("aten::transpose")
def _transpose(g, node):
    ndim = g.meta(node.args[0]).ndim
    perm = list(range(ndim))
    a, b = node.kwargs["dim0"] % ndim, node.kwargs["dim1"] % ndim
    perm[a], perm[b] = perm[b], perm[a]
    return g.op("Transpose", g.value(node.args[0]), perm=perm)


@symbolic("aten::t")
def _t(g, node):
    return g.op("Transpose", g.value(node.args[0]), perm=[1, 0])


@symbolic("aten::unsqueeze")
def _unsqueeze(g, node):
    return g.op("Unsqueeze", g.value(node.args[0]), g.const(np.array([node.kwargs["dim"]], np.int64)))


@symbolic("aten::squeeze")
def _squeeze(g, node):
    dims = node.kwargs.get("dims", node.kwargs.get("dim"))
    shape = g.meta(node.args[0]).shape
    if dims is None:
        dims = [i for i, s in enumerate(shape) if s == 1]
    dims = [dims] if isinstance(dims, int) else [d for d in dims if shape[d] == 1]
    return g.op("Squeeze", g.value(node.args[0]), g.const(np.array(dims, np.int64)))


@symbolic("aten::cat")
def _cat(g, node):
    tensors = node.args if not isinstance(node.args[0], (list, tuple)) else node.args[0]
    return g.op("Concat", *[g.value(t) for t in tensors], axis=node.kwargs.get("dim", 0))


@symbolic("aten::split_with_sizes")
def _split(g, node):
    sizes = list(node.kwargs["sizes"])
    return g.op("Split", g.value(node.args[0]), g.const(np.array(sizes, np.int64)), axis=node.kwargs["dim"],
                outputs=len(sizes))


@symbolic("aten::unbind")
def _unbind(g, node):
    dim = node.kwargs.get("dim", 0)
    count = g.meta(node.args[0]).shape[dim]
    pieces = g.op("Split", g.value(node.args[0]), g.const(np.ones(count, np.int64)), axis=dim, outputs=count)
    pieces = pieces if isinstance(pieces, list) else [pieces]
    axis = g.const(np.array([dim], np.int64))
    return [g.op("Squeeze", p, axis) for p in pieces]


@symbolic("aten::embedding")
def _embedding(g, node):
    weight, indices = node.args
    return g.op("Gather", g.value(weight), g.value(indices), axis=0)


@symbolic("aten::_basic_index", "aten::_basic_index.select", "aten::_basic_index.unsqueeze", "aten::_basic_index.alias")
def _basic_index(g, node):
    x = node.args[0]
    key = node.kwargs["key"]
    key = key if isinstance(key, tuple) else (key,)
    ndim = g.meta(x).ndim
    consumed = sum(1 for k in key if k is not None and k is not Ellipsis)
    if Ellipsis in key:
        at = key.index(Ellipsis)
        key = key[:at] + (slice(None),) * (ndim - consumed) + key[at + 1:]
    out = g.value(x)
    axis = 0  # the output axis the next key entry acts on
    for entry in key:
        if entry is None:
            out = g.op("Unsqueeze", out, g.const(np.array([axis], np.int64)))
            axis += 1
        elif isinstance(entry, slice):
            if entry != slice(None):
                start, stop, step = entry.start, entry.stop, entry.step
                out = g.op("Slice", out, g.const(np.array([0 if start is None else start], np.int64)),
                           g.const(np.array([np.iinfo(np.int64).max if stop is None else stop], np.int64)),
                           g.const(np.array([axis], np.int64)), g.const(np.array([step or 1], np.int64)))
            axis += 1
        else:  # an integer: pick and drop the axis
            out = _pick(g, out, int(entry), axis)
    return out


def _pick(g, x, index, axis):
    # Gather of a one-element index, then Squeeze: g.const makes every array at least
    # 1-d (np.ascontiguousarray), so a 0-d index would keep the axis
    picked = g.op("Gather", x, g.const(np.array([index], np.int64)), axis=axis)
    return g.op("Squeeze", picked, g.const(np.array([axis], np.int64)))


@symbolic("aten::select")
def _select(g, node):
    return _pick(g, g.value(node.args[0]), node.kwargs["index"], node.kwargs["dim"])


@symbolic("aten::resample")
def _resample(g, node):
    x = g.value(node.args[0])
    dim = node.kwargs["dim"]
    out = None
    for index, weight in node.kwargs["taps"]:
        part = g.op("Gather", x, g.const(np.asarray(index, np.int64)), axis=dim)
        if weight is not None:
            shape = [1] * g.meta(node.args[0]).ndim
            shape[dim] = -1
            part = g.op("Mul", part, g.const(np.asarray(weight, g.meta(node).dtype).reshape(shape)))
        out = part if out is None else g.op("Add", out, part)
    return out


@symbolic("norm::batch_norm")
def _batch_norm(g, node):
    x, weight, bias, mean, invstd = node.args
    if g.is_constant(mean) and g.is_constant(invstd) and all(v is None or g.is_constant(v) for v in (weight, bias)):
        # Eval mode: one Mul and one Add per channel, with scale and shift folded now.
        invstd_a = g.array(invstd)
        scale = invstd_a if weight is None else invstd_a * g.array(weight)
        shift = -g.array(mean) * scale if bias is None else g.array(bias) - g.array(mean) * scale
        shape = (1, -1) + (1,) * (g.meta(x).ndim - 2)
        return g.op("Add", g.op("Mul", g.value(x), g.const(scale.reshape(shape))), g.const(shift.reshape(shape)))
    raise g.unsupported(node, "a batch norm in training mode (export the model in eval mode)")


@symbolic("norm::layer_norm_stats")
def _layer_norm_stats(g, node):
    x = g.value(node.args[0])
    ndim = g.meta(node.args[0]).ndim
    axes = list(range(ndim - node.kwargs["normalized_ndim"], ndim))
    mean = g.reduce("ReduceMean", x, axes, True)
    centered = g.op("Sub", x, mean)
    variance = g.reduce("ReduceMean", g.op("Mul", centered, centered), axes, True)
    rstd = g.op("Reciprocal", g.op("Sqrt", g.op("Add", variance, g.scalar(node.kwargs["eps"], node.args[0]))))
    return [mean, rstd]


@symbolic("norm::layer_norm")
def _layer_norm(g, node):
    x, weight, bias, mean, rstd = node.args
    out = g.op("Mul", g.op("Sub", g.value(x), g.value(mean)), g.value(rstd))
    if weight is not None:
        out = g.op("Mul", out, g.value(weight))
    if bias is not None:
        out = g.op("Add", out, g.value(bias))
    return out


@symbolic("aten::native_dropout")
def _dropout(g, node):
    if node.kwargs.get("train", node.kwargs.get("training", False)):
        raise g.unsupported(node, "dropout in training mode (export the model in eval mode)")
    return [g.op("Identity", g.value(node.args[0])), None]
