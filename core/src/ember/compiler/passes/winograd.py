"""Winograd convolution: 3x3, stride-1 convolutions computed as F(2x2, 3x3) (16 matrix
products of (out channels, in channels) @ (in channels, tiles)) or F(4x4, 3x3) (36 of
them), instead of one product with nine times the columns.

PyTorch counterpart: the Winograd kernels oneDNN/NNPACK pick for torch's CPU
convolutions (aten/src/ATen/native/mkldnn/Conv.cpp) (v2.13); these kernels are ember's
own, written with the backend's array operations.

The transforms, their NOTEs (NOTE [ Winograd F(2x2, 3x3) ], NOTE [ Winograd F(4x4,
3x3) ]) and the measured errors are in ember/native/convolution/winograd.py, shared with eager
convolutions; this file is the compiled kernel around them: pixel-major in and out
(NOTE [ Pixel-major activations in the compiled program ]), its intermediate arrays
kept between calls, the bias and the residual add inside the transforms.

# NOTE [ The compiled Winograd kernel ]
# The padded input is pixel-major, (rows, cols, N, C), which is the transforms'
# 5-D (outer, rows, cols, inner, channels) view with outer = 1: every gather copies
# whole (N, C) blocks, and the transformed tiles come out as (alpha^2, tiles * N, C),
# the products' left operands as they are; the products (alpha^2, tiles * N, O) go
# through A^T along k and l into (p, q, tiles, O), copied into the (H, W, N, O)
# output by whole (N, O) blocks. The weight transform runs once, at compile time.
# The bias rides in the products: A^T's second column is all ones, so adding b to
# the product at tile position (1, 1) adds b to every output, a pass over 1/16 (or
# 1/36) of the products instead of over the output.
"""

from ember.compiler.passes.conv_layout import CompiledConv2d, padded_pixel_major
from ember.native.convolution.winograd import MATRICES, input_tiles, output_tiles, tile_counts, winograd_weight


class WinogradConv2d(CompiledConv2d):
    """A 3x3 stride-1 convolution by F(m x m, 3x3), m = 2 or 4 (NOTE [ Winograd F(2x2,
    3x3) ], NOTE [ Winograd F(4x4, 3x3) ]); pixel-major in and out."""

    def __init__(self, padding, m=2):
        if m not in MATRICES:
            raise ValueError(f"Winograd F(m x m, 3x3) is implemented for m = 2 and 4, got {m}")
        super().__init__((1, 1), padding)
        self.m = m
        self.algorithm = f"winograd_{m}x{m}"

    def prepare(self, weight, bias):
        """``(O, C, 3, 3)`` weight -> ``(U, bias)``."""
        return winograd_weight(weight, self.m), bias

    def compute(self, xp, x, u, bias, residual=None):
        m = self.m
        alpha = m + 2
        N, C, H, W = x.shape
        O = u.shape[2]
        ph, pw = self.padding
        OH, OW = H + 2 * ph - 2, W + 2 * pw - 2
        th, tw = tile_counts(OH, OW, m)
        d = padded_pixel_major(self, xp, x, m * th + 2, m * tw + 2)
        v = input_tiles(xp, d[None], m, th, tw, buffer=self._buffer)  # (alpha^2, tiles * N, C)
        products = self.scratch(xp, "products", (alpha * alpha, th * tw * N, O), x.dtype)
        xp.matmul(v, u, out=products)
        if bias is not None:  # A^T's column 1 is all ones: b at tile position (1, 1) reaches every output
            products[alpha + 1] += bias
        whole = not (OH % m or OW % m)  # no rows or columns of the last tiles to crop
        add = residual if whole and "add" in self.epilogue else None
        y = self._output_transform(xp, products, th, tw, N, O, add)
        return self.finish(xp, y if whole else y[:OH, :OW], residual, added=add is not None)

    def _buffer(self, xp, role, shape, dtype):
        return self.scratch(xp, role, shape, dtype)

    def _output_transform(self, xp, products, th, tw, N, O, residual=None):
        """A^T M A for every tile, written as the pixel-major ``(m * th, m * tw, N, O)``,
        plus ``residual`` (an (N, O, H, W) array) if given, in the same pass."""
        m = self.m
        full = output_tiles(xp, products, m, buffer=self._buffer)  # (p, q, tiles, O)
        out = xp.empty((m * th, m * tw, N, O), products.dtype)
        blocks = full.reshape(m, m, th, tw, N * O).transpose(2, 0, 3, 1, 4)  # (t, p, s, q, N * O)
        if residual is None:
            out.reshape(th, m, tw, m, N * O)[...] = blocks
        else:  # a view when the residual is pixel-major, as the program's activations are
            xp.add(blocks, residual.transpose(2, 3, 0, 1).reshape(th, m, tw, m, N * O),
                   out=out.reshape(th, m, tw, m, N * O))
        return out
