"""Image transforms as callable objects, composable with ``Compose``.

PyTorch counterpart: torchvision/transforms/transforms.py (v0.28). Random transforms
draw from ember's default generator, which each DataLoader worker seeds differently
(``base_seed + worker_id``), so workers do not repeat each other's augmentations and a
seeded run repeats exactly.
"""

import math
import numbers

from ember_data.transforms import functional as F
from ember_data.transforms.functional import InterpolationMode


def _rng():
    from ember.random import default_generator

    return default_generator.numpy


class Compose:
    """Apply ``transforms`` in order."""

    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for transform in self.transforms:
            img = transform(img)
        return img

    def __repr__(self):
        lines = "".join(f"\n    {t}" for t in self.transforms)
        return f"{type(self).__name__}({lines}\n)"


class ToTensor:
    """PIL image or HWC array -> CHW float32 tensor in [0, 1] (for uint8 input)."""

    def __call__(self, pic):
        return F.to_tensor(pic)

    def __repr__(self):
        return f"{type(self).__name__}()"


class PILToTensor:
    """PIL image -> CHW tensor of its own dtype, unscaled."""

    def __call__(self, pic):
        return F.pil_to_tensor(pic)

    def __repr__(self):
        return f"{type(self).__name__}()"


class Normalize:
    """``(x - mean) / std`` per channel."""

    def __init__(self, mean, std, inplace=False):
        self.mean, self.std, self.inplace = mean, std, inplace

    def __call__(self, tensor):
        return F.normalize(tensor, self.mean, self.std, self.inplace)

    def __repr__(self):
        return f"{type(self).__name__}(mean={self.mean}, std={self.std})"


class Resize:
    """Resize to ``size``: an int sets the shorter edge (aspect kept), a pair is (h, w)."""

    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None):
        if not isinstance(size, (int, list, tuple)) or (not isinstance(size, int) and len(size) not in (1, 2)):
            raise TypeError(f"Size should be int or sequence of length 1 or 2. Got {size}")
        self.size, self.interpolation, self.max_size = size, interpolation, max_size

    def __call__(self, img):
        return F.resize(img, self.size, self.interpolation, self.max_size)

    def __repr__(self):
        return f"{type(self).__name__}(size={self.size}, interpolation={self.interpolation})"


class CenterCrop:
    """The centred ``size`` window (int or (h, w))."""

    def __init__(self, size):
        self.size = F._pair(size)

    def __call__(self, img):
        return F.center_crop(img, self.size)

    def __repr__(self):
        return f"{type(self).__name__}(size={self.size})"


class RandomCrop:
    """A ``size`` window at a uniformly random position (after optional ``padding``)."""

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0):
        self.size = F._pair(size)
        self.padding, self.pad_if_needed, self.fill = padding, pad_if_needed, fill

    @staticmethod
    def get_params(img, output_size):
        """``(top, left, height, width)`` of a random window of ``output_size``."""
        _, height, width = F.get_dimensions(img)
        crop_height, crop_width = output_size
        if height < crop_height or width < crop_width:
            raise ValueError(f"Required crop size {(crop_height, crop_width)} is larger than input image size "
                             f"{(height, width)}")
        if (height, width) == (crop_height, crop_width):
            return 0, 0, height, width
        top = int(_rng().integers(0, height - crop_height + 1))
        left = int(_rng().integers(0, width - crop_width + 1))
        return top, left, crop_height, crop_width

    def __call__(self, img):
        if self.padding is not None:
            img = _pad(img, self.padding, self.fill)
        _, height, width = F.get_dimensions(img)
        if self.pad_if_needed:
            extra_w, extra_h = max(self.size[1] - width, 0), max(self.size[0] - height, 0)
            if extra_w or extra_h:
                img = _pad(img, (extra_w, extra_h), self.fill)
        return F.crop(img, *self.get_params(img, self.size))

    def __repr__(self):
        return f"{type(self).__name__}(size={self.size}, padding={self.padding})"


def _pad(img, padding, fill):
    """Constant padding; ``padding`` is an int, (left/right, top/bottom) or (l, t, r, b)."""
    if isinstance(padding, numbers.Number):
        padding = (padding,) * 4
    elif len(padding) == 2:
        padding = (padding[0], padding[1], padding[0], padding[1])
    left, top, right, bottom = (int(p) for p in padding)
    if F._is_pil(img):
        from PIL import Image

        out = Image.new(img.mode, (img.width + left + right, img.height + top + bottom), fill)
        out.paste(img, (left, top))
        return out
    import ember

    return ember.nn.functional.pad(img, [left, right, top, bottom], value=fill)


class RandomResizedCrop:
    """A random window of random area (``scale`` of the image) and aspect ``ratio``,
    resized to ``size``; after 10 failed draws, the centre window of the clamped ratio."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation=InterpolationMode.BILINEAR):
        self.size = F._pair(size)
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            import warnings

            warnings.warn("Scale and ratio should be of kind (min, max)", stacklevel=2)
        self.scale, self.ratio, self.interpolation = scale, ratio, interpolation

    @staticmethod
    def get_params(img, scale, ratio):
        """``(top, left, height, width)`` of the window to crop."""
        _, height, width = F.get_dimensions(img)
        area = height * width
        log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
        rng = _rng()
        for _ in range(10):
            target_area = area * rng.uniform(scale[0], scale[1])
            aspect = math.exp(rng.uniform(log_ratio[0], log_ratio[1]))
            w = int(round(math.sqrt(target_area * aspect)))
            h = int(round(math.sqrt(target_area / aspect)))
            if 0 < w <= width and 0 < h <= height:
                top = int(rng.integers(0, height - h + 1))
                left = int(rng.integers(0, width - w + 1))
                return top, left, h, w
        in_ratio = width / height
        if in_ratio < min(ratio):
            w, h = width, int(round(width / min(ratio)))
        elif in_ratio > max(ratio):
            h, w = height, int(round(height * max(ratio)))
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def __call__(self, img):
        top, left, h, w = self.get_params(img, self.scale, self.ratio)
        return F.resized_crop(img, top, left, h, w, self.size, self.interpolation)

    def __repr__(self):
        return f"{type(self).__name__}(size={self.size}, scale={self.scale}, ratio={self.ratio})"


class RandomHorizontalFlip:
    """Mirror with probability ``p``."""

    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, img):
        return F.hflip(img) if _rng().random() < self.p else img

    def __repr__(self):
        return f"{type(self).__name__}(p={self.p})"


class ColorJitter:
    """Random brightness, contrast, saturation and hue changes, applied in a random order.

    A number ``v`` means a factor drawn from ``[max(0, 1 - v), 1 + v]`` (hue: a shift
    from ``[-v, v]``, ``v <= 0.5``); a pair gives the range itself.
    """

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        self.brightness = _jitter_range(brightness, "brightness")
        self.contrast = _jitter_range(contrast, "contrast")
        self.saturation = _jitter_range(saturation, "saturation")
        self.hue = _jitter_range(hue, "hue", center=0, bound=(-0.5, 0.5), clip_first_on_zero=False)

    @staticmethod
    def get_params(brightness, contrast, saturation, hue):
        """``(order, b, c, s, h)``: a permutation of the four adjustments and their factors (None: skipped)."""
        rng = _rng()
        order = rng.permutation(4).tolist()
        factors = [None if r is None else float(rng.uniform(r[0], r[1]))
                   for r in (brightness, contrast, saturation, hue)]
        return (order, *factors)

    def __call__(self, img):
        order, *factors = self.get_params(self.brightness, self.contrast, self.saturation, self.hue)
        adjust = (F.adjust_brightness, F.adjust_contrast, F.adjust_saturation, F.adjust_hue)
        for which in order:
            if factors[which] is not None:
                img = adjust[which](img, factors[which])
        return img

    def __repr__(self):
        return (f"{type(self).__name__}(brightness={self.brightness}, contrast={self.contrast}, "
                f"saturation={self.saturation}, hue={self.hue})")


def _jitter_range(value, name, center=1, bound=(0, float("inf")), clip_first_on_zero=True):
    if isinstance(value, numbers.Number):
        if value < 0:
            raise ValueError(f"If {name} is a single number, it must be non negative.")
        value = [center - float(value), center + float(value)]
        if clip_first_on_zero:
            value[0] = max(value[0], 0.0)
    elif isinstance(value, (tuple, list)) and len(value) == 2:
        value = [float(value[0]), float(value[1])]
    else:
        raise TypeError(f"{name} should be a single number or a list/tuple with length 2.")
    if not bound[0] <= value[0] <= value[1] <= bound[1]:
        raise ValueError(f"{name} values should be between {bound}, but got {value}.")
    return None if value[0] == value[1] == center else tuple(value)


class Lambda:
    """Any function of one argument, as a transform."""

    def __init__(self, lambd):
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {type(lambd).__name__!r}")
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)

    def __repr__(self):
        return f"{type(self).__name__}()"


__all__ = ["Compose", "ToTensor", "PILToTensor", "Normalize", "Resize", "CenterCrop", "RandomCrop",
           "RandomResizedCrop", "RandomHorizontalFlip", "ColorJitter", "Lambda", "InterpolationMode"]
