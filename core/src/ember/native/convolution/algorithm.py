"""Which kernel runs each of a convolution's three products (the output, the input's
gradient, the weight's gradient): a fixed rule by shape and layout by default, a
measurement per shape where ``ember.backends.cpu.benchmark`` asks for one.

PyTorch counterpart: aten/src/ATen/native/Convolution.cpp (``_select_conv_backend``:
a fixed rule by device, layout and shape) and, for the measuring, torch/backends/cudnn
(``benchmark``) with aten/src/ATen/native/cudnn/Conv_v7.cpp (its per-shape cache)
(v2.13). The reference kernels, im2col and one GEMM per group, are in
ember/native/convolution/convolution.py; this module only picks among them and the
algorithms beside them (channels_last.py, direct.py, images.py, phases.py, winograd.py).

# NOTE [ Choosing a convolution algorithm ]
# torch's CPU convolution is a fixed choice per case (oneDNN's direct kernel, or
# im2col + GEMM with ``torch.backends.mkldnn.enabled = False``), so the same program
# gives the same bits in every process. ember's eager convolutions keep that promise:
# ``choose`` applies a fixed rule by shape, layout, dtype, BLAS's thread count (read,
# not timed) and which compiled kernels are installed, and every kernel it may pick
# sums the same C*kh*kw terms per output as the reference: a GEMM, which rounds as
# torch's im2col does, or the direct kernel's sum in (c, i, j) order, which rounds as
# oneDNN's does. For a 2-D convolution on NumPy arrays, with
# ``ember.backends.mkldnn.enabled`` True (the default), the first row that applies:
#
#   layout     product    kernel                                 where
#   ch._last   all three  a few images at a time                 1 BLAS thread, L >= 256
#                         (channels_last_images.py)              and 2 chunks or more
#                         NHWC window rows (channels_last.py)    otherwise
#   NCHW       output     the direct 3x3 kernel (direct.py)      float32, 3x3, stride 1,
#                                                                C, O >= 8, OW >= 16,
#                                                                1 BLAS thread
#                         one product per image (1x1)            1x1, stride 1, unpadded
#                         NHWC gather, copied back to NCHW       H*W <= 256, C >= 16
#                         a few images at a time (images.py)     1 BLAS thread, L >= 256
#              input's    the direct 3x3 kernel on the flipped   as the output's, for
#              gradient   weight ("full" correlation)            the correlation's sizes
#                         the flipped-kernel "full" correlation  stride 1, O <= C
#                         by phases (phases.py)                  stride > 1
#                         a few images at a time (images.py)     1 BLAS thread, L >= 256
#              weight's   the direct 3x3 kernel, by lanes        as the output's, and
#              gradient                                          OW a multiple of 16
#                         a few images at a time (images.py)     1 BLAS thread, L >= 256
#   any        any        the reference (convolution.py)         otherwise
#
# (L = OH*OW, the outputs per image. The direct kernels need a plugin's compiled
# kernels, as ember-numba registers. Every NCHW alternative needs one group but the
# full correlation, whose images version does too, and so do channels_last's chunks;
# a transposed convolution takes channels_last's whole-batch kernels or the
# reference.) With ``ember.backends.mkldnn.enabled = False`` every NCHW product runs
# the reference (the plain path, as that flag sends torch's to im2col), channels_last
# ones their NHWC rows for the whole batch.
#
# Winograd F(4x4, 3x3) (winograd.py) is faster on some 3x3 layers but rounds about 30x
# worse than torch (about 1e-5 relative in float32, against 3e-7), so eager ember uses
# it only where asked: ``ember.compile`` measures it (compiler/passes/conv_algorithm.py)
# and ``ember.backends.cpu.benchmark = True`` lets an eager convolution time it against
# the fixed rule's kernel at the first call of each shape (NOTE [ Choosing a convolution
# algorithm by measurement ]). What a measurement picks depends on the machine's load,
# so ``ember.use_deterministic_algorithms(True)`` turns that off (the fixed rule runs).
#
# NOTE [ Choosing a convolution algorithm by measurement ]
# Which algorithm wins depends on the shape, the BLAS and the machine: Winograd saves
# multiplies but its products are smaller ((tiles, C) @ (C, O), 16 or 36 of them, where
# the direct convolution does one with nine times the columns), its transforms cost
# passes over memory, and F(4x4)'s weights are 4x larger than the direct ones. Small
# BLAS products run far below peak, so the count of multiplies alone mispredicts. So,
# like cuDNN's benchmark mode and TensorRT's builder, ``measure_fastest`` times every
# algorithm that applies (one untimed warm-up call, then one timed call after which
# one more than twice the fastest is dropped, then the best of three calls, of up to
# six while the two fastest are within 10% of each other, taken in turns so that a
# burst of load hits every algorithm alike), and the choice is cached under the shape,
# so a model of many equal layers is measured once per distinct layer. Convolutions of
# fewer than 2^20 multiplies are not measured: there is nothing to win, and timing
# microsecond kernels measures the timer. ``ember.compile`` measures at compile time on
# the example input (conv_algorithm.py there). Eager ember, with ``benchmark`` on,
# measures on the first call of a shape, for each of the three products apart, in
# channels_last, and in NCHW where compiled transforms serve it (EAGER_LAYOUTS says
# why), and leaves the fixed rule's kernel only for one at least MARGIN faster.
"""

import time
from functools import partial

from ember import deterministic
from ember.backends import cpu, mkldnn
from ember.memory_format import contiguous_array
from ember.native.convolution import channels_last as nhwc
from ember.native.convolution import channels_last_images as nhwc_images
from ember.native.convolution import columns as kept_columns
from ember.native.convolution import direct, images, phases, winograd

ROLES = ("forward", "input_adjoint", "weight_adjoint")

# --- the fixed rule (NOTE [ Choosing a convolution algorithm ]) ---------------------


def choose(role, references, xp, operands, weight, g, groups, channels_last, transposed=False):
    """The kernel for one product (``role``, one of ROLES) of a 2-D convolution:
    ``kernel(xp, operands, weight, g, groups)``. ``references`` maps each role to the
    reference kernel (convolution.py), which runs where nothing else applies. By the
    fixed rule; by measurement where ``ember.backends.cpu.benchmark`` is on and
    ``ember.use_deterministic_algorithms`` off."""
    kernel = fixed_rule(role, references, xp, g, groups, weight.shape[0], channels_last, transposed,
                        weight.dtype)
    if transposed or not _benchmarking():
        return kernel
    return _measured(role, kernel, xp, operands, weight, g, groups, channels_last)


def fixed_rule(role, references, xp, g, groups, out_channels, channels_last, transposed=False, dtype=None):
    """The fixed rule's kernel for ``role`` (the table in NOTE [ Choosing a convolution
    algorithm ]): it reads shapes, the layout, the dtype, the flag, BLAS's thread count
    and whether a compiled direct kernel is registered, never a clock."""
    if channels_last:
        if mkldnn.enabled and not transposed and nhwc_images.applies(xp, g, groups):
            return CHANNELS_LAST_IMAGES[role]
        return CHANNELS_LAST[role]
    if transposed or not mkldnn.enabled:
        return references[role]
    if role == "forward":
        return _nchw_forward(references, xp, g, groups, out_channels, dtype)
    if role == "input_adjoint":
        return _nchw_input_adjoint(references, xp, g, groups, out_channels, dtype)
    if direct.weight_applies(xp, g, groups, dtype, out_channels):
        return _direct_weight_adjoint
    return _images_weight_adjoint if images.applies(xp, g, groups) else references[role]


def _nchw_forward(references, xp, g, groups, out_channels, dtype):
    if direct.applies(xp, g, groups, dtype, out_channels):
        return _direct_forward
    if _pointwise(g, groups):
        return _pointwise_forward
    if _gathers_in_nhwc(xp, g, groups):
        return _gathered_forward
    if images.applies(xp, g, groups):
        return _images_forward
    return references["forward"]


def _nchw_input_adjoint(references, xp, g, groups, out_channels, dtype):
    # NOTE [ The input adjoint at stride 1 ]. In NCHW it gathers the O-channel
    # gradient where col2im adds C-channel columns: measured to win only when O <= C
    # (32->64 at 32x32: 265 ms against 229; 64->64 at 16x16: 93 against 101); the
    # direct kernel, which gathers nothing, wins either way.
    full = nhwc.full_correlation(g, (g.N, out_channels, g.OH, g.OW))
    if full is not None and direct.applies(xp, full, groups, dtype, g.C):
        return _direct_input_adjoint
    if full is not None and out_channels <= g.C:
        if images.applies(xp, full, groups):
            return _full_correlation_by_images
        return partial(_full_correlation, references["forward"])
    if groups == 1 and (g.sh > 1 or g.sw > 1):
        return _phases_input_adjoint
    if images.applies(xp, g, groups):
        return _images_input_adjoint
    return references["input_adjoint"]


# --- the kernels beside the reference, one signature: (xp, operands, weight, g, groups)
# operands: (x, bias) for the output, the output gradient's Rows (convolution.py) for
# the input's gradient, (x, rows) for the weight's gradient.


def _channels_last_forward(xp, operands, weight, g, groups):
    x, bias = operands
    return _add_bias(nhwc.forward(xp, x, weight, g, groups), bias)


def _channels_last_input_adjoint(xp, rows, weight, g, groups):
    return nhwc.input_adjoint(xp, rows.grad, weight, g, groups)


def _channels_last_weight_adjoint(xp, operands, weight, g, groups):
    x, rows = operands
    return nhwc.weight_adjoint(xp, x, nhwc.output_rows(rows.grad, groups), weight.shape, g, groups)


CHANNELS_LAST = {"forward": _channels_last_forward, "input_adjoint": _channels_last_input_adjoint,
                 "weight_adjoint": _channels_last_weight_adjoint}


def _channels_last_images_forward(xp, operands, weight, g, groups):
    x, bias = operands
    return nhwc_images.forward(xp, x, weight, g, bias)  # NOTE [ channels_last products a few images at a time ]


def _channels_last_images_input_adjoint(xp, rows, weight, g, groups):
    return nhwc_images.input_adjoint(xp, rows.grad, weight, g)


def _channels_last_images_weight_adjoint(xp, operands, weight, g, groups):
    x, rows = operands
    return nhwc_images.weight_adjoint(xp, x, rows.grad, weight.shape, g)


CHANNELS_LAST_IMAGES = {"forward": _channels_last_images_forward,
                        "input_adjoint": _channels_last_images_input_adjoint,
                        "weight_adjoint": _channels_last_images_weight_adjoint}


def _pointwise(g, groups):
    return groups == 1 and (g.kh, g.kw, g.sh, g.sw, g.ph, g.pw) == (1, 1, 1, 1, 0, 0)


# NOTE [ The 1x1 convolution in NCHW ]
# A 1x1 convolution at stride 1 without padding is W (O, C) times each image's pixels
# (C, H*W), and that product is already the image's (O, H*W) output. So it runs as one
# product per image, reading the input where it lies and writing NCHW directly, where
# im2col would copy the input to (C, N*H*W) and the output back from (O, N*H*W). Small
# per-image products cost BLAS nothing extra here (NOTE [ One product per group ] is
# about large ones under threads): on yolo_nano's 1x1 layers, one thread, this took
# 0.13-0.34 ms per layer where im2col took 0.25-2.2 ms (torch 0.14-0.49), and at two
# threads the same, where im2col's 16->16 at 32x32 took 16 ms.


def _pointwise_forward(xp, operands, weight, g, groups):
    """A 1x1, stride-1, unpadded, ungrouped convolution of NCHW ``x``."""
    x, bias = operands
    N, C, H, W = x.shape
    rows = xp.matmul(weight.reshape(weight.shape[0], C), x.reshape(N, C, H * W))
    return _add_bias(rows.reshape(N, weight.shape[0], H, W), bias)


# NOTE [ Small NCHW maps gather in NHWC ]
# NCHW im2col copies each window's rows, OW values at a time: on a detector's 8x8 and
# 4x4 maps that copy is mostly per-run overhead, and it cost as much as the product
# (32x64x8x8 -> 64: 1.4 ms against 2.2). The NHWC gather copies kw*C contiguous
# values per tap and row, and transposes the input into its padded plane on the way,
# so an NCHW forward on a small map runs the channels_last kernel and makes one
# transposing copy of the result back to NCHW. yolo_nano's fourteen 3x3 layers on
# inputs of 16x16 and less (batch 32, one thread) took 18.8 ms this way against
# 29.2 ms (torch 19.3). On 32x32 inputs the transposing copy of the input lost
# (32 -> 64 at stride 2: 20.2 against 13.5 ms), and so did 3 input channels (2x).
# In training, interleaved A/B: bench/cnn_step.py 0.94x the time, the ResNet-18 step
# 1.00x. The K order of the product (taps, then channels) differs from torch's im2col,
# so results differ in the last bits (the same bits in every process):
# ``ember.backends.mkldnn.enabled = False`` keeps NCHW im2col (torch's order).
# Measured on NumPy only: CuPy arrays keep NCHW im2col.
NHWC_GATHER_MAX_PLANE = 256
NHWC_GATHER_MIN_CHANNELS = 16


def _gathers_in_nhwc(xp, g, groups):
    return (xp.__name__ == "numpy" and groups == 1 and g.H * g.W <= NHWC_GATHER_MAX_PLANE
            and g.C >= NHWC_GATHER_MIN_CHANNELS)


def _gathered_forward(xp, operands, weight, g, groups):
    x, bias = operands
    y = nhwc.forward(xp, x, weight, g, groups)
    # Its NHWC rows are not kept for NCHW's weight gradient: kept, ResNet-18's NCHW
    # step ran 4-9% slower in CPU time (interleaved A/B, both orders), without them
    # 4% faster than keeping nothing.
    kept_columns.withdraw()
    return _add_bias(contiguous_array(xp, y), bias)


def _images_forward(xp, operands, weight, g, groups):
    x, bias = operands
    return images.forward(xp, x, weight, g, bias)  # NOTE [ NCHW products one image at a time ]


def _direct_forward(xp, operands, weight, g, groups):
    x, bias = operands
    return direct.forward(xp, x, weight, g, bias)  # NOTE [ A direct 3x3 convolution ]


def _direct_input_adjoint(xp, rows, weight, g, groups):
    full = nhwc.full_correlation(g, rows.shape)
    return direct.forward(xp, rows.grad, nhwc.flipped_weight(weight, groups), full)


def _direct_weight_adjoint(xp, operands, weight, g, groups):
    x, rows = operands
    return direct.weight_adjoint(xp, x, rows.grad, g)


def _full_correlation_by_images(xp, rows, weight, g, groups):
    full = nhwc.full_correlation(g, rows.shape)
    return images.forward(xp, rows.grad, nhwc.flipped_weight(weight, groups), full)


def _full_correlation(reference_forward, xp, rows, weight, g, groups):
    full = nhwc.full_correlation(g, rows.shape)
    return reference_forward(xp, (rows.grad, None), nhwc.flipped_weight(weight, groups), full, groups)


def _phases_input_adjoint(xp, rows, weight, g, groups):
    return phases.input_adjoint_by_phases(xp, rows.grad, weight, g)


def _images_input_adjoint(xp, rows, weight, g, groups):
    return images.input_adjoint(xp, rows.grad, weight, g)


def _images_weight_adjoint(xp, operands, weight, g, groups):
    x, rows = operands
    return images.weight_adjoint(xp, x, rows.grad, weight.shape, g)


def _add_bias(y, bias):
    if bias is not None:
        y += bias.reshape((1, -1) + (1,) * (y.ndim - 2))
    return y


# --- measuring, opt-in (NOTE [ Choosing a convolution algorithm by measurement ]) ---

# Convolutions of fewer multiplies than this are not measured: they keep the fixed rule.
SMALL = 1 << 20

# An eager convolution leaves the fixed rule's kernel (torch-like rounding) only for an
# algorithm measured at least this much faster. The first-call timing flatters
# Winograd: on the 32->64 NCHW layer of bench/conv_layer.py it measured F(4x4)'s
# forward 10% faster, and the training step then ran 6% slower with it (interleaved
# A/B, loaded machine).
MARGIN = 0.10

# (role, shapes, layout, dtype, ...) -> {"algorithm": name, "seconds": {algorithm: best time}}
_EAGER_CHOICES = {}

# The algorithms a measuring eager convolution tries besides the fixed rule's kernel
# (named "im2col", as ember.compile names it), per dtype. F(2x2) is left out: measured
# on conv_layer's 32->64 and ResNet-18's 3x3 layers, NCHW and channels_last, it never
# beat both im2col and F(4x4), and timing it made a first training step longer
# (ember.compile still measures it).
EAGER_WINOGRAD = {"float32": ("winograd_4x4",), "float64": ("winograd_4x4",)}

# The layouts whose eager convolutions may measure Winograd with NumPy's transforms.
# NCHW is left out, by interleaved A/B in one process on a loaded 2-core machine: in
# channels_last every run gained 14-25% (conv_layer 1.18-1.51x torch against
# 1.51-1.90x), in NCHW the results split (conv_layer slower in 5 of 6 runs; the
# ResNet-18 step 2.6% slower over 15 rounds at load 5, 8% faster over 9 at load 4):
# NumPy's NCHW transforms transpose what channels_last copies in whole runs of
# channels. Compiled transforms (ember-numba, NOTE [ Compiled Winograd transforms ])
# fold those transposes into their loops, and with them NCHW is measured too
# (``_measured_layout``). Add "contiguous" to measure NCHW convolutions with NumPy's
# transforms as well.
EAGER_LAYOUTS = ("channels_last",)


def _benchmarking():
    """Whether eager convolutions measure: ``ember.backends.cpu.benchmark`` on and
    ``ember.use_deterministic_algorithms`` off."""
    return cpu.benchmark and not deterministic.are_deterministic_algorithms_enabled()


def eager_options(xp, dtype, weight_shape, geometry, groups, winograd_applies=True, channels_last=False):
    """The algorithms a measuring eager convolution chooses from: the fixed rule's
    kernel ("im2col") alone, unless ``ember.backends.mkldnn.enabled``, the layout is
    measured, the array is a NumPy float32/float64 one, Winograd applies (3x3, stride 1,
    dilation 1, one group) and the convolution makes at least ``SMALL`` multiplies."""
    g = geometry
    if g.N * g.OH * g.OW * weight_shape[0] * weight_shape[1] * 9 < SMALL:
        return ("im2col",)  # first: the cheapest test, and the one every tiny convolution stops at
    layout = "channels_last" if channels_last else "contiguous"
    if not (mkldnn.enabled and _measured_layout(xp, layout) and winograd_applies and xp.__name__ == "numpy"
            and str(dtype) in EAGER_WINOGRAD and winograd.applies(weight_shape, (g.sh, g.sw), (g.dh, g.dw), groups)):
        return ("im2col",)
    return ("im2col",) + EAGER_WINOGRAD[str(dtype)]


def _measured_layout(xp, layout):
    """Whether eager convolutions in ``layout`` measure: the layouts of
    ``EAGER_LAYOUTS``, and NCHW too where compiled transforms fold its transposes."""
    return layout in EAGER_LAYOUTS or (layout == "contiguous" and winograd.compiled_transforms(xp))


def _measured(role, kernel, xp, operands, weight, g, groups, channels_last):
    """``kernel`` (the fixed rule's), or a Winograd kernel where one applies and was
    measured at least MARGIN faster at this shape's first call (then cached)."""
    image = operands[0] if isinstance(operands, tuple) else operands
    applies = _winograd_applies(role, g)
    options = eager_options(xp, image.dtype, weight.shape, g, groups, applies,
                            channels_last)
    if len(options) == 1:
        return kernel
    key = (role, image.shape, str(image.dtype), channels_last, weight.shape,
           (g.ph, g.pw))
    candidates = {"im2col": kernel}
    for name in options[1:]:
        m = winograd.tile_size(name)
        candidates[name] = partial(WINOGRAD[role], m, channels_last)

    def make_runs():
        arguments = (xp, operands, weight, g, groups)
        return {name: partial(run, *arguments) for name, run in candidates.items()}

    return candidates[measured_choice(key, make_runs)]


def _winograd_applies(role, g):
    """Whether Winograd can run this product: the input's gradient needs the stride-1
    "full" correlation (NOTE [ The input adjoint at stride 1 ])."""
    if role == "input_adjoint":
        return g.ph <= g.dh * (g.kh - 1) and g.pw <= g.dw * (g.kw - 1)
    return True


def _winograd_forward(m, channels_last, xp, operands, weight, g, groups):
    x, bias = operands
    y = winograd.conv2d(xp, x, winograd.winograd_weight(weight, m), (g.ph, g.pw), m, channels_last)
    return _add_bias(y, bias)


def _winograd_input_adjoint(m, channels_last, xp, rows, weight, g, groups):
    full = nhwc.full_correlation(g, rows.shape)
    flipped = winograd.winograd_weight(nhwc.flipped_weight(weight, groups), m)
    return winograd.conv2d(xp, rows.grad, flipped, (full.ph, full.pw), m, channels_last)


def _winograd_weight_adjoint(m, channels_last, xp, operands, weight, g, groups):
    x, rows = operands
    return winograd.weight_grad(xp, x, rows.grad, (g.ph, g.pw), m, channels_last)


WINOGRAD = {"forward": _winograd_forward, "input_adjoint": _winograd_input_adjoint,
            "weight_adjoint": _winograd_weight_adjoint}


def measure_fastest(runs, repeats=3, most=6, margin=0.1, prune=2.0):
    """``{"algorithm": fastest name, "seconds": {name: best time}}`` for ``runs``, a dict
    of name -> callable: one untimed warm-up call each (it makes any scratch buffers),
    one timed call each (a candidate ``prune`` times slower than the fastest is timed no
    further), then the best of ``repeats`` calls, taken in turns; while the two fastest
    are within ``margin`` of each other, more turns, up to ``most``."""
    if len(runs) == 1:
        return {"algorithm": next(iter(runs)), "seconds": {}}
    # The warm-up is not compared: its page faults on fresh scratch made the compiler's
    # F(4x4) on 64->64 at 32x32 look 5x slower than im2col (204 ms against 40 steady).
    for run in runs.values():
        run()
    best = {name: _seconds(run) for name, run in runs.items()}
    fastest = min(best.values())
    timed = {name: run for name, run in runs.items() if best[name] <= prune * fastest}
    for turn in range(most):
        for name, run in timed.items():
            best[name] = min(best[name], _seconds(run))
        if len(timed) == 1:
            break
        first, second = sorted(best[name] for name in timed)[:2]
        if turn + 1 >= repeats and second > first * (1 + margin):
            break
    return {"algorithm": min(best, key=best.get), "seconds": best}


def _seconds(run):
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def eager_algorithm_cache():
    """Measuring eager convolutions' per-shape choices so far in this process (a dict;
    ``clear()`` it to measure again). Empty unless ``ember.backends.cpu.benchmark``."""
    return _EAGER_CHOICES


# NOTE [ The weight's gradient follows the forward ]
# Each forward keeps, for the weight's gradient, what its own algorithm will need
# again: im2col its columns (columns.py), Winograd its input tiles (NOTE [ The
# forward's tiles, kept for the weight's gradient ] in winograd.py). A weight gradient
# by the other algorithm builds its operand again, a cost the three products' separate
# measurements do not see: on bench/conv_layer.py's NCHW layer, where the two measured
# within 1-15% of each other product by product, the mixes they chose (a Winograd
# forward with an im2col weight gradient, or the reverse) ran the step 12-30% slower
# than either algorithm throughout (1.34 and 1.61x torch against 1.20 and 1.24x for
# im2col alone, same processes, load 3.6-4). So the weight's gradient takes the
# algorithm its forward was measured to, where that forward was measured; the input's
# gradient, which reads nothing kept, is measured on its own.


def measured_choice(key, make_runs):
    """The cached algorithm for ``key``, measured on first use over ``make_runs()``
    (name -> callable, im2col among them): the fastest, if ``MARGIN`` faster than
    im2col, else im2col; a weight's gradient takes its forward's algorithm where that
    was measured (NOTE [ The weight's gradient follows the forward ])."""
    entry = _EAGER_CHOICES.get(key)
    forward = _EAGER_CHOICES.get(("forward",) + key[1:]) if entry is None and key[0] == "weight_adjoint" else None
    if forward is not None:
        entry = _EAGER_CHOICES[key] = {"algorithm": forward["algorithm"], "seconds": {}}
    if entry is None:
        entry = measure_fastest(make_runs())
        seconds = entry["seconds"]
        if seconds and seconds[entry["algorithm"]] > (1 - MARGIN) * seconds["im2col"]:
            entry["algorithm"] = "im2col"
        _EAGER_CHOICES[key] = entry
    return entry["algorithm"]
