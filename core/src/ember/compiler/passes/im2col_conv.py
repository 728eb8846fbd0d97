"""The compiled direct convolution: im2col from a pixel-major input, one matrix product
whose result is already the pixel-major output, the bias inside the product.

PyTorch counterpart: aten/src/ATen/native/ConvolutionMM2d.cpp (``slow_conv2d``, the
unfold + GEMM convolution) (v2.13); ember's eager kernel is ember/native/convolution/convolution.py.

# NOTE [ The bias inside the product ]
# columns (N*L, K) @ W (K, O) + b is the product of the columns with one more column of
# ones and [W ; b] (K+1, O): the bias is added by the GEMM's own accumulation, and the
# pass over the whole output that `y += b` costs disappears. The ones column is written
# once, when the scratch buffer of the columns is made, and never again.
"""

from ember.compiler.passes.conv_layout import CompiledConv2d, padded_pixel_major


class Im2colConv2d(CompiledConv2d):
    """Any 2-D convolution with groups 1 and dilation 1 (any kernel size, stride and
    padding), pixel-major in and out (NOTE [ Pixel-major activations in the compiled
    program ])."""

    algorithm = "im2col"

    def __init__(self, kernel_size, stride=(1, 1), padding=(0, 0)):
        super().__init__(stride, padding)
        self.kernel_size = tuple(kernel_size)

    @staticmethod
    def prepare(weight, bias):
        """``(O, C, kh, kw)`` weight (and bias) -> ``([W ; b], None)`` with W laid out
        ``(kh * kw * C, O)``: NOTE [ The bias inside the product ]."""
        import numpy as np

        matrix = weight.transpose(2, 3, 1, 0).reshape(-1, weight.shape[0])
        if bias is not None:
            matrix = np.concatenate([matrix, bias.reshape(1, -1).astype(matrix.dtype)], axis=0)
        return np.ascontiguousarray(matrix), None

    def compute(self, xp, x, weight, bias, residual=None):
        N, C, H, W = x.shape
        (kh, kw), (sh, sw), (ph, pw) = self.kernel_size, self.stride, self.padding
        OH, OW = (H + 2 * ph - kh) // sh + 1, (W + 2 * pw - kw) // sw + 1
        taps = kh * kw * C
        with_bias = weight.shape[0] == taps + 1
        cols = self.scratch(xp, "columns+1" if with_bias else "columns", (OH * OW * N, weight.shape[0]), x.dtype,
                            fill=1 if with_bias else None)
        windows = cols[:, :taps].reshape(OH, OW, N, kh, kw, C)
        if kh == kw == 1 and ph == pw == 0:
            windows[:, :, :, 0, 0] = x.transpose(2, 3, 0, 1)[:(OH - 1) * sh + 1:sh, :(OW - 1) * sw + 1:sw]
        else:
            d = padded_pixel_major(self, xp, x, H + 2 * ph, W + 2 * pw)
            s = d.strides
            windows[...] = xp.lib.stride_tricks.as_strided(
                d, (OH, OW, N, kh, kw, C), (sh * s[0], sw * s[1], s[2], s[0], s[1], s[3]))
        y = xp.matmul(cols, weight)
        if bias is not None:  # a bias that was not a constant at compile time
            y += bias
        return self.finish(xp, y.reshape(OH, OW, N, -1), residual)
