"""How the quantized ops of a traced int8 model (``quantized::*``, registered by the
ember-quantization plugin) become ONNX nodes.

PyTorch counterpart: the ``quantized_*`` symbolics of torch/onnx/symbolic_opset10.py and
torch/onnx/symbolic_helper.py (``quantize_helper``, ``dequantize_helper``) (v2.13). torch
writes each quantized op as float arithmetic between ``DequantizeLinear`` and
``QuantizeLinear`` (QDQ). ember writes the int8 Linear and Conv2d as integer ONNX ops
instead (NOTE [ Quantized ops in ONNX ]), so onnxruntime computes the same exact
accumulator as ember's kernels; the core knows these ops by name only (it imports no
plugin), as it knows ``activation::gelu``.
"""

import numpy as np

from ember.onnx.symbolic_opset import symbolic

# NOTE [ Quantized ops in ONNX ]
# An int8 Linear or Conv2d in ember (ember_quantization/kernels.py) computes an exact
# integer accumulator (x - zx) . (w - zw), then requantises it in float32:
# ``rint((acc * (sx * sw) + bias) / s_out) + z_out``, clamped. ONNX has those steps as
# ops: ``MatMulInteger`` / ``ConvInteger`` (uint8 activations with their zero point,
# int8 weights, an int32 result), then ``Cast``, ``Mul``, ``Add`` in float32 and
# ``QuantizeLinear`` (divide, round half to even, add the zero point, saturate). The
# weight is the kernel's packed one, ``w - zw`` (NOTE [ Packed weights ]), which fits
# int8 whenever the weight's zero points are 0 (symmetric weights, every default
# qconfig); other weights are refused. ``QLinearMatMul`` and ``QLinearConv`` would fold
# the bias into int32 at scale ``sx * sw``, which rounds it; the float epilogue keeps
# ember's bits. Quantizing, dequantizing, ReLU, add and cat map to QuantizeLinear,
# DequantizeLinear, Max and QDQ around Add and Concat; the dynamic Linear computes its
# input's scale and zero point in the graph (ReduceMin, ReduceMax), as its kernel does
# per call. onnxruntime then agrees with ember to one quantization step (the tests):
# the float division in QuantizeLinear and ember's multiplication by 1/scale differ on
# rare half-way values.

_FLOAT = 1  # onnx.TensorProto.FLOAT
_DOUBLE = 11  # onnx.TensorProto.DOUBLE


def _constant(g, node, what):
    """The example value of ``node``, which must not depend on the model's inputs."""
    if node is None:
        return None
    if g.is_constant(node) or (node.op == "call_function" and all(g.is_constant(n) for n in node.all_input_nodes)):
        return g.meta(node)
    raise g.unsupported(g._current, f"its {what} is computed from the inputs; ONNX takes it as a constant")


def _float32(g, x, like):
    """``x`` as float32: QuantizeLinear and the requantisation run in float32, as ember's kernels."""
    return x if g.meta(like).dtype == np.float32 else g.op("Cast", x, to=_FLOAT)


def _int8_weight(g, packed):
    """The packed weight ``w - zw`` as int8 (NOTE [ Quantized ops in ONNX ])."""
    shifted = _constant(g, packed, "packed weight")
    if shifted.size and (shifted.min() < -128 or shifted.max() > 127):
        raise g.unsupported(g._current, "a quantized weight with non-zero zero points (w - zero_point leaves int8; "
                                        "ONNX's integer ops take one weight zero point); use a symmetric weight "
                                        "observer")
    return shifted.astype(np.int8)


def _requantize(g, acc, node, channel_shape):
    """``QuantizeLinear(acc * (sx * sw) + bias)`` in float32, with the fused ReLU, as the kernels' ``_requantize``."""
    _, _, w_scales, bias = node.args[:4]
    k = node.kwargs
    multiplier = (_constant(g, w_scales, "weight scale").astype(np.float64) * k["x_scale"]).astype(np.float32)
    real = g.op("Mul", g.op("Cast", acc, to=_FLOAT), g.const(multiplier.reshape(channel_shape)))
    real = g.op("Add", real, g.const(_constant(g, bias, "bias").astype(np.float32).reshape(channel_shape)))
    if k.get("relu", False):
        real = g.op("Relu", real)
    return g.op("QuantizeLinear", real, g.const(np.float32(k["out_scale"])),
                g.const(np.asarray(k["out_zero_point"], np.uint8)))


@symbolic("quantized::pack_weight")
def _pack_weight(g, node):
    # Read by the Linear and Conv2d symbolics as a constant (_int8_weight): nothing to emit.
    _constant(g, node, "weight")
    return None


@symbolic("quantized::quantize_per_tensor")
def _quantize_per_tensor(g, node):
    k = node.kwargs
    storage = np.dtype(k["storage"])
    if (k["qmin"], k["qmax"]) != (np.iinfo(storage).min, np.iinfo(storage).max):
        raise g.unsupported(node, f"quantization to [{k['qmin']}, {k['qmax']}], narrower than {storage.name}")
    x = node.args[0]
    return g.op("QuantizeLinear", _float32(g, g.value(x), x), g.const(np.float32(k["scale"])),
                g.const(np.asarray(k["zero_point"], storage)))


@symbolic("quantized::dequantize_per_tensor")
def _dequantize_per_tensor(g, node):
    q = node.args[0]
    return g.op("DequantizeLinear", g.value(q), g.const(np.float32(node.kwargs["scale"])),
                g.const(np.asarray(node.kwargs["zero_point"], g.meta(q).dtype)))


@symbolic("quantized::dequantize_per_channel")
def _dequantize_per_channel(g, node):
    q, scales, zero_points = node.args
    dtype = g.meta(q).dtype
    return g.op("DequantizeLinear", g.value(q), g.const(_constant(g, scales, "scales").astype(np.float32)),
                g.const(_constant(g, zero_points, "zero points").astype(dtype)), axis=node.kwargs["axis"])


@symbolic("quantized::linear")
def _linear(g, node):
    x, packed = node.args[:2]
    acc = g.op("MatMulInteger", g.value(x), g.const(_int8_weight(g, packed).T),
               g.const(np.asarray(node.kwargs["x_zero_point"], np.uint8)), g.const(np.int8(0)))
    return _requantize(g, acc, node, (-1,))


@symbolic("quantized::conv2d")
def _conv2d(g, node):
    x, packed = node.args[:2]
    k = node.kwargs
    (kh, kw), out_channels = k["kernel_size"], g.meta(packed).shape[0]
    # packed rows are (kh, kw, C) windows (NOTE [ Packed weights ]); ONNX wants (out, C, kh, kw)
    weight = _int8_weight(g, packed).reshape(out_channels, kh, kw, -1).transpose(0, 3, 1, 2)
    acc = g.op("ConvInteger", g.value(x), g.const(weight), g.const(np.asarray(k["x_zero_point"], np.uint8)),
               g.const(np.int8(0)), strides=list(k["stride"]), pads=list(k["padding"]) * 2,
               dilations=list(k["dilation"]), group=k["groups"], kernel_shape=[kh, kw])
    return _requantize(g, acc, node, (1, -1, 1, 1))


@symbolic("quantized::linear_dynamic")
def _linear_dynamic(g, node):
    x, packed, w_scales, bias = node.args
    k = node.kwargs
    qmax = 127 if k.get("reduce_range", True) else 255
    x_value = _float32(g, g.value(x), x)
    scale, zero_point = _choose_qparams(g, x_value, g.meta(x).ndim, qmax)
    xq = g.op("QuantizeLinear", x_value, scale, zero_point)
    if qmax != 255:
        xq = g.op("Clip", xq, g.const(np.uint8(0)), g.const(np.uint8(qmax)))
    acc = g.op("MatMulInteger", xq, g.const(_int8_weight(g, packed).T), zero_point, g.const(np.int8(0)))
    w_scales = g.const(_constant(g, w_scales, "weight scale").astype(np.float64))
    multiplier = g.op("Cast", g.op("Mul", w_scales, g.op("Cast", scale, to=_DOUBLE)), to=_FLOAT)
    out = g.op("Add", g.op("Mul", g.op("Cast", acc, to=_FLOAT), multiplier),
               g.const(_constant(g, bias, "bias").astype(np.float32)))
    return g.op("Relu", out) if k.get("relu", False) else out


def _choose_qparams(g, x, ndim, qmax):
    """The kernel's ``choose_qparams`` for ``[min(x, 0), max(x, 0)]`` onto ``[0, qmax]``, in
    float64 as the kernel computes it: (float32 scale, uint8 zero point)."""
    axes = list(range(ndim))
    zero = g.const(np.float64(0))
    lo = g.op("Min", g.op("Cast", g.reduce("ReduceMin", x, axes, False), to=_DOUBLE), zero)
    hi = g.op("Max", g.op("Cast", g.reduce("ReduceMax", x, axes, False), to=_DOUBLE), zero)
    raw = g.op("Div", g.op("Sub", hi, lo), g.const(np.float64(qmax)))
    is_zero = g.op("Equal", raw, zero)
    # a range of 0 takes the scale 0.1; a tiny one is widened to 6.1e-5 about the same zero point
    smallest = g.const(np.float64(6.1e-5))
    scale = g.op("Cast", g.op("Where", is_zero, g.const(np.float64(0.1)), g.op("Max", raw, smallest)), to=_FLOAT)
    tiny = g.op("Less", raw, smallest)
    divisor = g.op("Where", tiny, g.op("Where", is_zero, g.const(np.float64(1)), raw), g.op("Cast", scale, to=_DOUBLE))
    initial = g.op("Neg", g.op("Div", lo, divisor))
    zero_point = g.op("Clip", g.op("Round", initial), zero, g.const(np.float64(qmax)))
    return scale, g.op("Cast", zero_point, to=2)  # onnx.TensorProto.UINT8


@symbolic("quantized::relu")
def _relu(g, node):
    q = node.args[0]
    return g.op("Max", g.value(q), g.const(np.asarray(node.kwargs["zero_point"], g.meta(q).dtype)))


def _dequantized(g, node, scale, zero_point):
    return g.op("DequantizeLinear", g.value(node), g.const(np.float32(scale)),
                g.const(np.asarray(zero_point, g.meta(node).dtype)))


def _quantized(g, real, scale, zero_point):
    return g.op("QuantizeLinear", real, g.const(np.float32(scale)), g.const(np.asarray(zero_point, np.uint8)))


@symbolic("quantized::add")
def _add(g, node):
    a, b = node.args
    k = node.kwargs
    total = g.op("Add", _dequantized(g, a, k["a_scale"], k["a_zero_point"]),
                 _dequantized(g, b, k["b_scale"], k["b_zero_point"]))
    if k.get("relu", False):
        total = g.op("Relu", total)
    return _quantized(g, total, k["out_scale"], k["out_zero_point"])


@symbolic("quantized::cat")
def _cat(g, node):
    k = node.kwargs
    if all(s == k["out_scale"] and z == k["out_zero_point"] for s, z in zip(k["scales"], k["zero_points"])):
        return g.op("Concat", *[g.value(a) for a in node.args], axis=k["dim"])
    parts = [_dequantized(g, a, s, z) for a, s, z in zip(node.args, k["scales"], k["zero_points"])]
    return _quantized(g, g.op("Concat", *parts, axis=k["dim"]), k["out_scale"], k["out_zero_point"])
