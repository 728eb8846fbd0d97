"""The NHWC gather of window rows and the NHWC col2im as compiled loops: the cpu
kernels ember-numba registers for core's ``native::nhwc_rows_into`` and
``native::nhwc_col2im_add`` (ember/native/convolution/channels_last.py).

PyTorch counterpart: aten/src/ATen/native/im2col.h (``im2col`` and ``col2im`` with
``is_channels_last``, the loops ``slow_conv2d`` runs on channels_last images) (v2.13).

# NOTE [ A compiled NHWC im2col ]
# NumPy gathers the rows by copying a strided window view of a padded copy of the
# image, and adds the window gradients back with one slice-add per tap: kh*kw passes
# over the image, each reading a strided (n, OH, OW, C) block. The loops below make
# one pass: a window row is kh runs of kw*C/g values, each run one contiguous copy
# when its taps read inside the image (dilation 1), zeros where they read padding.
# col2im walks the taps outermost, as the NumPy kernel does, so each pixel's taps
# are added in the same order. Indices are unsigned (numba wraps negative indices,
# and that test kept the loops scalar: NOTE [ A compiled im2col ] in im2col.py).
# No fast-math (ember_numba/exact.py): the results are the NumPy kernels' bit for bit
# (tests/plugins/numba/test_nhwc_im2col.py).
# The gather also gets images that are not NHWC-dense: an NCHW map (an NCHW
# convolution on a small map gathers in NHWC) and the output gradient of the stride-1
# input adjoint, NCHW or one value broadcast (the gradient of a sum). Those are copied
# to NHWC first, in one NumPy pass, the transposing pass the NumPy kernel makes into
# its padded plane anyway; the loop then replaces its strided window copy (a 1x4x8x8
# channels_last forward+backward after a sum 3-6% faster; a 32x64x16x16 NCHW stride-2
# gather 0.86-1.08 ms -> 0.78-0.80). Reading the image through its strides in the
# loop lost: channels read H*W apart, or one value read per element, where NumPy's
# copy runs vectorised (NCHW 32x64x32x32: 58 ms against NumPy's 14).
"""

from ember.native.convolution.channels_last import (
    NHWC_COL2IM_ADD,
    NHWC_ROWS_INTO,
    nhwc_col2im_add,
    nhwc_rows_into,
)
from ember_numba.ahead_of_time import Loops
from ember_numba.arrays import compilable

loops = Loops("ember_numba.nhwc_im2col_loops")


def overrides():
    """``[(op, cpu kernel)]``: core's NHWC gather and col2im stubs on the cpu (NOTE [ The NHWC gather and
    col2im as dispatch stubs ] in ember/native/convolution/channels_last.py)."""
    return [(NHWC_ROWS_INTO, compiled_nhwc_rows_into), (NHWC_COL2IM_ADD, compiled_nhwc_col2im_add)]


def _sizes(n, g, groups):
    return (n, g.H, g.W, g.C, groups, g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, g.dh, g.dw, g.OH, g.OW)


def compiled_nhwc_rows_into(xp, x, rows, g, groups):
    """``native::nhwc_rows_into`` on the cpu: one compiled pass (NOTE above); other
    dtypes go to the NumPy kernel."""
    if not compilable(rows) or x.dtype != rows.dtype:
        return nhwc_rows_into(xp, x, rows, g, groups)
    nhwc = x.transpose(0, 2, 3, 1)
    if not (nhwc.flags.c_contiguous and nhwc.flags.writeable):  # NOTE above: copied to NHWC first
        nhwc = xp.ascontiguousarray(nhwc)
    loops.nhwc_rows_loop(nhwc.reshape(-1), rows.reshape(-1), *_sizes(x.shape[0], g, groups))


def compiled_nhwc_col2im_add(xp, window_grads, image, g, groups):
    """``native::nhwc_col2im_add`` on the cpu: one compiled pass adding onto ``image``."""
    if not compilable(image, window_grads):
        return nhwc_col2im_add(xp, window_grads, image, g, groups)
    loops.nhwc_col2im_loop(window_grads.reshape(-1), image.reshape(-1), *_sizes(image.shape[0], g, groups))
