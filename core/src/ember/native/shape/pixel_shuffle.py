"""``pixel_shuffle`` and ``pixel_unshuffle``: moving channel blocks into space and back
(the sub-pixel convolution's rearrangement).

PyTorch counterpart: aten/src/ATen/native/PixelShuffle.cpp (v2.13). Both are a reshape,
a permute and a reshape, so autograd needs nothing of its own.
"""


def _check(name, input, factor, factor_name):
    if input.dim() < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {factor_name}, but got {factor}")


def _new_output(input, out):
    # PyTorch's kernels write a new tensor, laid out as the input suggests (channels_last
    # or row-major); the reshape above may instead be a view of the input (r == 1) or
    # keep its order.
    from ember.memory_format import suggest_memory_format, suggest_strides

    layout = suggest_memory_format(input)
    if out._base is not None or out.stride() != suggest_strides(out, layout):
        return out.clone(memory_format=layout)
    return out


def pixel_shuffle(input, upscale_factor):
    """``(*, C r^2, H, W) -> (*, C, H r, W r)``: each group of ``r^2`` channels becomes an
    ``r x r`` block of pixels.

    >>> import ember
    >>> ember.nn.functional.pixel_shuffle(ember.arange(8.).reshape(1, 4, 1, 2), 2).shape
    ember.Size([1, 1, 2, 4])
    """
    r = upscale_factor
    _check("pixel_shuffle", input, r, "upscale_factor")
    *batch, channels, height, width = input.shape
    if channels % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={channels} is not divisible by {r * r}")
    n = len(batch)
    x = input.reshape(*batch, channels // (r * r), r, r, height, width)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)  # (*, C, H, r, W, r)
    return _new_output(input, x.reshape(*batch, channels // (r * r), height * r, width * r))


def pixel_unshuffle(input, downscale_factor):
    """``(*, C, H r, W r) -> (*, C r^2, H, W)``: the inverse of ``pixel_shuffle``.

    >>> import ember
    >>> ember.nn.functional.pixel_unshuffle(ember.arange(8.).reshape(1, 1, 2, 4), 2).shape
    ember.Size([1, 4, 1, 2])
    """
    r = downscale_factor
    _check("pixel_unshuffle", input, r, "downscale_factor")
    *batch, channels, height, width = input.shape
    for dim, size, what in ((-2, height, "height"), (-1, width, "width")):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {what} to be divisible by downscale_factor, but "
                               f"input.size({dim})={size} is not divisible by {r}")
    if input.numel() == 0:  # PyTorch returns an empty input's shape unchanged here (not for pixel_shuffle)
        return input.clone()
    n = len(batch)
    x = input.reshape(*batch, channels, height // r, r, width // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)  # (*, C, r, r, H, W)
    return _new_output(input, x.reshape(*batch, channels * r * r, height // r, width // r))
