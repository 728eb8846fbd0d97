"""The compiled direct convolution: im2col from a channel-major input, one matrix
product whose rows are already the channel-major output, the bias inside the product.

PyTorch counterpart: aten/src/ATen/native/ConvolutionMM2d.cpp (``slow_conv2d``, the
unfold + GEMM convolution) (v2.13); ember's eager kernel is ember/native/convolution.py.

# NOTE [ The bias inside the product ]
# W (O, K) @ columns (K, N*L) + b is the product of [W | b] (O, K+1) with the columns
# and one more row of ones: the bias is added by the GEMM's own accumulation, and the
# pass over the whole output that `y += b` costs disappears. The ones row is written
# once, when the scratch buffer of the columns is made, and never again.
"""

from ember.compiler.passes.conv_layout import CompiledConv2d, as_image, padded_channel_major


class Im2colConv2d(CompiledConv2d):
    """Any 2-D convolution with groups 1 and dilation 1 (any kernel size, stride and
    padding), channel-major in and out (NOTE [ Channel-major activations in the compiled
    program ])."""

    algorithm = "im2col"

    def __init__(self, kernel_size, stride=(1, 1), padding=(0, 0)):
        super().__init__(stride, padding)
        self.kernel_size = tuple(kernel_size)

    @staticmethod
    def prepare(weight, bias):
        """``(O, C, kh, kw)`` weight (and bias) -> ``([W | b], None)``: NOTE [ The bias
        inside the product ]."""
        import numpy as np

        matrix = weight.reshape(weight.shape[0], -1)
        if bias is not None:
            matrix = np.concatenate([matrix, bias.reshape(-1, 1).astype(matrix.dtype)], axis=1)
        return np.ascontiguousarray(matrix), None

    def compute(self, xp, x, weight, bias):
        N, C, H, W = x.shape
        (kh, kw), (sh, sw), (ph, pw) = self.kernel_size, self.stride, self.padding
        OH, OW = (H + 2 * ph - kh) // sh + 1, (W + 2 * pw - kw) // sw + 1
        taps = C * kh * kw
        with_bias = weight.shape[1] == taps + 1
        cols = self.scratch(xp, "columns+1" if with_bias else "columns", (weight.shape[1], N * OH * OW), x.dtype,
                            fill=1 if with_bias else None)
        windows = cols[:taps].reshape(C, kh, kw, N, OH, OW)
        if kh == kw == 1 and ph == pw == 0:
            windows[:, 0, 0] = x.transpose(1, 0, 2, 3)[:, :, ::sh, ::sw]
        else:
            d = padded_channel_major(self, xp, x, H + 2 * ph, W + 2 * pw)
            s = d.strides
            view = xp.lib.stride_tricks.as_strided(d, (C, kh, kw, N, OH, OW),
                                                   (s[0], s[2], s[3], s[1], sh * s[2], sw * s[3]))
            windows[...] = view
        y = xp.matmul(weight, cols)
        if bias is not None:  # a bias that was not a constant at compile time
            y += bias.reshape(-1, 1)
        return as_image(y.reshape(-1, N, OH, OW))
