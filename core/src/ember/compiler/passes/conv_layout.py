"""The frame the compiled convolution kernels share: a kernel callable on tensors and on
arrays, the channel-major layout its outputs live in, and scratch buffers reused
across calls.

PyTorch counterpart: torch/_inductor/kernel/conv.py (a convolution node the compiler
lowers to its own kernel) and the channels-last idea of torch/_prims_common/__init__.py
(``suggest_memory_format``: a layout carried by strides, not by shape) (v2.13).

# NOTE [ Channel-major activations in the compiled program ]
# A convolution computed as matrix products produces (out channels, N * pixels): the
# rows of W @ columns. Eager ember transposes that back to a C-contiguous (N, C, H, W)
# image after every convolution, and the next convolution transposes it again to gather
# its columns. The compiled kernels skip both: they return the (C, N, H, W) array they
# computed, *viewed* as (N, C, H, W) (a transpose of strides, no copy). Shapes in the
# graph do not change, so every other op still sees an ordinary (N, C, H, W) array:
# NumPy's elementwise ufuncs allocate their results in the layout of their inputs
# (order 'K'), so ReLU, the residual add and the fused chains keep the layout; the next
# compiled convolution finds `x.transpose(1, 0, 2, 3)` already contiguous, and its one
# copy (into the zero-padded scratch buffer it needs anyway) reads memory in order.
# Only the program's edges pay for the layout: the first convolution reads the caller's
# (N, C, H, W) batch through a transposed view, and ops that need another layout
# (pooling, flatten) see a strided array and handle it as eager ember does.
"""


class CompiledConv2d:
    """Base of the compiled 2-D convolution kernels. A node calls it with
    ``(input, weight, bias)`` where ``weight`` is what ``prepare`` made of the
    convolution's weight (and bias) at compile time. Subclasses define ``prepare``
    and ``compute(xp, x, weight, bias)`` on arrays."""

    algorithm = None
    qualname = None

    def __init__(self, stride=(1, 1), padding=(0, 0)):
        self.stride = tuple(stride)
        self.padding = tuple(padding)
        self.workspace = {}

    @property
    def __name__(self):
        return f"conv2d_{self.algorithm}"

    def __repr__(self):
        return f"<compiled conv2d: {self.algorithm}, stride={self.stride}, padding={self.padding}>"

    def array_kernel(self, xp):
        def run(x, weight, bias):
            return self.compute(xp, x, weight, bias)
        return run

    def __call__(self, x, weight, bias):
        from ember.dispatcher import _wrap

        xp = x._device.backend.xp
        out = self.compute(xp, x._data, weight._data, None if bias is None else bias._data)
        return _wrap(out, x._device)

    def scratch(self, xp, role, shape, dtype, fill=None):
        """A buffer kept between calls (one per role, shape and dtype): big arrays are
        not allocated, page-faulted and freed on every call. The kernels of one program
        share one ``workspace`` (they run one after another), so the buffers cost the
        largest layer's, not the sum of all. ``fill`` is written once,
        when the buffer is made (the zero border of a padded input stays zero, as the
        kernels only ever write its interior)."""
        key = (role, self.padding, tuple(shape), str(dtype), xp.__name__)
        buffer = self.workspace.get(key)
        if buffer is None:
            buffer = xp.empty(shape, dtype) if fill is None else xp.full(shape, fill, dtype)
            self.workspace[key] = buffer
        return buffer


def padded_channel_major(kernel, xp, x, rows, cols):
    """``x`` (N, C, H, W), in any layout, copied into a zeroed (C, N, rows, cols) scratch
    buffer at offset ``padding``: one copy that is both the padding and the layout
    change (a plain ordered copy when ``x`` is a channel-major view)."""
    N, C, H, W = x.shape
    ph, pw = kernel.padding
    d = kernel.scratch(xp, "padded", (C, N, rows, cols), x.dtype, fill=0)
    d[:, :, ph:ph + H, pw:pw + W] = x.transpose(1, 0, 2, 3)
    return d


def as_image(channel_major):
    """A (C, N, H, W) array viewed as (N, C, H, W): NOTE [ Channel-major activations in
    the compiled program ]."""
    return channel_major.transpose(1, 0, 2, 3)
