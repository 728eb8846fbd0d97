"""The core's values-only max pooling (``aten::max_pool2d``) on channels_last float
arrays as one compiled loop over output pixels: the cpu kernel ember-numba registers
for it.

PyTorch counterpart: aten/src/ATen/native/cpu/MaxPoolKernel.cpp
(``cpu_max_pool_channels_last``) (v2.13).

# NOTE [ Channels_last max pooling, one pixel at a time ]
# The NumPy kernel (ember/native/pooling/separable_max_pool.py) runs a window as
# whole-array passes: a ``maximum`` per tap of the row pass, then per tap of the column
# pass, each over the whole map. On yolo_nano's SPPF (5x5 windows at stride 1 on (32,
# 32, 4, 4) channels_last maps, three per inference) that is ten passes and their
# temporaries, about 2.3x torch's time. torch's channels_last kernel visits one output
# pixel at a time and runs the taps of its window over the C contiguous channels, and so
# does this loop: the window is clipped to the image (no padded copy), and each tap is a
# vector ``max`` along the channels. A tap wins when it is greater or NaN, as in torch's
# kernel, so NaN propagates and equal values keep the first in scan order. Other
# layouts, dtypes, empty inputs and 1-d pooling's (N, C, 1, L) views take the NumPy
# kernel.
"""

import numpy as np

from ember.native.pooling.pooling import MAX_POOL2D_VALUES, _pool_geometry
from ember_numba.ahead_of_time import Loops

loops = Loops("ember_numba.max_pool_loops")

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def overrides():
    """``[(op, cpu kernel)]``: core's values-only max pooling on the cpu."""
    return [(MAX_POOL2D_VALUES, max_pool2d)]


def max_pool2d(xp, x, kernel_size, stride, padding, dilation, ceil_mode):
    """``aten::max_pool2d`` on the cpu: the compiled loop for channels_last float32 and
    float64 maps, ``MAX_POOL2D_VALUES.generic`` for anything else."""
    pixels = x.transpose(0, 2, 3, 1)
    if x.dtype not in FLOATS or x.flags.c_contiguous or not pixels.flags.c_contiguous or x.size == 0:
        return MAX_POOL2D_VALUES.generic(xp, x, kernel_size, stride, padding, dilation, ceil_mode)
    g = _pool_geometry(x.shape, kernel_size, stride, padding, dilation, ceil_mode)
    out = np.empty((g.N, g.OH, g.OW, g.C), dtype=x.dtype)
    if out.size:
        loops.max_pixels(pixels, out, g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, g.dh, g.dw)
    return out.transpose(0, 3, 1, 2)
