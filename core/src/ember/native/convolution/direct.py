"""The direct 3x3 convolution of NCHW images at stride 1: each output a sum over
(channel, kernel row, kernel column), taken in that order, with no column matrix and
no GEMM; the stride-1 input adjoint is the same convolution of the gradient with the
flipped weight, and the weight's gradient a sum of the same kind, by lanes.

PyTorch counterpart: oneDNN's direct convolution kernels, which torch's CPU
convolution runs by default (aten/src/ATen/native/mkldnn/Conv.cpp, ``_mkldnn_convolution``;
the kernels are oneDNN's ``jit_avx512_common_conv_kernel``) (v2.13).

# NOTE [ A direct 3x3 convolution ]
# im2col copies each image 9x into columns and hands them to BLAS; on one thread
# that ran at 1.06x the time of the same flops as one large sgemm, where oneDNN's
# direct kernel runs at 0.77x (bench/conv_layer.py): it never builds the columns, and
# it keeps a tile of outputs in vector registers while it reads each input row once
# per tap. The same is done here: a block of BLOCK output channels times a segment of
# SEGMENT outputs of one output row is kept in registers, and for each input channel
# c and tap (i, j) the input row segment shifted by (i, j) is multiplied by one weight
# per channel of the block and added on. Every output is so one float32 sum taken term
# by term in the order (c, i, j), then the bias added: a deterministic order that
# depends on nothing but the shapes (each output is computed whole by one code path,
# so the block and segment boundaries change nothing), and rounds like oneDNN's
# sequential accumulation (within a few times torch's own error against a float64
# result: tests/core/native/convolution/test_convolution_determinism.py).
#
# Each sum is a dispatch stub (NOTE [ Dispatch stubs ]): the NumPy kernels below, one
# multiply and one add over the whole output per (c, i, j) (per row segment and tap
# for the weight's gradient), are the readable statement of the order and far too
# slow to run (C*9 passes over the output); ember-numba compiles the register-blocked
# loops (ember_numba/direct_conv.py), which multiply and then add (no fused
# multiply-add) and so give these kernels' bits. The fixed rule (NOTE [ Choosing a
# convolution algorithm ] in algorithm.py) picks them only where compiled kernels
# serve them.

# NOTE [ The weight's gradient by lanes ]
# Each weight's gradient is a sum over the whole batch (N*OH*OW terms, 32768 on a
# 32x32 layer of batch 32): one running float32 sum that long would lose about
# sqrt(32768) ulps. Vectorized along the row, each of SEGMENT lanes keeps its own
# running sum over one image's rows and segments (OH*OW/SEGMENT terms), the lanes are
# summed by halves (8 + 8, 4 + 4, 2 + 2, 1 + 1), and the images' sums added one after
# another: a fixed order again, and a float32 error measured 25x below torch's
# (2.2e-7 relative against 5.8e-6, bench/conv_layer.py's layer against float64). The
# loops keep the 9 taps' lanes of two output channels in 18 registers, so each shifted
# input row segment is read once for 18 multiply-adds. They need rows a whole number
# of segments long (no lane may read past the row); other widths keep GEMM.
"""

from ember.dispatcher import Op
from ember.native.convolution.images import one_blas_thread
from ember.native.support.dispatch_stub import kernel_of

BLOCK = 8  # output channels per register block (ember_numba/direct_conv_loops.py)
SEGMENT = 16  # outputs of a row per register block: one AVX-512 register of float32
# Input channels from which the fixed rule runs the direct kernel: with fewer, each
# block's few terms (27 for an RGB stem) cost less than filling and emptying its
# registers, and BLAS's product of K = 27 columns won (3->64 at 32x32, batch 32, one
# thread, CPU time: 3.0 ms against 2.4; 16->16: 2.3 against 4.1).
MIN_CHANNELS = 8


def conv3x3_into(xp, x, weight, bias, out, padding):
    """Write into ``out`` (``(N, O, OH, OW)``, C-contiguous) the 3x3 stride-1
    convolution of ``x`` (``(N, C, H, W)``, any strides) zero-padded by ``padding``
    ``(ph, pw)`` with ``weight`` ``(O, C, 3, 3)``, plus ``bias`` ``(O,)``: each output's
    terms added one by one in the order (c, i, j), then the bias (NOTE above)."""
    N, C, H, W = x.shape
    ph, pw = padding
    _, _, OH, OW = out.shape
    padded = xp.zeros((N, C, H + 2 * ph, W + 2 * pw), dtype=x.dtype)
    padded[:, :, ph:ph + H, pw:pw + W] = x
    out[...] = 0
    for c in range(C):
        for i in range(3):
            for j in range(3):
                rows = padded[:, None, c, i:i + OH, j:j + OW]
                out += weight[None, :, c, i, j, None, None] * rows
    out += bias[None, :, None, None]


def conv3x3_weight(xp, x, grad, padding):
    """The weight's gradient ``(O, C, 3, 3)`` of the 3x3 stride-1 convolution of ``x``
    (``(N, C, H, W)``, any strides) zero-padded by ``padding`` whose output gradient is
    ``grad`` (``(N, O, OH, OW)``): per image, SEGMENT lanes of running sums over the
    output rows and their segments (a row's last, shorter segment leaves the last lanes
    out), summed by halves, added on image after image (NOTE [ The weight's gradient
    by lanes ])."""
    N, C, H, W = x.shape
    _, O, OH, OW = grad.shape
    ph, pw = padding
    padded = xp.zeros((N, C, H + 2 * ph, W + 2 * pw), dtype=x.dtype)
    padded[:, :, ph:ph + H, pw:pw + W] = x
    dw = xp.zeros((O, C, 3, 3), dtype=x.dtype)
    for n in range(N):
        lanes = xp.zeros((O, C, 3, 3, SEGMENT), dtype=x.dtype)
        for oh in range(OH):
            for ow in range(0, OW, SEGMENT):
                g = grad[n, :, None, oh, ow:ow + SEGMENT]  # (O, 1, SEGMENT or fewer)
                width = g.shape[-1]
                for i in range(3):
                    for j in range(3):
                        rows = padded[n, None, :, oh + i, ow + j:ow + j + width]
                        lanes[:, :, i, j, :width] += g * rows
        half = SEGMENT // 2
        while half:
            lanes = lanes[..., :half] + lanes[..., half:2 * half]
            half //= 2
        dw += lanes[..., 0]
    return dw


DIRECT_CONV3X3 = Op("native::direct_conv3x3_into", conv3x3_into)
DIRECT_CONV3X3_WEIGHT = Op("native::direct_conv3x3_weight", conv3x3_weight)


def applies(xp, g, groups, dtype, out_channels):
    """Whether the fixed rule runs the direct kernel for a convolution of geometry
    ``g`` to ``out_channels`` channels: NumPy float32 arrays, one group, MIN_CHANNELS
    input channels, a 3x3 kernel at stride 1 and dilation 1, a block of output channels
    and a row segment to fill, one BLAS thread (the kernel runs one, where the GEMM
    kernels would use all), and a compiled kernel serving the stub."""
    return (xp.__name__ == "numpy" and str(dtype) == "float32" and groups == 1 and g.N > 0 and g.C >= MIN_CHANNELS
            and (g.kh, g.kw, g.sh, g.sw, g.dh, g.dw) == (3, 3, 1, 1, 1, 1)
            and out_channels >= BLOCK and g.OW >= SEGMENT and one_blas_thread()
            and kernel_of(DIRECT_CONV3X3, xp) is not DIRECT_CONV3X3.generic)


def weight_applies(xp, g, groups, dtype, out_channels):
    """Whether the fixed rule runs the direct weight's gradient: where the direct
    forward would, on rows a whole number of segments long, and compiled."""
    return (g.OW % SEGMENT == 0 and applies(xp, g, groups, dtype, out_channels)
            and kernel_of(DIRECT_CONV3X3_WEIGHT, xp) is not DIRECT_CONV3X3_WEIGHT.generic)


def forward(xp, x, weight, g, bias=None):
    """F(x, W) + bias of an NCHW ``x``: a C-contiguous ``(N, O, OH, OW)``."""
    out = xp.empty((g.N, weight.shape[0], g.OH, g.OW), dtype=x.dtype)
    if bias is None:
        bias = xp.zeros(weight.shape[0], dtype=x.dtype)
    kernel_of(DIRECT_CONV3X3, xp)(xp, x, weight, bias.astype(x.dtype, copy=False), out, (g.ph, g.pw))
    return out


def weight_adjoint(xp, x, grad, g):
    """F(x, .)^T grad of an NCHW ``x``: the ``(O, C, 3, 3)`` weight's gradient."""
    return kernel_of(DIRECT_CONV3X3_WEIGHT, xp)(xp, x, grad, (g.ph, g.pw))
