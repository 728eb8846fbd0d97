"""The frame the compiled convolution kernels share: a kernel callable on tensors and on
arrays, the pixel-major layout its outputs live in, and scratch buffers reused
across calls.

PyTorch counterpart: torch/_inductor/kernel/conv.py (a convolution node the compiler
lowers to its own kernel) and the channels-last idea of torch/_prims_common/__init__.py
(``suggest_memory_format``: a layout carried by strides, not by shape) (v2.13).

# NOTE [ Pixel-major activations in the compiled program ]
# The compiled kernels keep activations as (H, W, N, C) arrays: pixel-major, the batch
# and the channels of one pixel side by side, (N, C) blocks contiguous. They return that
# array *viewed* as (N, C, H, W) (a transpose of strides, no copy), so shapes in the
# graph never change and every other op still sees an ordinary (N, C, H, W) array; NumPy's
# elementwise ufuncs allocate their results in the layout of their inputs (order 'K'),
# so ReLU, the residual add and the fused chains keep the layout, and the next compiled
# convolution finds `x.transpose(2, 3, 0, 1)` already contiguous.
# Why this layout: every step of the kernels becomes one matrix product over long
# contiguous blocks, with no strided gather. im2col's columns, (output pixels * N,
# kh * kw * C), copy whole (N, C) rows, and their product with the (kh * kw * C, O)
# weight IS the next (H, W, N, O) activation, with no transposing copy back. Winograd's
# tile transforms contract the H or W axis, the outermost ones, so B^T is applied by
# one BLAS call per row (or column) block, and the transformed tiles come out as
# (tile position, tiles, C) matrices, exactly what the 16 or 36 products read
# (NOTE [ Winograd F(4x4, 3x3) ]). Eager ember instead transposes a (C, N*pixels)
# product back to a contiguous (N, C, H, W) image after every convolution. Only the
# program's edges pay for the layout: the first convolution reads the caller's batch
# through a transposed view, and ops that need (N, C, H, W) (pooling, flatten) see a
# strided array and handle it as eager ember does.
"""


class CompiledConv2d:
    """Base of the compiled 2-D convolution kernels. A node calls it with
    ``(input, weight, bias)``, or ``(input, weight, bias, residual)`` when a residual
    add was folded in, where ``weight`` is what ``prepare`` made of the convolution's
    weight (and bias) at compile time. Subclasses define ``prepare`` and
    ``compute(xp, x, weight, bias, residual)`` on arrays; ``epilogue`` lists what runs
    on the result before it is returned (``"add"`` the residual, then ``"relu"``):
    NOTE [ The convolution's epilogue ]."""

    algorithm = None
    qualname = None

    def __init__(self, stride=(1, 1), padding=(0, 0)):
        self.stride = tuple(stride)
        self.padding = tuple(padding)
        self.workspace = {}
        self.epilogue = ()

    @property
    def __name__(self):
        return f"conv2d_{self.algorithm}" + "".join(f"_{step}" for step in self.epilogue)

    def __repr__(self):
        return (f"<compiled conv2d: {self.algorithm}, stride={self.stride}, padding={self.padding}"
                f"{', then ' + ', '.join(self.epilogue) if self.epilogue else ''}>")

    def array_kernel(self, xp):
        def run(x, weight, bias, residual=None):
            return self.compute(xp, x, weight, bias, residual)
        return run

    def __call__(self, x, weight, bias, residual=None):
        from ember.dispatcher import _wrap

        xp = x._device.backend.xp
        out = self.compute(xp, x._data, weight._data, None if bias is None else bias._data,
                           None if residual is None else residual._data)
        return _wrap(out, x._device)

    def finish(self, xp, out, residual, added=False):
        """The epilogue on the (H, W, N, O) result, in place; ``added`` says the kernel
        already added the residual while writing ``out``."""
        if "add" in self.epilogue and not added:
            xp.add(out, residual.transpose(2, 3, 0, 1), out=out)
        if "relu" in self.epilogue:
            xp.maximum(out, 0, out=out)
        return as_image(out)

    def scratch(self, xp, role, shape, dtype, fill=None):
        """A buffer kept between calls (one per role, shape and dtype): big arrays are
        not allocated, page-faulted and freed on every call. The kernels of one program
        share one ``workspace`` (they run one after another), so the buffers cost the
        largest layer's, not the sum of all; like the fused chains' reused buffers
        (NOTE [ The compiled program ]), this makes one program not reentrant: two
        threads must not run the same compiled module at once. ``fill`` is written once,
        when the buffer is made (the zero border of a padded input stays zero, as the
        kernels only ever write its interior)."""
        key = (role, self.padding, tuple(shape), str(dtype), xp.__name__)
        buffer = self.workspace.get(key)
        if buffer is None:
            buffer = xp.empty(shape, dtype) if fill is None else xp.full(shape, fill, dtype)
            self.workspace[key] = buffer
        return buffer


def padded_pixel_major(kernel, xp, x, rows, cols):
    """``x`` (N, C, H, W), in any layout, copied into a zeroed (rows, cols, N, C) scratch
    buffer at offset ``padding``: one copy that is both the padding and the layout
    change (an ordered copy of (N, C) blocks when ``x`` is a pixel-major view)."""
    N, C, H, W = x.shape
    ph, pw = kernel.padding
    d = kernel.scratch(xp, "padded", (rows, cols, N, C), x.dtype, fill=0)
    d[ph:ph + H, pw:pw + W] = x.transpose(2, 3, 0, 1)
    return d


def as_image(pixel_major):
    """An (H, W, N, C) array viewed as (N, C, H, W): NOTE [ Pixel-major activations in
    the compiled program ]."""
    return pixel_major.transpose(2, 3, 0, 1)
