"""The compiled loops of ember_numba/winograd.py (NOTE there).

PyTorch counterpart: aten/src/ATen/native/DispatchStub.h (v2.13), as for winograd.py: the
transforms are ember's own.
"""

import numpy as np

from ember_numba.ahead_of_time import ahead_of_time
from ember_numba.exact import jit_exact


@ahead_of_time("void({t}[:, :, :, ::1], b1, i8, i8, i8, i8, {t}[:, :, ::1])")
@jit_exact
def input_tiles_loop(x, nhwc, ph, pw, th, tw, v):
    """``B^T d B`` of every tile of the C-contiguous ``x``, (N, H, W, C) when ``nhwc``
    else (N, C, H, W), zero-bordered by (ph, pw), into ``v`` (36, tiles, C): each tile
    gathered into the (6, 6, C) scratch ``d`` (NCHW from ``band``, a row of tiles' six
    input rows transposed to channels innermost, each input row read whole), B^T along its
    rows into ``t``, then along its columns, each row of B^T spelled out (NOTE
    [ Winograd F(4x4, 3x3) ] in ember/native/convolution/winograd.py)."""
    if nhwc:
        N, H, W, C = x.shape
    else:
        N, C, H, W = x.shape
    four, five, two = x.dtype.type(4), x.dtype.type(5), x.dtype.type(2)
    d = np.zeros((6, 6, C), dtype=x.dtype)
    t = np.empty((6, 6, C), dtype=x.dtype)
    band = np.empty((6, W, C), dtype=x.dtype)  # NCHW: a row of tiles' input rows, channels innermost
    for n in range(N):
        for ty in range(th):
            h0 = 4 * ty - ph
            i0, i1 = max(0, -h0), min(6, H - h0)
            if not nhwc:
                for i in range(i0, i1):
                    for c in range(C):
                        for w in range(W):
                            band[i, w, c] = x[n, c, h0 + i, w]
            for tx in range(tw):
                w0 = 4 * tx - pw
                if not (h0 >= 0 and w0 >= 0 and h0 + 6 <= H and w0 + 6 <= W):
                    d[:] = 0
                j0, j1 = max(0, -w0), min(6, W - w0)
                if nhwc:
                    for i in range(i0, i1):
                        for j in range(j0, j1):
                            for c in range(C):
                                d[i, j, c] = x[n, h0 + i, w0 + j, c]
                else:
                    for i in range(i0, i1):
                        for j in range(j0, j1):
                            for c in range(C):
                                d[i, j, c] = band[i, w0 + j, c]
                for j in range(6):
                    for c in range(C):
                        d0, d1, d2, d3, d4, d5 = d[0, j, c], d[1, j, c], d[2, j, c], d[3, j, c], d[4, j, c], d[5, j, c]
                        t[0, j, c] = four * d0 - five * d2 + d4
                        t[1, j, c] = (d3 + d4) - four * (d1 + d2)
                        t[2, j, c] = (d4 - d3) + four * (d1 - d2)
                        t[3, j, c] = (d4 - d2) + two * (d3 - d1)
                        t[4, j, c] = (d4 - d2) - two * (d3 - d1)
                        t[5, j, c] = four * d1 - five * d3 + d5
                tile = (n * th + ty) * tw + tx
                for k in range(6):
                    for c in range(C):
                        d0, d1, d2, d3, d4, d5 = t[k, 0, c], t[k, 1, c], t[k, 2, c], t[k, 3, c], t[k, 4, c], t[k, 5, c]
                        v[6 * k, tile, c] = four * d0 - five * d2 + d4
                        v[6 * k + 1, tile, c] = (d3 + d4) - four * (d1 + d2)
                        v[6 * k + 2, tile, c] = (d4 - d3) + four * (d1 - d2)
                        v[6 * k + 3, tile, c] = (d4 - d2) + two * (d3 - d1)
                        v[6 * k + 4, tile, c] = (d4 - d2) - two * (d3 - d1)
                        v[6 * k + 5, tile, c] = four * d1 - five * d3 + d5


@ahead_of_time("void({t}[:, :, ::1], i8, i8, b1, {t}[:, :, :, ::1])")
@jit_exact
def output_tiles_loop(products, th, tw, nhwc, y):
    """``A^T M A`` of every tile's 36 products (36, tiles, O) into
    the C-contiguous ``y``, (N, OH, OW, O) when ``nhwc`` else (N, O, OH, OW), cropped at
    its edge: A^T along k into the scratch ``s``, then along l into a row of tiles'
    blocks, which is written out in runs of O channels (NHWC) or of whole output rows
    (NCHW)."""
    if nhwc:
        N, OH, OW, O = y.shape
    else:
        N, O, OH, OW = y.shape
    two, four, eight = y.dtype.type(2), y.dtype.type(4), y.dtype.type(8)
    s = np.empty((4, 6, O), dtype=y.dtype)
    row = np.empty((tw, 4, 4, O), dtype=y.dtype)
    for n in range(N):
        for ty in range(th):
            for tx in range(tw):
                tile = (n * th + ty) * tw + tx
                for ll in range(6):
                    for o in range(O):
                        m0, m1, m2 = products[ll, tile, o], products[6 + ll, tile, o], products[12 + ll, tile, o]
                        m3, m4, m5 = products[18 + ll, tile, o], products[24 + ll, tile, o], products[30 + ll, tile, o]
                        a, b, c, e = m1 + m2, m1 - m2, m3 + m4, m3 - m4
                        s[0, ll, o] = m0 + a + c
                        s[1, ll, o] = b + two * e
                        s[2, ll, o] = a + four * c
                        s[3, ll, o] = b + eight * e + m5
                for p in range(4):
                    for o in range(O):
                        m0, m1, m2, m3, m4, m5 = s[p, 0, o], s[p, 1, o], s[p, 2, o], s[p, 3, o], s[p, 4, o], s[p, 5, o]
                        a, b, c, e = m1 + m2, m1 - m2, m3 + m4, m3 - m4
                        row[tx, p, 0, o] = m0 + a + c
                        row[tx, p, 1, o] = b + two * e
                        row[tx, p, 2, o] = a + four * c
                        row[tx, p, 3, o] = b + eight * e + m5
            rows = min(4, OH - 4 * ty)
            if nhwc:
                for p in range(rows):
                    for w in range(OW):
                        for o in range(O):
                            y[n, 4 * ty + p, w, o] = row[w // 4, p, w % 4, o]
            else:
                for o in range(O):
                    for p in range(rows):
                        for w in range(OW):
                            y[n, o, 4 * ty + p, w] = row[w // 4, p, w % 4, o]


@ahead_of_time("void({t}[:, :, :, ::1], b1, i8, i8, {t}[:, :, ::1])")
@jit_exact
def gradient_tiles_loop(grad, nhwc, th, tw, z):
    """``A dY A^T`` of every 4 x 4 block of the C-contiguous ``grad``, (N, OH, OW, O)
    when ``nhwc`` else (N, O, OH, OW), zeros past its edge, into ``z`` (36, tiles, O):
    A (the transpose of A^T) along the rows into ``t``, then along the columns (NCHW
    blocks gathered from ``band``, as in ``input_tiles_loop``)."""
    if nhwc:
        N, OH, OW, O = grad.shape
    else:
        N, O, OH, OW = grad.shape
    two, four = grad.dtype.type(2), grad.dtype.type(4)
    g = np.zeros((4, 4, O), dtype=grad.dtype)
    t = np.empty((6, 4, O), dtype=grad.dtype)
    band = np.empty((4, OW, O), dtype=grad.dtype)  # NCHW: a row of blocks' rows, channels innermost
    for n in range(N):
        for ty in range(th):
            rows = min(4, OH - 4 * ty)
            if not nhwc:
                for p in range(rows):
                    for o in range(O):
                        for w in range(OW):
                            band[p, w, o] = grad[n, o, 4 * ty + p, w]
            for tx in range(tw):
                cols = min(4, OW - 4 * tx)
                if rows < 4 or cols < 4:
                    g[:] = 0
                if nhwc:
                    for p in range(rows):
                        for q in range(cols):
                            for o in range(O):
                                g[p, q, o] = grad[n, 4 * ty + p, 4 * tx + q, o]
                else:
                    for p in range(rows):
                        for q in range(cols):
                            for o in range(O):
                                g[p, q, o] = band[p, 4 * tx + q, o]
                for q in range(4):
                    for o in range(O):
                        g0, g1, g2, g3 = g[0, q, o], g[1, q, o], g[2, q, o], g[3, q, o]
                        t[0, q, o] = g0
                        t[1, q, o] = (g0 + g2) + (g1 + g3)
                        t[2, q, o] = (g0 + g2) - (g1 + g3)
                        t[3, q, o] = (g0 + four * g2) + two * (g1 + four * g3)
                        t[4, q, o] = (g0 + four * g2) - two * (g1 + four * g3)
                        t[5, q, o] = g3
                tile = (n * th + ty) * tw + tx
                for k in range(6):
                    for o in range(O):
                        g0, g1, g2, g3 = t[k, 0, o], t[k, 1, o], t[k, 2, o], t[k, 3, o]
                        z[6 * k, tile, o] = g0
                        z[6 * k + 1, tile, o] = (g0 + g2) + (g1 + g3)
                        z[6 * k + 2, tile, o] = (g0 + g2) - (g1 + g3)
                        z[6 * k + 3, tile, o] = (g0 + four * g2) + two * (g1 + four * g3)
                        z[6 * k + 4, tile, o] = (g0 + four * g2) - two * (g1 + four * g3)
                        z[6 * k + 5, tile, o] = g3
