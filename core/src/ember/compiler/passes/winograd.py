"""Winograd convolution: 3x3, stride-1 convolutions computed as F(2x2, 3x3) (16 matrix
products of (out channels, in channels) @ (in channels, tiles)) or F(4x4, 3x3) (36 of
them), instead of one product with nine times the columns.

PyTorch counterpart: the Winograd kernels oneDNN/NNPACK pick for torch's CPU
convolutions (aten/src/ATen/native/mkldnn/Conv.cpp) (v2.13); these kernels are ember's
own, written with the backend's array operations.

# NOTE [ Winograd F(2x2, 3x3) ]
# Every 2x2 block of outputs is read from a 4x4 tile of the padded input d:
#     Y = A^T [ (G g G^T) * (B^T d B) ] A
# with G (4x3), B^T (4x4), A^T (2x4) Lavin and Gray's small matrices. U = G g G^T is
# computed once per weight (compile time); V = B^T d B is additions only; the product
# `*` over the 16 tile positions, summed over input channels, is 16 matrix products
# (O, C) @ (C, tiles). That is 16 multiplies per 4 outputs per channel pair instead of
# 36: 2.25x fewer, for additions that are cheap beside them.

# NOTE [ Winograd F(4x4, 3x3) ]
# The same identity with 6x6 input tiles and 4x4 output blocks (interpolation points
# 0, 1, -1, 2, -2 and infinity): 36 products (O, C) @ (C, tiles) give 16 outputs per
# channel pair, 36 multiplies where the direct convolution does 144, 4x fewer. The
# price is in the transforms' constants (up to 8 in A^T, fractions like 1/24 in G):
# rounding grows with them. Measured in float32 against a float64 reference (tests/
# core/compiler/test_conv_algorithms.py, ResNet-sized layers): F(2x2) about 3e-7 and
# F(4x4) about 1e-6 of the output's largest magnitude, the direct product about 2e-7;
# against eager ember's float32 convolution, F(4x4) differs by about 1e-6 of the
# largest magnitude, the order oneDNN's float32 Winograd kernels reach. In float64 all
# three agree with the reference to about 1e-15.
#
# How the transforms are computed: all three are separable (B^T d B is B^T along the
# rows of the tile, then along its columns), and each direction is ONE matrix product
# of a tiny matrix with a long one: the tiles' rows are gathered (a strided view of
# the zero-padded, channel-major input, copied once) into (alpha, everything else), and
# B^T (alpha x alpha) @ that is a BLAS call over the whole batch. The weight transform
# runs once, in float64, and is rounded to the working dtype at the end. The bias rides
# in the product: A^T's second column is all ones, so adding b to the product at tile
# position (1, 1) adds b to every output, a pass over 1/16 (or 1/36) of the products
# instead of over the output. The output transform writes the (C, N, H, W) channel-major
# image (NOTE [ Channel-major activations in the compiled program ]).
"""

import numpy as np

from ember.compiler.passes.conv_layout import CompiledConv2d, as_image, padded_channel_major

# F(m, 3) for m = 2 and 4: (B^T, G, A^T).
_MATRICES = {
    2: (np.array([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]], dtype=np.float64),
        np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]], dtype=np.float64),
        np.array([[1, 1, 1, 0], [0, 1, -1, -1]], dtype=np.float64)),
    4: (np.array([[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0], [0, -2, -1, 2, 1, 0],
                  [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]], dtype=np.float64),
        np.array([[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6], [1 / 24, 1 / 12, 1 / 6],
                  [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]], dtype=np.float64),
        np.array([[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]],
                 dtype=np.float64)),
}


def winograd_weight(weight, m=2):
    """``U = G g G^T`` as ``(alpha * alpha, O, C)`` from an ``(O, C, 3, 3)`` array,
    computed in float64 and rounded once; position ``l * alpha + k`` holds row k and
    column l of the transformed tile (the order the input transform produces)."""
    g = _MATRICES[m][1]
    u = np.einsum("ka,ocab,lb->lkoc", g, np.asarray(weight, dtype=np.float64), g)
    alpha = m + 2
    return np.ascontiguousarray(u.reshape(alpha * alpha, weight.shape[0], weight.shape[1]).astype(weight.dtype))


class WinogradConv2d(CompiledConv2d):
    """A 3x3 stride-1 convolution by F(m x m, 3x3), m = 2 or 4 (NOTE [ Winograd F(2x2,
    3x3) ], NOTE [ Winograd F(4x4, 3x3) ]); channel-major in and out."""

    def __init__(self, padding, m=2):
        if m not in _MATRICES:
            raise ValueError(f"Winograd F(m x m, 3x3) is implemented for m = 2 and 4, got {m}")
        super().__init__((1, 1), padding)
        self.m = m
        self.algorithm = f"winograd_{m}x{m}"

    def prepare(self, weight, bias):
        """``(O, C, 3, 3)`` weight -> ``(U, bias)``."""
        return winograd_weight(weight, self.m), bias

    def compute(self, xp, x, u, bias):
        m = self.m
        alpha = m + 2
        N, C, H, W = x.shape
        O = u.shape[1]
        ph, pw = self.padding
        OH, OW = H + 2 * ph - 2, W + 2 * pw - 2
        th, tw = -(-OH // m), -(-OW // m)
        d = padded_channel_major(self, xp, x, m * th + 2, m * tw + 2)
        v = self._input_transform(xp, d, th, tw)
        products = self.scratch(xp, "products", (alpha * alpha, O, N * th * tw), x.dtype)
        xp.matmul(u, v, out=products)
        if bias is not None:  # A^T's column 1 is all ones: b at tile position (1, 1) reaches every output
            products[alpha + 1] += bias.reshape(-1, 1)
        y = self._output_transform(xp, products, O, N, th, tw)
        return as_image(y[:, :, :OH, :OW] if (OH % m or OW % m) else y)

    def _matrix(self, xp, index, dtype):
        key = ("matrix", self.m, index, str(dtype), xp.__name__)
        matrix = self.workspace.get(key)
        if matrix is None:
            matrix = self.workspace[key] = xp.asarray(_MATRICES[self.m][index].astype(dtype))
        return matrix

    def _input_transform(self, xp, d, th, tw):
        """B^T d B for every tile of the padded (C, N, rows, cols) input, as
        ``(alpha * alpha, C, N * th * tw)``."""
        m = self.m
        alpha = m + 2
        C, N, _, Wp = d.shape
        bt = self._matrix(xp, 0, d.dtype)
        s = d.strides  # rows of every tile: row i of tile t is input row m * t + i
        rows = self.scratch(xp, "tile rows", (alpha, C * N * th * Wp), d.dtype)
        rows.reshape(alpha, C, N, th, Wp)[...] = xp.lib.stride_tricks.as_strided(
            d, (alpha, C, N, th, Wp), (s[2], s[0], s[1], m * s[2], s[3]))
        t = self.scratch(xp, "B^T d", rows.shape, d.dtype)
        xp.matmul(bt, rows, out=t)
        t = t.reshape(alpha, C, N, th, Wp)
        s = t.strides  # now the columns of every tile, the same way
        cols = self.scratch(xp, "tile columns", (alpha, alpha * C * N * th * tw), d.dtype)
        cols.reshape(alpha, alpha, C, N, th, tw)[...] = xp.lib.stride_tricks.as_strided(
            t, (alpha, alpha, C, N, th, tw), (s[4], s[0], s[1], s[2], s[3], m * s[4]))
        v = self.scratch(xp, "B^T d B", cols.shape, d.dtype)
        xp.matmul(bt, cols, out=v)
        return v.reshape(alpha * alpha, C, N * th * tw)

    def _output_transform(self, xp, products, O, N, th, tw):
        """A^T M A for every tile, written as the channel-major ``(O, N, m * th, m * tw)``."""
        m = self.m
        alpha = m + 2
        at = self._matrix(xp, 2, products.dtype)
        half = self.scratch(xp, "A^T M", (m, alpha * O * N * th * tw), products.dtype)
        xp.matmul(at, products.reshape(alpha, -1), out=half)
        full = self.scratch(xp, "A^T M A", (m, m, O * N * th * tw), products.dtype)
        xp.matmul(at, half.reshape(m, alpha, -1), out=full)  # one product per output column
        out = xp.empty((O, N, m * th, m * tw), products.dtype)
        out.reshape(O, N, th, m, tw, m)[...] = full.reshape(m, m, O, N, th, tw).transpose(2, 3, 4, 1, 5, 0)
        return out
