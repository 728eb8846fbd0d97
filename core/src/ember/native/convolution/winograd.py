"""Winograd convolution F(m x m, 3x3), m = 2 or 4: the transforms and the kernels that
eager convolutions (in NCHW or channels_last, only where ``ember.backends.cpu.benchmark``
measured them faster: ember/native/convolution/algorithm.py) and ``ember.compile``'s
compiled kernels (ember/compiler/passes/winograd.py) both run.

PyTorch counterpart: the Winograd kernels oneDNN/NNPACK and cuDNN pick for torch's
convolutions (aten/src/ATen/native/mkldnn/Conv.cpp, the cuDNN algorithm list of
aten/src/ATen/native/cudnn/Conv_v7.cpp) (v2.13); torch's default CPU convolution is
oneDNN's direct kernel, not Winograd. These kernels are ember's own, written with the
backend's array operations.

# NOTE [ Winograd F(2x2, 3x3) ]
# Every 2x2 block of outputs is read from a 4x4 tile of the padded input d:
#     Y = A^T [ (G g G^T) * (B^T d B) ] A
# with G (4x3), B^T (4x4), A^T (2x4) Lavin and Gray's small matrices. U = G g G^T is
# computed once per weight; V = B^T d B is additions only; the product `*` over the
# 16 tile positions, summed over input channels, is 16 matrix products (tiles, C) @
# (C, O). That is 16 multiplies per 4 outputs per channel pair instead of 36: 2.25x
# fewer, for additions that are cheap beside them.

# NOTE [ Winograd F(4x4, 3x3) ]
# The same identity with 6x6 input tiles and 4x4 output blocks (interpolation points
# 0, 1, -1, 2, -2 and infinity): 36 products give 16 outputs per channel pair, 36
# multiplies where the direct convolution does 144, 4x fewer. The price is in the
# transforms' constants (up to 8 in A^T, fractions like 1/24 in G): rounding grows with
# them. Measured in float32 against a float64 reference, relative to the output's
# largest magnitude, on ResNet-18's 3x3 layers (64 to 512 channels, batch 32): F(4x4)
# 7e-6 to 1.5e-5, F(2x2) 4e-7 to 6e-7, im2col 4e-7 to 6e-7 (torch's float32 convolution
# 1e-6 to 2.6e-6). That is the order oneDNN's and cuDNN's float32 Winograd kernels
# reach (about 1e-5 relative). In float64 all three agree with the reference to about
# 1e-15.
#
# How the transforms are computed: all three are separable (B^T d B is B^T along the
# tile's columns, then along its rows), and each direction is ONE matrix product of the
# tiny alpha x alpha matrix with a long one. The padded input is viewed as a 5-D array
# (outer, rows, cols, inner, channels): gathering the j-th column of every tile is one
# strided copy, and B^T @ (alpha, everything) transforms the whole batch in one BLAS
# call; the rows the same way. What comes out is (alpha^2, tiles, channels): for each
# tile position one matrix, which the products read as is. The 5-D view fits every
# layout ember runs: the compiled program's pixel-major (H, W, N, C) is (1, H, W, N, C),
# channels_last (N, H, W, C) is (N, H, W, 1, C), and NCHW, padded channel-major as
# (C, N, H, W), is (C*N, H, W, 1, 1), whose (alpha^2, C*N*tiles) transform is the
# (alpha^2, C, N*tiles) operand of the products (U^T @ V there, V @ U in the others).
# The output transform is A^T along the leading k, then along l, leaving (p, q, ...),
# which the caller copies into its layout. The weight transform runs in float64 and is
# rounded once to the working dtype.
"""

import numpy as np

from ember.dispatcher import Op
from ember.native.convolution import columns as kept_columns
from ember.native.support.dispatch_stub import kernel_of

# F(m, 3) for m = 2 and 4: (B^T, G, A^T).
MATRICES = {
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


def applies(weight_shape, stride, dilation, groups):
    """Whether Winograd F(m x m, 3x3) can run a convolution: 3x3, stride 1, dilation 1,
    one group."""
    return (tuple(weight_shape[2:]) == (3, 3) and tuple(stride) == (1, 1) and tuple(dilation) == (1, 1)
            and groups == 1)


def tile_size(algorithm):
    """m of an algorithm's name: ``"winograd_4x4"`` -> 4."""
    return int(algorithm.rsplit("x", 1)[1])


def tile_counts(out_h, out_w, m):
    """Tiles along H and W that cover an ``out_h x out_w`` output with m x m blocks."""
    return -(-out_h // m), -(-out_w // m)


# The weight transform's float64 intermediates are made this many values at a time
# (8 MB): made whole, ResNet-18's 512->512 layer held 245 MB of them at once (the
# float64 weight, G g, G g G^T and its transposed copy), which set the whole train
# step's peak memory (481 MB; 342 MB with the chunks, same values bit for bit).
WEIGHT_CHUNK = 1 << 20


def winograd_weight(weight, m=2):
    """``U = G g G^T`` as ``(alpha * alpha, C, O)`` from an ``(O, C, 3, 3)`` NumPy array,
    computed in float64 and rounded once, a few output channels at a time
    (``WEIGHT_CHUNK``); position ``k * alpha + l`` holds row k and column l of the
    transformed tile."""
    g = MATRICES[m][1]
    O, C = weight.shape[:2]
    alpha = m + 2
    u = np.empty((alpha * alpha, C, O), dtype=weight.dtype)
    step = max(1, WEIGHT_CHUNK // max(1, C * alpha * alpha))
    for start in range(0, O, step):
        w = np.asarray(weight[start:start + step], dtype=np.float64)
        n = w.shape[0]
        gw = (g @ w.reshape(n * C, 3, 3)).reshape(n, C, alpha, 3)  # G along the kernel's rows
        u[:, :, start:start + n] = (gw @ g.T).transpose(2, 3, 1, 0).reshape(alpha * alpha, C, n)
    return u


def _new_buffer(xp, role, shape, dtype):
    return xp.empty(shape, dtype)


def input_tiles(xp, d, m, th, tw, buffer=_new_buffer):
    """``B^T d B`` for every tile of the padded 5-D input ``d`` (outer, rows, cols,
    inner, channels), as ``(alpha * alpha, outer * th * tw * inner, channels)``
    (NOTE [ Winograd F(4x4, 3x3) ]); ``buffer(xp, role, shape, dtype)`` gives the
    intermediate arrays (the compiled kernels reuse theirs)."""
    alpha = m + 2
    A, Hp, _, B, E = d.shape
    bt = xp.asarray(MATRICES[m][0].astype(d.dtype))
    columns = buffer(xp, "tile columns", (alpha, A * Hp * tw * B * E), d.dtype)
    gathered = columns.reshape(alpha, A, Hp, tw, B, E)
    for j in range(alpha):  # column j of tile s along W is input column m * s + j
        gathered[j] = d[:, :, j:j + m * (tw - 1) + 1:m]
    t = buffer(xp, "d B", columns.shape, d.dtype)
    xp.matmul(bt, columns, out=t)  # (l, A, rows, tw, B, E)
    rows = buffer(xp, "tile rows", (alpha, alpha * A * th * tw * B * E), d.dtype)
    gathered, t = rows.reshape(alpha, alpha, A, th, tw * B * E), t.reshape(alpha, A, Hp, tw * B * E)
    for i in range(alpha):  # row i of tile t along H is row m * t + i, for each l
        gathered[i] = t[:, :, i:i + m * (th - 1) + 1:m]
    v = buffer(xp, "B^T d B", rows.shape, d.dtype)
    xp.matmul(bt, rows, out=v)  # (k, l, A, th, tw, B, E)
    return v.reshape(alpha * alpha, A * th * tw * B, E)


def output_tiles(xp, products, m, buffer=_new_buffer):
    """``A^T M A`` for every tile: ``(alpha * alpha, ...)`` products -> ``(m, m, ...)``,
    position ``(p, q)`` of every output block."""
    alpha = m + 2
    at = xp.asarray(MATRICES[m][2].astype(products.dtype))
    rest = products.size // (alpha * alpha)
    half = buffer(xp, "A^T M", (m, alpha * rest), products.dtype)
    xp.matmul(at, products.reshape(alpha, -1), out=half)  # (p, l, rest)
    full = buffer(xp, "A^T M A", (m, m, rest), products.dtype)
    xp.matmul(at, half.reshape(m, alpha, rest), out=full)  # one product per output row p: (p, q, rest)
    return full


def _padded_channel_major(xp, x, padding, Hp, Wp):
    """``(N, C, H, W)`` -> a zero-bordered ``(C, N, Hp, Wp)`` array (rows of W copied whole)."""
    N, C, H, W = x.shape
    ph, pw = padding
    plane = xp.zeros((C, N, Hp, Wp), dtype=x.dtype)
    plane[:, :, ph:ph + H, pw:pw + W] = x.transpose(1, 0, 2, 3)
    return plane


def _padded_channels_last(xp, x, padding, Hp, Wp):
    """``(N, C, H, W)`` -> a zero-bordered ``(N, Hp, Wp, C)`` array (runs of C copied whole)."""
    N, C, H, W = x.shape
    ph, pw = padding
    plane = xp.zeros((N, Hp, Wp, C), dtype=x.dtype)
    plane[:, ph:ph + H, pw:pw + W] = x.transpose(0, 2, 3, 1)
    return plane


# NOTE [ The Winograd transforms as ops ]
# The eager kernels below reach their three per-tile transforms through ops, as ATen's
# native code reaches a CPU kernel through a dispatch stub (NOTE [ Dispatch stubs ] in
# ember/native/support/dispatch_stub.py): each op's
# generic kernel is the NumPy code (array passes and tiny products, NOTE [ Winograd
# F(4x4, 3x3) ]), the path for CuPy arrays and whenever no plugin serves the cpu; a
# plugin may register a compiled cpu kernel (ember-numba does, NOTE [ Compiled
# Winograd transforms ] in ember_numba/winograd.py), which falls back to the generic
# one for what it does not take. The kernels are raw array functions, not called
# through ``dispatch``: a convolution looks each one up once per call
# (``kernel_of``, a cached dict read), never per tile, and no per-op path gains
# anything. All three lay tiles out (alpha^2, N * th * tw, channels), tile (n, ty, tx)
# at row ``(n * th + ty) * tw + tx``, whatever the layout of the image they read or
# write, so the products between them are the same in NCHW and channels_last.


# NOTE [ The forward's tiles, kept for the weight's gradient ]
# The weight's gradient transforms the same input tiles the forward did (B^T d B of x,
# same padding): so the forward offers its ``(alpha^2, tiles, C)`` array to the memo
# that keeps im2col's columns for the backward (NOTE [ The forward's columns, kept for
# the weight's gradient ] in ember/native/convolution/columns.py, same budget, same
# autograd version check on x), under a name of its own, and ``weight_grad`` takes it
# instead of transforming x again. Only the tile ops' layout is offered (the NumPy
# NCHW path lays its tiles out channel-major and keeps nothing).
TILES = "winograd tiles"


def _input_tiles(xp, x, *, padding, m, tiles):
    """``B^T d B`` of every tile of the ``(N, C, H, W)`` array ``x`` (any strides)
    zero-bordered by ``padding``: ``(alpha^2, N * th * tw, C)``."""
    th, tw = tiles
    d = _padded_channels_last(xp, x, padding, m * th + 2, m * tw + 2)[:, :, :, None, :]
    return input_tiles(xp, d, m, th, tw)


def _output_tiles(xp, products, *, m, shape, channels_last):
    """``A^T M A`` of every tile's ``(alpha^2, N * th * tw, O)`` products, cropped into a
    new ``shape`` ``(N, O, OH, OW)`` array, channels_last or C-contiguous."""
    N, O, OH, OW = shape
    th, tw = tile_counts(OH, OW, m)
    blocks = output_tiles(xp, products, m).reshape(m, m, N, th, tw, O)
    if channels_last:
        out = xp.empty((N, th, m, tw, m, O), dtype=products.dtype)
        out[...] = blocks.transpose(2, 3, 0, 4, 1, 5)  # runs of O channels
        return _cropped(xp, out.reshape(N, m * th, m * tw, O), (N, OH, OW, O)).transpose(0, 3, 1, 2)
    out = xp.empty((N, O, th, m, tw, m), dtype=products.dtype)
    out[...] = blocks.transpose(2, 5, 3, 0, 4, 1)
    return _cropped(xp, out.reshape(N, O, m * th, m * tw), shape)


def _gradient_blocks(xp, grad, *, m, tiles):
    """``A dY A^T`` of every m x m block of the ``(N, O, OH, OW)`` output gradient,
    zeros past its edge: ``(alpha^2, N * th * tw, O)``."""
    N, O = grad.shape[:2]
    th, tw = tiles
    grad = _whole_tiles(xp, grad, th, tw, m)
    gp = xp.empty((m, m, N, th, tw, O), dtype=grad.dtype)
    gp[...] = grad.transpose(0, 2, 3, 1).reshape(N, th, m, tw, m, O).transpose(2, 4, 0, 1, 3, 5)
    return _gradient_tiles(xp, gp, m, q_last=False).reshape((m + 2) ** 2, N * th * tw, O)


input_tiles_op = Op("native::winograd_input_tiles", _input_tiles)
output_tiles_op = Op("native::winograd_output_tiles", _output_tiles)
gradient_tiles_op = Op("native::winograd_gradient_tiles", _gradient_blocks)


def compiled_transforms(xp):
    """Whether a plugin serves the transforms on ``xp``'s arrays with compiled kernels
    (then NCHW convolutions run them too, their transposes folded into the loops)."""
    return kernel_of(input_tiles_op, xp) is not input_tiles_op.generic


def conv2d(xp, x, u, padding, m, channels_last=False):
    """The 3x3 stride-1 convolution of the ``(N, C, H, W)`` array ``x`` (any strides)
    with the transformed weight ``u`` (:func:`winograd_weight`, ``(alpha^2, C, O)``), no
    bias: a C-contiguous ``(N, O, OH, OW)`` array, or one with channels_last strides."""
    N, C, H, W = x.shape
    O = u.shape[2]
    ph, pw = padding
    OH, OW = H + 2 * ph - 2, W + 2 * pw - 2
    th, tw = tile_counts(OH, OW, m)
    if channels_last or compiled_transforms(xp):
        v = kernel_of(input_tiles_op, xp)(xp, x, padding=padding, m=m, tiles=(th, tw))
        kept_columns.offer(v, TILES)  # NOTE [ The forward's tiles, kept for the weight's gradient ]
        products = xp.matmul(v, u.astype(x.dtype, copy=False))  # (alpha^2, N*tiles, O), in x's dtype
        return kernel_of(output_tiles_op, xp)(xp, products, m=m, shape=(N, O, OH, OW),
                                               channels_last=channels_last)
    Hp, Wp = m * th + 2, m * tw + 2
    d = _padded_channel_major(xp, x, padding, Hp, Wp).reshape(C * N, Hp, Wp, 1, 1)
    v = input_tiles(xp, d, m, th, tw).reshape(-1, C, N * th * tw)
    products = xp.matmul(u.transpose(0, 2, 1), v)  # (alpha^2, O, N*tiles)
    blocks = _output_rows(xp, products, m).reshape(m, O, N, th, tw, m)
    out = xp.empty((N, O, th, m, tw, m), dtype=x.dtype)
    out[...] = blocks.transpose(2, 1, 3, 0, 4, 5)  # runs of m*tw: whole output rows
    return _cropped(xp, out.reshape(N, O, m * th, m * tw), (N, O, OH, OW))


def _cropped(xp, whole, shape):
    """The leading ``shape`` corner of the whole tiles' output, as a fresh C-contiguous
    array when it is smaller (ascontiguousarray would keep odd strides on size-1 dims)."""
    if whole.shape == shape:
        return whole
    out = xp.empty(shape, dtype=whole.dtype)
    out[...] = whole[tuple(slice(0, size) for size in shape)]
    return out


def _output_rows(xp, products, m):
    """The output transform for NCHW: ``(alpha^2, R)`` products -> ``(p, R, q)``, A^T
    along k, then along l by a product with the transposed ``(R, l)`` operand, so that q
    comes out innermost and each output row is copied whole (a (p, q, R) result would
    be copied one float at a time)."""
    alpha = m + 2
    at = xp.asarray(MATRICES[m][2].astype(products.dtype))
    rest = products.size // (alpha * alpha)
    half = xp.matmul(at, products.reshape(alpha, -1)).reshape(m, alpha, rest)  # (p, l, R)
    return xp.matmul(half.transpose(0, 2, 1), at.T)  # (p, R, q)


def _gradient_tiles(xp, gp, m, q_last):
    """``A dY A^T`` for every m x m block of the output gradient ``gp``, laid out
    ``(p, rest, q)`` when ``q_last``, else ``(p, q, rest)``: ``(alpha^2, rest)``, the
    adjoint of the output transform."""
    alpha = m + 2
    a = xp.asarray(MATRICES[m][2].T.astype(gp.dtype))  # (alpha, m)
    rest = gp.size // (m * m)
    z1 = xp.matmul(a, gp.reshape(m, -1))  # A^T along p: (k, rest, q) or (k, q, rest)
    z1 = z1.reshape(alpha, rest, m).transpose(0, 2, 1) if q_last else z1.reshape(alpha, m, rest)
    return xp.matmul(a, z1).reshape(alpha * alpha, rest)  # along q: (k, l, rest)


def _whole_tiles(xp, grad, th, tw, m):
    """The ``(N, O, OH, OW)`` gradient inside zeros up to whole m x m blocks."""
    N, O, OH, OW = grad.shape
    if (OH, OW) == (m * th, m * tw):
        return grad
    padded = xp.zeros((N, O, m * th, m * tw), dtype=grad.dtype)
    padded[:, :, :OH, :OW] = grad
    return padded


def weight_grad(xp, x, grad, padding, m, channels_last=False):
    """The weight's gradient of a 3x3 stride-1 convolution of ``x`` whose output had
    gradient ``grad``: ``G^T [sum over tiles (A dY A^T) * (B^T d B)] G`` (the transforms of NOTE
    [ Winograd F(2x2, 3x3) ]), an ``(O, C, 3, 3)`` array, channels_last
    strides when ``channels_last``."""
    N, C, H, W = x.shape
    O, OH, OW = grad.shape[1:]
    th, tw = tile_counts(OH, OW, m)
    alpha = m + 2
    if channels_last or compiled_transforms(xp):
        v = kept_columns.take(TILES, (alpha * alpha, N * th * tw, C), x.dtype)
        if v is None:
            v = kernel_of(input_tiles_op, xp)(xp, x, padding=padding, m=m, tiles=(th, tw))  # (alpha^2, T, C)
        z = kernel_of(gradient_tiles_op, xp)(xp, grad, m=m, tiles=(th, tw))  # (alpha^2, T, O)
        du = xp.matmul(v.transpose(0, 2, 1), z)  # (alpha^2, C, O)
    else:
        Hp, Wp = m * th + 2, m * tw + 2
        grad = _whole_tiles(xp, grad, th, tw, m)
        d = _padded_channel_major(xp, x, padding, Hp, Wp).reshape(C * N, Hp, Wp, 1, 1)
        v = input_tiles(xp, d, m, th, tw).reshape(-1, C, N * th * tw)
        gp = xp.empty((m, O, N, th, tw, m), dtype=grad.dtype)
        gp[...] = grad.reshape(N, O, th, m, tw, m).transpose(3, 1, 0, 2, 4, 5)  # runs of m*tw
        z = _gradient_tiles(xp, gp, m, q_last=True).reshape(alpha * alpha, O, N * th * tw)
        du = xp.matmul(v, z.transpose(0, 2, 1))  # (alpha^2, C, O)
    dw = _weight_from_tiles(xp, du, m)
    if channels_last:
        return xp.ascontiguousarray(dw.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    return dw


def _weight_from_tiles(xp, du, m):
    """``G^T dU G`` per channel pair: ``(alpha^2, C, O)`` -> ``(O, C, 3, 3)``, in
    float64 (the arrays are small) and rounded once."""
    alpha = m + 2
    g = MATRICES[m][1]
    C, O = du.shape[1:]
    tiles = np.asarray(du, dtype=np.float64).reshape(alpha, alpha, C * O).transpose(2, 0, 1)  # (C*O, k, l)
    w = g.T @ tiles @ g  # (C*O, 3, 3)
    return xp.asarray(np.ascontiguousarray(w.reshape(C, O, 3, 3).transpose(1, 0, 2, 3), dtype=du.dtype))
