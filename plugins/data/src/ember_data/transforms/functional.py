"""Image functions behind the transforms: conversion, normalisation, geometry, colour.

PyTorch counterpart: torchvision/transforms/functional.py with its _functional_pil.py
and _functional_tensor.py (v0.28). ember works on PIL images (Pillow does the pixel
work, as torchvision's PIL path does) and, where it is plain indexing, on ember tensors
of shape (..., C, H, W) too. Colour adjustments are PIL-only.
"""

import enum
import numbers

import numpy as np

# PIL modes whose pixels are not uint8
_MODE_DTYPES = {"I": np.int32, "I;16": np.int16, "F": np.float32}


class InterpolationMode(enum.Enum):
    """Resampling filters, named as torchvision names them."""

    NEAREST = "nearest"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


def _pil_filter(interpolation):
    from PIL import Image

    if isinstance(interpolation, int):  # already a PIL constant
        return interpolation
    mode = InterpolationMode(interpolation.value if isinstance(interpolation, InterpolationMode) else interpolation)
    return getattr(Image.Resampling, mode.name)


def _is_pil(img):
    from PIL import Image

    return isinstance(img, Image.Image)


def get_dimensions(img):
    """``[channels, height, width]`` of a PIL image or a (..., C, H, W) tensor."""
    if _is_pil(img):
        return [len(img.getbands()), img.height, img.width]
    return [int(img.shape[-3]) if img.ndim >= 3 else 1, int(img.shape[-2]), int(img.shape[-1])]


# --- conversion -----------------------------------------------------------------------
def to_tensor(pic):
    """PIL image or HWC NumPy array -> CHW tensor; uint8 becomes float32 in [0, 1]."""
    import ember

    if _is_pil(pic):
        array = np.array(pic, dtype=_MODE_DTYPES.get(pic.mode, np.uint8))
        if pic.mode == "1":
            array = 255 * array
        array = array.reshape(pic.height, pic.width, len(pic.getbands()))
    elif isinstance(pic, np.ndarray):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        array = pic[:, :, None] if pic.ndim == 2 else pic
    else:
        raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
    chw = array.transpose(2, 0, 1)
    if chw.dtype == np.uint8:
        scaled = chw.astype(np.float32)
        np.divide(scaled, 255, out=scaled)
        return ember.from_numpy(scaled)
    return ember.from_numpy(np.ascontiguousarray(chw))


def pil_to_tensor(pic):
    """PIL image -> CHW tensor of the image's own dtype (uint8 for RGB/L), unscaled."""
    import ember

    if not _is_pil(pic):
        raise TypeError(f"pic should be PIL Image. Got {type(pic)}")
    array = np.array(pic, dtype=_MODE_DTYPES.get(pic.mode, np.uint8))
    array = array.reshape(pic.height, pic.width, len(pic.getbands()))
    return ember.from_numpy(np.ascontiguousarray(array.transpose(2, 0, 1)))


def normalize(tensor, mean, std, inplace=False):
    """``(tensor - mean[c]) / std[c]`` per channel of a float (..., C, H, W) tensor."""
    import ember

    if not isinstance(tensor, ember.Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
    if not tensor.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
    if tensor.ndim < 3:
        raise ValueError(f"Expected tensor to be a tensor image of size (..., C, H, W). Got tensor.size() = "
                         f"{tuple(tensor.shape)}")
    mean = ember.as_tensor(mean, dtype=tensor.dtype, device=tensor.device)
    std = ember.as_tensor(std, dtype=tensor.dtype, device=tensor.device)
    if bool((std == 0).any()):
        raise ValueError(f"std evaluated to zero after conversion to {tensor.dtype}, leading to division by zero.")
    if mean.ndim == 1:
        mean = mean.view(-1, 1, 1)
    if std.ndim == 1:
        std = std.view(-1, 1, 1)
    if inplace:
        return tensor.sub_(mean).div_(std)
    return (tensor - mean) / std


# --- geometry -------------------------------------------------------------------------
def _output_size(size, width, height, max_size=None):
    """(new_width, new_height) for torchvision's ``size`` rule: an int (or [int]) is the
    shorter edge, aspect ratio kept; a pair is (height, width)."""
    if isinstance(size, numbers.Number) or len(size) == 1:
        requested = int(size if isinstance(size, numbers.Number) else size[0])
        short, long = (width, height) if width <= height else (height, width)
        new_short, new_long = requested, int(requested * long / short)
        if max_size is not None:
            if max_size <= requested:
                raise ValueError(f"max_size = {max_size} must be strictly greater than the requested size for "
                                 f"the smaller edge size = {size}")
            if new_long > max_size:
                new_short, new_long = int(max_size * new_short / new_long), max_size
        return (new_short, new_long) if width <= height else (new_long, new_short)
    return int(size[1]), int(size[0])


def resize(img, size, interpolation=InterpolationMode.BILINEAR, max_size=None):
    """Resize a PIL image with Pillow's filter (PIL images only)."""
    if not _is_pil(img):
        raise TypeError(f"resize expects a PIL Image in ember (tensor resizing: ember.nn.functional.interpolate). "
                        f"Got {type(img)}")
    new_width, new_height = _output_size(size, img.width, img.height, max_size)
    if (new_width, new_height) == img.size:
        return img
    return img.resize((new_width, new_height), _pil_filter(interpolation))


def crop(img, top, left, height, width):
    """The ``height`` x ``width`` window at (``top``, ``left``); zero-filled outside the image."""
    if _is_pil(img):
        return img.crop((left, top, left + width, top + height))
    _, h, w = get_dimensions(img)
    if top >= 0 and left >= 0 and top + height <= h and left + width <= w:
        return img[..., top:top + height, left:left + width]
    import ember

    pads = [max(-left, 0), max(left + width - w, 0), max(-top, 0), max(top + height - h, 0)]
    padded = ember.nn.functional.pad(img, pads)
    return padded[..., top + pads[2]:top + pads[2] + height, left + pads[0]:left + pads[0] + width]


def _pair(size, name="size"):
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if len(size) == 1:
        return int(size[0]), int(size[0])
    if len(size) != 2:
        raise ValueError(f"Please provide only two dimensions (h, w) for {name}.")
    return int(size[0]), int(size[1])


def center_crop(img, output_size):
    """The centred ``output_size`` (int or (h, w)) window; zero-padded if the image is smaller."""
    crop_height, crop_width = _pair(output_size)
    _, height, width = get_dimensions(img)
    # A window larger than the image: torchvision pads (the floor half on the top/left)
    # and crops the centre, which is the window starting at minus that half.
    top = -((crop_height - height) // 2) if crop_height > height else int(round((height - crop_height) / 2.0))
    left = -((crop_width - width) // 2) if crop_width > width else int(round((width - crop_width) / 2.0))
    return crop(img, top, left, crop_height, crop_width)


def resized_crop(img, top, left, height, width, size, interpolation=InterpolationMode.BILINEAR):
    return resize(crop(img, top, left, height, width), size, interpolation)


def hflip(img):
    """Mirror left-right."""
    if _is_pil(img):
        from PIL import Image

        return img.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    return img.flip(-1)


# --- colour (PIL) ---------------------------------------------------------------------
def _enhance(img, enhancer, factor):
    from PIL import ImageEnhance

    if not _is_pil(img):
        raise TypeError(f"ember's colour adjustments take PIL Images. Got {type(img)}")
    return getattr(ImageEnhance, enhancer)(img).enhance(factor)


def adjust_brightness(img, brightness_factor):
    """Blend with black: 0 gives black, 1 the original."""
    return _enhance(img, "Brightness", brightness_factor)


def adjust_contrast(img, contrast_factor):
    """Blend with the mean grey level: 0 gives flat grey, 1 the original."""
    return _enhance(img, "Contrast", contrast_factor)


def adjust_saturation(img, saturation_factor):
    """Blend with the greyscale image: 0 gives grey, 1 the original."""
    return _enhance(img, "Color", saturation_factor)


def adjust_hue(img, hue_factor):
    """Rotate the hue channel by ``hue_factor`` of a turn (in [-0.5, 0.5]), in Pillow's 8-bit HSV."""
    from PIL import Image

    if not -0.5 <= hue_factor <= 0.5:
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    if not _is_pil(img):
        raise TypeError(f"ember's colour adjustments take PIL Images. Got {type(img)}")
    if img.mode in ("L", "1", "I", "F"):
        return img
    mode = img.mode
    hue, saturation, value = img.convert("HSV").split()
    shift = int(hue_factor * 255) % 256  # truncate, then wrap around the colour circle
    hue = Image.fromarray(((np.array(hue, dtype=np.uint16) + shift) % 256).astype(np.uint8), "L")
    return Image.merge("HSV", (hue, saturation, value)).convert(mode)


__all__ = ["InterpolationMode", "get_dimensions", "to_tensor", "pil_to_tensor", "normalize", "resize", "crop",
           "center_crop", "resized_crop", "hflip", "adjust_brightness", "adjust_contrast", "adjust_saturation",
           "adjust_hue"]
