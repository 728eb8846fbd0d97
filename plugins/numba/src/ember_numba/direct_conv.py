"""The direct 3x3 convolution as compiled, register-blocked loops: the cpu kernels
ember-numba registers for core's ``native::direct_conv3x3_into`` and
``native::direct_conv3x3_weight``.

PyTorch counterpart: oneDNN's direct convolution kernels, which torch's CPU
convolution runs (aten/src/ATen/native/mkldnn/Conv.cpp) (v2.13).

# NOTE [ Register blocks ]
# The convolution's outputs are taken BLOCK output channels by SEGMENT outputs of one
# row at a time (NOTE [ A direct 3x3 convolution ] in native/convolution/direct.py),
# and the block's sums are kept in eight rows of SEGMENT floats, a0..a7: for each input
# channel and tap, one shifted row segment of the zero-bordered image is read once and
# multiplied by the eight output channels' weights. For LLVM to keep those sums in
# registers through the loops over channels and taps they must be memory it can see
# all of: rows on the stack (``stack_row``, an alloca), indexed by a loop of constant
# trip count that it unrolls, after which each row is sixteen scalars it combines into
# one vector register. numba's own arrays live on the heap, behind a call LLVM cannot
# see through, and a sum kept there is loaded and stored at every term. The generated
# code (numba's ``inspect_asm``, AVX-512 host) has the inner loop over the three taps
# of a kernel row as 3 unaligned loads of a zmm row, 24 ``vmulps`` with the weight
# broadcast from memory (``{1to16}``) and 24 ``vaddps`` into eight zmm accumulators,
# and no load or store of an accumulator inside the channel loop.
# Compiled without fast-math (ember_numba/exact.py): a multiply then an add, never a
# fused multiply-add, so every output is the NumPy kernel's sum bit for bit
# (tests/plugins/numba/test_direct_conv.py), whatever the machine.
"""

from ember.native.convolution.direct import (
    BLOCK,
    DIRECT_CONV3X3,
    DIRECT_CONV3X3_WEIGHT,
    SEGMENT,
    conv3x3_into,
    conv3x3_weight,
)
from ember_numba.ahead_of_time import Loops

loops = Loops("ember_numba.direct_conv_loops")


def overrides():
    """``[(op, cpu kernel)]``: core's direct convolution stubs."""
    return [(DIRECT_CONV3X3, compiled_conv3x3_into), (DIRECT_CONV3X3_WEIGHT, compiled_conv3x3_weight)]


def _takes(x, weight, bias, out):
    """float32 arrays, the output C-contiguous, a block of output channels and a
    segment of a row to fill (the loops' sizes, which direct_conv_loops.py repeats)."""
    return (all(a.dtype.name == "float32" for a in (x, weight, bias, out)) and out.flags.c_contiguous
            and out.shape[1] >= BLOCK and out.shape[3] >= SEGMENT and out.size > 0)


def compiled_conv3x3_into(xp, x, weight, bias, out, padding):
    """``native::direct_conv3x3_into`` on the cpu: the register-blocked loops (NOTE
    above); other dtypes and sizes go to the NumPy kernel."""
    if not _takes(x, weight, bias, out):
        return conv3x3_into(xp, x, weight, bias, out, padding)
    N, C, H, W = x.shape
    O = weight.shape[0]
    taps_by_channel = xp.ascontiguousarray(weight.transpose(1, 2, 3, 0))  # (C, 3, 3, O)
    loops.conv3x3_loop(xp.ascontiguousarray(x).reshape(-1), taps_by_channel.reshape(-1),
                       xp.ascontiguousarray(bias), out.reshape(-1), N, C, H, W, O, *padding)


def compiled_conv3x3_weight(xp, x, grad, padding):
    """``native::direct_conv3x3_weight`` on the cpu: the loops keep two output
    channels' nine taps of lanes in registers (NOTE [ The weight's gradient by lanes ]
    in ember/native/convolution/direct.py); other dtypes and sizes go to the NumPy
    kernel."""
    N, C, H, W = x.shape
    O, OW = grad.shape[1], grad.shape[3]
    if not (x.dtype.name == grad.dtype.name == "float32" and O >= 2 and OW % SEGMENT == 0 and grad.size > 0):
        return conv3x3_weight(xp, x, grad, padding)
    dw = xp.empty((O, C, 3, 3), dtype=x.dtype)
    loops.weight3x3_loop(xp.ascontiguousarray(x).reshape(-1), xp.ascontiguousarray(grad).reshape(-1),
                         dw.reshape(-1), N, C, H, W, O, *padding)
    return dw
