"""im2col and col2im of a few images as compiled loops: the cpu kernels ember-numba
registers for core's ``native::im2col_into`` and ``native::col2im_add``.

PyTorch counterpart: aten/src/ATen/native/im2col.h (``im2col`` and ``col2im``, the
loops ``slow_conv2d`` runs per image) (v2.13).

# NOTE [ A compiled im2col ]
# NumPy builds a chunk's columns by copying the strided window view of a padded copy
# of the images, and adds column gradients back with a slice-add per tap: passes over
# memory, and a padded image first. The loops below make one pass, writing zeros where
# a tap reads the padding. A column row (channel c, tap i, j) of a stride-1 convolution
# whose output is as wide as the image (a 3x3 with padding 1) is the image plane
# shifted by one flat offset, so it is one contiguous copy, then zeros at the left or
# right edge where the shift wrapped round a row; other geometries copy row by row.
# Indices are unsigned: numba wraps negative indices, and that test on every element
# kept the loops scalar (a 32->64 layer's columns at 32x32, batch 32, image by image
# into one buffer: 9.7 ms with signed indices, 2.1 with unsigned, NumPy 3.7-4.3).
# No fast-math (ember_numba/exact.py): the columns are copies and col2im adds each
# pixel's taps in the NumPy kernel's order (tap by tap), so results are bit for bit
# the NumPy kernels' (tests/plugins/numba/test_im2col.py).
"""

from ember.native.fold import COL2IM_ADD, IM2COL_INTO, col2im_add, im2col_into
from ember_numba.ahead_of_time import Loops
from ember_numba.arrays import compilable

loops = Loops("ember_numba.im2col_loops")


def overrides():
    """``[(op, cpu kernel)]``: core's im2col and col2im stubs on the cpu (NOTE [ im2col and col2im as
    dispatch stubs ] in ember/native/fold.py)."""
    return [(IM2COL_INTO, compiled_im2col_into), (COL2IM_ADD, compiled_col2im_add)]


def _sizes(images, g):
    n, C, H, W = images.shape
    return (n, C, H, W, g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, g.dh, g.dw, g.OH, g.OW)


def compiled_im2col_into(xp, images, out, geometry):
    """``native::im2col_into`` on the cpu: one compiled pass (NOTE above); other dtypes
    and layouts go to the NumPy kernel."""
    if not compilable(images, out):
        return im2col_into(xp, images, out, geometry)
    loops.im2col_loop(images.reshape(-1), out.reshape(-1), *_sizes(images, geometry))


def compiled_col2im_add(xp, columns, images, geometry):
    """``native::col2im_add`` on the cpu: one compiled pass adding onto ``images``."""
    if not compilable(images, columns):
        return col2im_add(xp, columns, images, geometry)
    loops.col2im_loop(columns.reshape(-1), images.reshape(-1), *_sizes(images, geometry))
