"""Winograd F(4x4, 3x3)'s three transforms as compiled loops, one pass over each tile:
the cpu kernels ember-numba registers for ember's ``native::winograd_input_tiles``,
``native::winograd_output_tiles`` and ``native::winograd_gradient_tiles`` ops.

PyTorch counterpart: aten/src/ATen/native/DispatchStub.h (``REGISTER_DISPATCH``: a
compiled CPU kernel registered for a stub the native code calls) (v2.13); the
transforms themselves are ember's own (torch's CPU convolution is oneDNN's direct
kernel).

# NOTE [ Compiled Winograd transforms ]
# The NumPy transforms (ember/native/convolution/winograd.py) make a pass over memory
# per step: the zero-bordered copy of the input, a strided gather of each tile column, a
# tiny (6 x 6) @ (6, everything) product, the gather of the rows, the second product;
# and on the way out two products, a transposing copy into the output's layout and a
# crop. On bench/conv_layer.py's 32->64 layer (channels_last) they took about as long as
# the 36 matrix products they feed. The loops below read each 6 x 6 tile of the input
# once, straight from the input where it lies (the zero border is a bounds test, not a
# copy), apply B^T d B with the matrices' few nonzero constants spelled out, and write
# the 36 transformed values of every channel; the output transform reads the 36 products
# of a tile and writes its 4 x 4 block into the output's own layout, cropped, with the
# bias added. Channels are the innermost loop everywhere, so LLVM turns it into SIMD
# code; an NCHW tile is first gathered into a small (6, 6, C) scratch that stays in the
# level-1 cache. The arithmetic is the NumPy kernels' up to the order of additions (the
# constants are the same small integers), so the two differ in the last bits of float32
# only. Compiled without fast-math (ember_numba/exact.py): nothing here is a reduction
# that needs reordering.
"""

import numpy as np

from ember_numba.ahead_of_time import Loops
from ember_numba.arrays import FLOATS

loops = Loops("ember_numba.winograd_loops")


def overrides():
    """``[(op, cpu kernel)]``: the three transform ops (NOTE [ The Winograd transforms as
    ops ] in ember/native/convolution/winograd.py)."""
    from ember.native.convolution import winograd

    return [(winograd.input_tiles_op, input_tiles), (winograd.output_tiles_op, output_tiles),
            (winograd.gradient_tiles_op, gradient_tiles)]


def _takes(m, *arrays):
    return m == 4 and all(a.dtype in FLOATS and a.dtype == arrays[0].dtype and a.size for a in arrays)


def _nhwc(x):
    """An (N, C, H, W) array as the (N, H, W, C) view the loops index."""
    return x.transpose(0, 2, 3, 1)


def input_tiles(xp, x, *, padding, m, tiles):
    """``native::winograd_input_tiles`` on the cpu: ``B^T d B`` of every tile of ``x``
    zero-bordered by ``padding``, as ``(36, N * th * tw, C)``."""
    from ember.native.convolution import winograd

    if not _takes(m, x):
        return winograd.input_tiles_op.generic(xp, x, padding=padding, m=m, tiles=tiles)
    N, C = x.shape[:2]
    th, tw = tiles
    v = np.empty((36, N * th * tw, C), dtype=x.dtype)
    pixels = _nhwc(x)
    nhwc = pixels.flags.c_contiguous
    loops.input_tiles_loop(pixels if nhwc else np.ascontiguousarray(x), nhwc, padding[0], padding[1], th, tw, v)
    return v


def output_tiles(xp, products, *, m, shape, channels_last):
    """``native::winograd_output_tiles`` on the cpu: ``A^T M A`` of every tile's
    ``(36, N * th * tw, O)`` products, written cropped into a new ``shape`` (N, O, OH,
    OW) array, channels_last or C-contiguous."""
    from ember.native.convolution import winograd

    if not _takes(m, products) or not products.flags.c_contiguous:
        return winograd.output_tiles_op.generic(xp, products, m=m, shape=shape, channels_last=channels_last)
    N, O, OH, OW = shape
    th, tw = winograd.tile_counts(OH, OW, m)
    y = np.empty((N, OH, OW, O) if channels_last else shape, dtype=products.dtype)
    loops.output_tiles_loop(products, th, tw, channels_last, y)
    return y.transpose(0, 3, 1, 2) if channels_last else y


def gradient_tiles(xp, grad, *, m, tiles):
    """``native::winograd_gradient_tiles`` on the cpu: ``A dY A^T`` of every 4 x 4
    block of ``grad`` (N, O, OH, OW), zeros past its edge, as ``(36, N * th * tw, O)``."""
    from ember.native.convolution import winograd

    if not _takes(m, grad):
        return winograd.gradient_tiles_op.generic(xp, grad, m=m, tiles=tiles)
    N, O = grad.shape[:2]
    th, tw = tiles
    z = np.empty((36, N * th * tw, O), dtype=grad.dtype)
    pixels = _nhwc(grad)
    nhwc = pixels.flags.c_contiguous
    loops.gradient_tiles_loop(pixels if nhwc else np.ascontiguousarray(grad), nhwc, th, tw, z)
    return z


# --- the loops (one function each: numba compiles a function per call signature, and
# a call from one compiled loop to another would need numba at import) ------------------
