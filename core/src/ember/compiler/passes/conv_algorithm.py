"""Convolution algorithms chosen by measurement: each 2-D convolution of the graph becomes
a compiled kernel (im2col, Winograd F(2x2, 3x3) or F(4x4, 3x3)), the fastest one timed on
the example input, remembered per shape.

PyTorch counterpart: torch/backends/cudnn/__init__.py (``benchmark``: cuDNN times its
algorithms per shape and caches the winner) and aten/src/ATen/native/cudnn/Conv_v7.cpp
(the per-shape cache) (v2.13). ember does the same on the CPU, at compile time.

The timing rule and its NOTE (NOTE [ Choosing a convolution algorithm by measurement ])
are in ember/native/convolution/algorithm.py, shared with eager convolutions. Here the
pass times every algorithm that applies on the example input, in the layout it will
have in the program (the caller's for a program input, pixel-major for the rest, as
the compiled kernels leave it), and caches the choice under (input shape and layout,
weight shape, stride, padding, bias, dtype, device), so a second compile measures
nothing. ``ember.compile(model, conv_algorithm=...)`` forces one algorithm instead
(tests, reproducible runs); convolutions the forced algorithm cannot run fall back to
im2col, and grouped, dilated, transposed or non-2-D convolutions, and those in half
precision (float16, bfloat16), keep eager ember's kernel; so do, under "auto",
convolutions of fewer than 2^20 multiplies. Outputs differ from eager by rounding only:
NOTE [ Winograd F(4x4, 3x3) ] gives the measured errors.
"""

from ember.compiler.passes.conv_layout import as_image
from ember.native.convolution.algorithm import SMALL, measure_fastest

ALGORITHMS = ("im2col", "winograd_2x2", "winograd_4x4")

# Half-precision types keep eager's kernel: Winograd's transforms would round in them.
_DTYPES = ("ember.float32", "ember.float64")

# (shape key) -> {"algorithm": name, "seconds": {algorithm: best time}}
_CHOICES = {}


def conv_algorithm_cache():
    """The per-shape choices measured so far in this process (a dict; ``clear()`` it to
    measure again)."""
    return _CHOICES


def choose_conv_algorithms(graph, attributes, values, device, algorithm="auto"):
    """Rewrite each eligible convolution of ``graph`` (in place) into a compiled kernel.
    ``values`` are the plan run's arrays (the example input of every node; the new
    nodes get their old node's entry, for the passes after this one); ``algorithm``
    is ``"auto"`` (measure; on the CPU only, other devices keep eager's kernel), one of
    ``ALGORITHMS``, or ``"eager"`` (change nothing). Returns one record per rewritten
    convolution: ``(node name, description of the shape, algorithm, seconds per algorithm)``."""
    if algorithm not in ("auto", "eager") + ALGORITHMS:
        raise ValueError(f"conv_algorithm must be 'auto', 'eager' or one of {ALGORITHMS}, got {algorithm!r}")
    if algorithm == "eager" or (algorithm == "auto" and device.type != "cpu"):
        return []
    workspace = {}  # shared by every kernel of the program (conv_layout.CompiledConv2d.scratch)
    records = []
    for node in list(graph.nodes):
        if not _eligible(node, attributes):
            continue
        x = values[node.args[0]]
        if node.args[0].op != "placeholder":  # inside the program it arrives pixel-major (conv_layout.py)
            x = as_image(x.transpose(2, 3, 0, 1).copy())
        weight = _numpy(attributes[node.args[1].target])
        bias = None if node.args[2] is None else _numpy(attributes[node.args[2].target])
        stride, padding = tuple(node.kwargs["stride"]), tuple(node.kwargs["padding"])
        options = _applicable(weight.shape, stride)
        if algorithm == "auto" and _multiplies(weight.shape, values[node].shape) < SMALL:
            continue  # nothing to win, and a timer cannot tell such kernels apart: eager's kernel
        if algorithm == "auto":
            key = (tuple(x.shape), str(x.dtype), _pixel_major(x), tuple(weight.shape), stride, padding,
                   bias is not None, device.type)
            if key not in _CHOICES:
                _CHOICES[key] = _measure(options, x, weight, bias, stride, padding)
            chosen, seconds = _CHOICES[key]["algorithm"], _CHOICES[key]["seconds"]
        else:
            chosen, seconds = (algorithm if algorithm in options else "im2col"), {}
        kernel = make_kernel(chosen, weight.shape, stride, padding)
        kernel.workspace = workspace
        values[_rewrite(graph, attributes, node, kernel, weight, bias)] = values[node]  # shape and dtype
        records.append((node.name, _describe(x.shape, weight.shape, stride, padding), chosen, seconds))
    graph.eliminate_dead_code()
    return records


def make_kernel(algorithm, weight_shape, stride=(1, 1), padding=(0, 0)):
    """The compiled kernel object of one algorithm for one convolution."""
    from ember.compiler.passes.im2col_conv import Im2colConv2d
    from ember.compiler.passes.winograd import WinogradConv2d

    if algorithm == "im2col":
        return Im2colConv2d(weight_shape[2:], stride, padding)
    return WinogradConv2d(padding, m=int(algorithm.split("_")[1][0]))


def _eligible(node, attributes):
    if node.op != "call_function" or getattr(node.target, "qualname", None) != "aten::convolution":
        return False
    k = node.kwargs
    weight, bias = node.args[1], node.args[2]
    if k.get("transposed") or k.get("groups") != 1 or any(d != 1 for d in k.get("dilation", (1,))):
        return False
    if getattr(weight, "op", None) != "get_attr" or (bias is not None and getattr(bias, "op", None) != "get_attr"):
        return False
    if not all(isinstance(k.get(name), (tuple, list)) and len(k[name]) == 2 for name in ("stride", "padding")):
        return False
    w = attributes[weight.target]
    return w.ndim == 4 and str(w.dtype) in _DTYPES


def _multiplies(weight_shape, out_shape):
    O, C, kh, kw = weight_shape
    return out_shape[0] * out_shape[2] * out_shape[3] * O * C * kh * kw


def _applicable(weight_shape, stride):
    if tuple(weight_shape[2:]) == (3, 3) and stride == (1, 1):
        return ALGORITHMS
    return ("im2col",)


def _measure(options, x, weight, bias, stride, padding):
    """Time each algorithm's compiled kernel on ``x`` (measure_fastest's rule)."""
    import numpy as np

    runs = {}
    for name in options:
        kernel = make_kernel(name, weight.shape, stride, padding)
        prepared, kept_bias = kernel.prepare(weight, bias)
        prepared = np.asarray(prepared, dtype=x.dtype)
        kept_bias = None if kept_bias is None else np.asarray(kept_bias, dtype=x.dtype)
        runs[name] = (lambda k=kernel, w=prepared, b=kept_bias: k.compute(np, x, w, b))
    return measure_fastest(runs)


def _rewrite(graph, attributes, node, kernel, weight, bias):
    from ember.dispatcher import _wrap

    like = attributes[node.args[1].target]
    prepared, kept_bias = kernel.prepare(weight, bias)

    def constant(array, what):
        path = f"_{kernel.algorithm}_{node.name}_{what}"
        array = array.astype(weight.dtype, copy=False)
        attributes[path] = _wrap(array, like.device) if like.device.type == "cpu" else _to_device(array, like)
        return graph.get_attr(path)

    with graph.inserting_before(node):
        w_node = constant(prepared, "weight")
        b_node = None if kept_bias is None else constant(kept_bias, "bias")
        new = graph.call_function(kernel, (node.args[0], w_node, b_node))
    node.replace_all_uses_with(new)
    graph.erase_node(node)
    return new


def _numpy(tensor):
    return tensor.detach().cpu().numpy()


def _to_device(array, like):
    import ember

    return ember.from_numpy(array).to(like.device)


def _pixel_major(x):
    return bool(x.transpose(2, 3, 0, 1).flags.c_contiguous) if x.ndim == 4 else False


def _describe(x_shape, weight_shape, stride, padding):
    O, C, kh, kw = weight_shape
    return f"{C}->{O} {kh}x{kw} s{stride[0]} p{padding[0]} on {'x'.join(map(str, x_shape))}"
