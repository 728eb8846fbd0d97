"""channels_last (NHWC) convolutions a few images at a time: each chunk of images
gathers its window rows into one buffer reused by every chunk, and its product reads
them from the cache and writes its rows of the NHWC output.

PyTorch counterpart: aten/src/ATen/native/ConvolutionMM2d.cpp (v2.13), whose
``slow_conv2d`` forward and backward loop over the batch one image at a time, in
channels_last too (``thnn_conv_use_channels_last``: NHWC columns per image). The fixed
rule of ember/native/convolution/algorithm.py picks these kernels on one BLAS thread
(NOTE [ Loops of products only on one BLAS thread ] in images.py).

# NOTE [ channels_last products a few images at a time ]
# channels_last.py's kernels make one product for the whole batch: rows 9x the image
# (38 MB for bench/conv_layer.py's 32->64 layer at 32x32, batch 32), written to
# memory and read back, and past the allocator's cache faulted in afresh every step.
# Here each chunk of images (images.py's chunks: one image where it has 1024 outputs)
# gathers its rows into one reused buffer and multiplies them at once, while they are
# in the cache, straight into the chunk's rows of the output; the bias is added there
# too, while the chunk is in the cache. The backward loops the same way: the weight's
# gradient sums the chunks' products (its rows gathered again, or the forward's where
# they were kept), and the input's gradient is per chunk the product back to window
# gradients and col2im onto the chunk's images, or, at stride 1 where O <= C, the
# chunked forward of the flipped kernel (NOTE [ The input adjoint at stride 1 ] in
# channels_last.py; the same split as NCHW's, algorithm.py). Every output is still a
# dot product over the same kh*kw*C terms in the same order (taps, then channels) as
# channels_last.py's; only the weight's gradient adds its sum over the batch chunk by
# chunk, as NCHW's images.py does. Measured per product on conv_layer's layer, one
# thread, CPU time, median of 9 (ms, chunks against the whole batch): forward 14.8
# against 22.4, input's gradient 15.1 against 33.6 (by the full correlation 15.8),
# weight's gradient 15.0-15.6 gathering again against 16.4 for the product alone on
# kept rows (so 38 MB of rows are not kept: columns.py's BUDGET decides). The step
# went from 1.86-1.94 of torch's time to 1.22-1.31 (interleaved with the whole-batch
# code, load 2-8). A batch that fits one chunk keeps the whole-batch kernels, whose
# fixed cost is lower; maps under MIN_CHUNK_PIXELS outputs gained nothing by chunks.
"""

from ember.native.convolution import columns as kept_columns
from ember.native.convolution import images
from ember.native.convolution.channels_last import (
    NHWC_COL2IM_ADD,
    NHWC_ROWS_INTO,
    flipped_weight,
    full_correlation,
    output_rows,
    weight_matrix,
)
from ember.native.fold import geometry
from ember.native.support.dispatch_stub import kernel_of


def applies(xp, g, groups):
    """Whether a channels_last convolution runs a few images at a time: where NCHW's
    would (images.py's ``applies``: NumPy, one group, MIN_CHUNK_PIXELS outputs per image,
    one BLAS thread) and the batch makes more than one chunk (one chunk is the
    whole-batch product, which channels_last.py's kernels make at a lower fixed cost)."""
    K = g.kh * g.kw * g.C
    return g.N > 1 and g.L >= images.MIN_CHUNK_PIXELS and images.images_per_product(g, K) < g.N and (
        images.applies(xp, g, groups))


def _chunk_geometry(g, n):
    """``g`` for ``n`` of its images (the gather's NumPy kernel sizes its padded plane by N)."""
    if n == g.N:
        return g
    return geometry((n, g.C, g.H, g.W), (g.kh, g.kw), (g.sh, g.sw), (g.ph, g.pw), (g.dh, g.dw), (g.OH, g.OW))


def _window_rows(gather, xp, x, block, g, start, stop):
    """Images ``start:stop`` of ``x`` gathered into ``block``: their ``(n*L, K)`` window rows."""
    n = stop - start
    windows = block.reshape(1, n, g.OH, g.OW, g.kh, g.kw, g.C)
    gather(xp, x[start:stop], windows, _chunk_geometry(g, n), 1)
    return block.reshape(n * g.L, g.kh * g.kw * g.C)


def _grad_rows(xp, grad_rows, g, start, stop):
    """Images ``start:stop`` of the ``(N*L, O)`` output gradient, C-contiguous for BLAS
    (a copy only where the gradient is not NHWC: e.g. a sum's one value, broadcast)."""
    return xp.ascontiguousarray(grad_rows[start * g.L:stop * g.L])


def forward(xp, x, weight, g, bias=None):
    """F(x, W) + bias of ``x`` (any strides), one group: the channels_last ``(N, O, OH,
    OW)`` output, chunk by chunk (NOTE above); offers its rows to a capture when they fit
    (NOTE [ The forward's columns, kept for the weight's gradient ] in columns.py)."""
    gather = kernel_of(NHWC_ROWS_INTO, xp)
    K, O = g.kh * g.kw * g.C, weight.shape[0]
    w = xp.ascontiguousarray(weight_matrix(weight, 1)[0])  # (K, O), contiguous for BLAS
    store = None
    if kept_columns.wanted(K * g.N * g.L * x.dtype.itemsize):
        store = xp.empty(K * g.N * g.L, dtype=x.dtype)
        kept_columns.offer(store.reshape(1, g.N * g.L, K), "rows")
    y = xp.empty((g.N, g.OH, g.OW, O), dtype=x.dtype)
    outputs = y.reshape(g.N * g.L, O)
    for start, stop, block in images.chunks(xp, g, K, x.dtype, store=store):
        out = outputs[start * g.L:stop * g.L]
        xp.matmul(_window_rows(gather, xp, x, block, g, start, stop), w, out=out)
        if bias is not None:
            out += bias
    return y.transpose(0, 3, 1, 2)


def weight_adjoint(xp, x, grad, weight_shape, g):
    """F(x, .)^T: the sum over chunks of the output gradient's rows against the chunk's
    window rows, the forward's where they were kept, else gathered again."""
    gather = kernel_of(NHWC_ROWS_INTO, xp)
    O, C, kh, kw = weight_shape
    K = kh * kw * C
    kept = kept_columns.take("rows", (1, g.N * g.L, K), x.dtype)
    store = None if kept is None else kept.reshape(-1)
    grad_rows = output_rows(grad, 1)[0]
    total = None
    for start, stop, block in images.chunks(xp, g, K, x.dtype, store=store):
        if store is None:
            rows = _window_rows(gather, xp, x, block, g, start, stop)
        else:
            rows = block.reshape((stop - start) * g.L, K)
        part = xp.matmul(_grad_rows(xp, grad_rows, g, start, stop).T, rows)  # (O, K)
        total = part if total is None else xp.add(total, part, out=total)
    return total.reshape(O, kh, kw, C).transpose(0, 3, 1, 2)


def input_adjoint(xp, grad, weight, g):
    """F(., W)^T: the ``(N, O, OH, OW)`` gradient -> the channels_last ``(N, C, H, W)``
    image, chunk by chunk: by the full correlation where it applies and O <= C, else
    the product back to window gradients and col2im (NOTE above)."""
    full = full_correlation(g, grad.shape)
    if full is not None and weight.shape[0] <= g.C:
        return forward(xp, grad, flipped_weight(weight, 1), full)
    col2im = kernel_of(NHWC_COL2IM_ADD, xp)
    K = g.kh * g.kw * g.C
    w_t = xp.ascontiguousarray(weight_matrix(weight, 1)[0].T)  # (O, K)
    grad_rows = output_rows(grad, 1)[0]
    image = xp.zeros((g.N, g.H, g.W, 1, g.C), dtype=grad.dtype)
    for start, stop, block in images.chunks(xp, g, K, grad.dtype):
        n = stop - start
        window_grads = block.reshape(n * g.L, K)
        xp.matmul(_grad_rows(xp, grad_rows, g, start, stop), w_t, out=window_grads)
        col2im(xp, window_grads.reshape(1, n, g.OH, g.OW, g.kh, g.kw, g.C), image[start:stop],
               _chunk_geometry(g, n), 1)
    return image.reshape(g.N, g.H, g.W, g.C).transpose(0, 3, 1, 2)
