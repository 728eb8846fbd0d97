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
# rounding grows with them. Measured in float32 against a float64 reference, relative to
# the output's largest magnitude, on ResNet-18's 3x3 layers (64 to 512 channels, batch
# 32): F(4x4) 7e-6 to 1.5e-5, F(2x2) 4e-7 to 6e-7, im2col 4e-7 to 6e-7 (eager ember's
# float32 convolution 3e-7 to 8e-7, torch's 1e-6 to 2.6e-6); against eager ember's
# float32 result, F(4x4) the same 7e-6 to 1.5e-5, F(2x2) and im2col 5e-7 to 8e-7. That
# is the order oneDNN's float32 F(4x4) kernels reach (about 1e-5 relative), and it stays
# there for every layer size tested, so F(4x4) is not restricted; its tests bound it at
# 5e-5 (tests/core/compiler/test_conv_algorithms.py). In float64 all three agree with
# the reference to about 1e-15.
#
# How the transforms are computed (NOTE [ Pixel-major activations in the compiled
# program ]): all three are separable (B^T d B is B^T along the tile's columns, then
# along its rows), and each direction is ONE matrix product of the tiny alpha x alpha
# matrix with a long one. The input is pixel-major, (rows, cols, N, C): gathering the
# j-th column of every tile is a strided view over whole (N, C) blocks, copied once, and
# B^T @ (alpha, everything) transforms the whole batch in one BLAS call; the rows the
# same way, over (tiles along W, N, C) blocks. What comes out is (k, l, tiles, C): for
# each of the alpha^2 tile positions a (tiles, C) matrix, which the products with the
# (C, O) transformed weights read as is; they give (k, l, tiles, O), and A^T along k,
# then along l, leaves (p, q, tiles, O), copied into the (H, W, N, O) output by whole
# (N, O) blocks. The weight transform runs once, in float64, and is rounded to the
# working dtype at the end. The bias rides in the products: A^T's second column is all
# ones, so adding b to the product at tile position (1, 1) adds b to every output, a
# pass over 1/16 (or 1/36) of the products instead of over the output.
"""

import numpy as np

from ember.compiler.passes.conv_layout import CompiledConv2d, padded_pixel_major

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
    """``U = G g G^T`` as ``(alpha * alpha, C, O)`` from an ``(O, C, 3, 3)`` array,
    computed in float64 and rounded once; position ``k * alpha + l`` holds row k and
    column l of the transformed tile."""
    g = _MATRICES[m][1]
    u = np.einsum("ka,ocab,lb->klco", g, np.asarray(weight, dtype=np.float64), g)
    alpha = m + 2
    return np.ascontiguousarray(u.reshape(alpha * alpha, weight.shape[1], weight.shape[0]).astype(weight.dtype))


class WinogradConv2d(CompiledConv2d):
    """A 3x3 stride-1 convolution by F(m x m, 3x3), m = 2 or 4 (NOTE [ Winograd F(2x2,
    3x3) ], NOTE [ Winograd F(4x4, 3x3) ]); pixel-major in and out."""

    def __init__(self, padding, m=2):
        if m not in _MATRICES:
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
        th, tw = -(-OH // m), -(-OW // m)
        d = padded_pixel_major(self, xp, x, m * th + 2, m * tw + 2)
        v = self._input_transform(xp, d, th, tw)
        products = self.scratch(xp, "products", (alpha * alpha, th * tw * N, O), x.dtype)
        xp.matmul(v, u, out=products)
        if bias is not None:  # A^T's column 1 is all ones: b at tile position (1, 1) reaches every output
            products[alpha + 1] += bias
        whole = not (OH % m or OW % m)  # no rows or columns of the last tiles to crop
        add = residual if whole and "add" in self.epilogue else None
        y = self._output_transform(xp, products, th, tw, N, O, add)
        return self.finish(xp, y if whole else y[:OH, :OW], residual, added=add is not None)

    def _matrix(self, xp, index, dtype):
        key = ("matrix", self.m, index, str(dtype), xp.__name__)
        matrix = self.workspace.get(key)
        if matrix is None:
            matrix = self.workspace[key] = xp.asarray(_MATRICES[self.m][index].astype(dtype))
        return matrix

    def _input_transform(self, xp, d, th, tw):
        """B^T d B for every tile of the padded (rows, cols, N, C) input, as
        ``(alpha * alpha, th * tw * N, C)``."""
        m = self.m
        alpha = m + 2
        Hp, Wp, N, C = d.shape
        bt = self._matrix(xp, 0, d.dtype)
        block = N * C
        columns = self.scratch(xp, "tile columns", (alpha, Hp * tw * block), d.dtype)
        gathered = columns.reshape(alpha, Hp, tw, N, C)
        for j in range(alpha):  # column j of tile s along W is input column m * s + j: whole (N, C) blocks
            gathered[j] = d[:, j:j + m * (tw - 1) + 1:m]
        t = self.scratch(xp, "d B", columns.shape, d.dtype)
        xp.matmul(bt, columns, out=t)  # (l, rows, tw, N, C)
        row = tw * block
        rows = self.scratch(xp, "tile rows", (alpha, alpha * th * row), d.dtype)
        gathered, t = rows.reshape(alpha, alpha, th, row), t.reshape(alpha, Hp, row)
        for i in range(alpha):  # row i of tile t along H is row m * t + i, for each l: whole (tw, N, C) blocks
            gathered[i] = t[:, i:i + m * (th - 1) + 1:m]
        v = self.scratch(xp, "B^T d B", rows.shape, d.dtype)
        xp.matmul(bt, rows, out=v)  # (k, l, th, tw, N, C)
        return v.reshape(alpha * alpha, th * tw * N, C)

    def _output_transform(self, xp, products, th, tw, N, O, residual=None):
        """A^T M A for every tile, written as the pixel-major ``(m * th, m * tw, N, O)``,
        plus ``residual`` (an (N, O, H, W) array) if given, in the same pass."""
        m = self.m
        alpha = m + 2
        at = self._matrix(xp, 2, products.dtype)
        half = self.scratch(xp, "A^T M", (m, alpha * th * tw * N * O), products.dtype)
        xp.matmul(at, products.reshape(alpha, -1), out=half)  # (p, l, tiles, O)
        full = self.scratch(xp, "A^T M A", (m, m, th * tw * N * O), products.dtype)
        xp.matmul(at, half.reshape(m, alpha, -1), out=full)  # one product per output row p: (p, q, tiles, O)
        out = xp.empty((m * th, m * tw, N, O), products.dtype)
        blocks = full.reshape(m, m, th, tw, N * O).transpose(2, 0, 3, 1, 4)  # (t, p, s, q, N * O)
        if residual is None:
            out.reshape(th, m, tw, m, N * O)[...] = blocks
        else:  # a view when the residual is pixel-major, as the program's activations are
            xp.add(blocks, residual.transpose(2, 3, 0, 1).reshape(th, m, tw, m, N * O),
                   out=out.reshape(th, m, tw, m, N * O))
        return out
