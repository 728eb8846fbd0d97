"""Transforms against expectations computed here with Pillow and NumPy (torchvision
does not import beside torch 2.13 on this machine; its PIL code paths are what these
expectations restate)."""

import itertools

import numpy as np
import pytest
import torch
from PIL import Image, ImageEnhance, ImageOps

import ember
from ember.data import transforms as T
from ember.data.transforms import functional as F


def _image(width=40, height=30, mode="RGB", seed=0):
    rng = np.random.default_rng(seed)
    channels = {"RGB": 3, "L": 1}[mode]
    array = rng.integers(0, 256, size=(height, width, channels), dtype=np.uint8)
    return Image.fromarray(array.squeeze(-1) if channels == 1 else array, mode)


def _chw(img):
    array = np.asarray(img)
    return (array[:, :, None] if array.ndim == 2 else array).transpose(2, 0, 1)


@pytest.mark.parametrize("mode", ["RGB", "L"])
def test_to_tensor_and_pil_to_tensor(mode):
    img = _image(mode=mode)
    out = T.ToTensor()(img)
    assert out.dtype == ember.float32 and tuple(out.shape) == _chw(img).shape
    np.testing.assert_array_equal(out.numpy(), _chw(img).astype(np.float32) / 255)
    raw = T.PILToTensor()(img)
    assert raw.dtype == ember.uint8
    np.testing.assert_array_equal(raw.numpy(), _chw(img))


def test_to_tensor_special_modes_and_arrays():
    bits = Image.fromarray(np.array([[0, 255], [255, 0]], dtype=np.uint8)).convert("1")
    np.testing.assert_array_equal(T.ToTensor()(bits).numpy(), [[[0.0, 1.0], [1.0, 0.0]]])
    floats = Image.fromarray(np.array([[0.5, 2.0]], dtype=np.float32), "F")
    out = T.ToTensor()(floats)
    assert out.dtype == ember.float32 and out.tolist() == [[[0.5, 2.0]]]
    hwc = np.arange(24, dtype=np.uint8).reshape(2, 4, 3)
    np.testing.assert_array_equal(T.ToTensor()(hwc).numpy(), hwc.transpose(2, 0, 1) / np.float32(255))
    assert tuple(T.ToTensor()(np.zeros((5, 6), np.uint8)).shape) == (1, 5, 6)
    with pytest.raises(TypeError, match="pic should be PIL Image or ndarray"):
        T.ToTensor()([1, 2])


def test_normalize_matches_torch_arithmetic():
    x = np.random.default_rng(0).random((3, 4, 5), dtype=np.float32)
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    ours = T.Normalize(mean, std)(ember.from_numpy(x.copy()))
    theirs = (torch.from_numpy(x) - torch.tensor(mean)[:, None, None]) / torch.tensor(std)[:, None, None]
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-7)
    inplace = ember.from_numpy(x.copy())
    assert T.Normalize(mean, std, inplace=True)(inplace) is inplace
    with pytest.raises(TypeError, match="Input tensor should be a float tensor"):
        T.Normalize(mean, std)(ember.zeros(3, 2, 2, dtype=ember.int64))
    with pytest.raises(ValueError, match="std evaluated to zero"):
        T.Normalize(mean, [1.0, 0.0, 1.0])(ember.zeros(3, 2, 2))
    with pytest.raises(ValueError, match="Expected tensor to be a tensor image of size"):
        T.Normalize(mean, std)(ember.zeros(2, 2))


@pytest.mark.parametrize("size, expected", [(15, (20, 15)), ([15], (20, 15)), ((10, 12), (12, 10)),
                                            (30, (40, 30)), (45, (60, 45))])
def test_resize_matches_pillow(size, expected):
    img = _image()  # 40 wide, 30 high
    out = T.Resize(size)(img)
    assert out.size == expected
    assert np.array_equal(np.asarray(out), np.asarray(img.resize(expected, Image.Resampling.BILINEAR))) or \
        out is img
    nearest = T.Resize(size, interpolation=T.InterpolationMode.NEAREST)(img)
    assert np.array_equal(np.asarray(nearest), np.asarray(img.resize(expected, Image.Resampling.NEAREST)))


def test_resize_max_size_and_errors():
    assert T.Resize(15, max_size=18)(_image()).size == (18, 13)
    with pytest.raises(ValueError, match="max_size = 10 must be strictly greater"):
        T.Resize(15, max_size=10)(_image())
    with pytest.raises(TypeError, match="Size should be int or sequence"):
        T.Resize((1, 2, 3))
    tall = _image(width=10, height=30)
    assert T.Resize(5)(tall).size == (5, 15)


@pytest.mark.parametrize("size", [10, (7, 12), (30, 40), (35, 44), (29, 39), (1, 1)])
def test_center_crop_on_pil_and_tensor(size):
    img = _image()
    h, w = (size, size) if isinstance(size, int) else size
    out = T.CenterCrop(size)(img)
    assert out.size == (w, h)
    # the expectation: pad (floor half on top/left) when needed, then take the rounded centre
    pad_top, pad_left = max(h - 30, 0) // 2, max(w - 40, 0) // 2
    padded = np.zeros((max(30, h), max(40, w), 3), np.uint8)
    padded[pad_top:pad_top + 30, pad_left:pad_left + 40] = np.asarray(img)
    top = int(round((padded.shape[0] - h) / 2.0))
    left = int(round((padded.shape[1] - w) / 2.0))
    np.testing.assert_array_equal(np.asarray(out), padded[top:top + h, left:left + w])
    from_tensor = T.CenterCrop(size)(T.PILToTensor()(img))
    np.testing.assert_array_equal(from_tensor.numpy(), _chw(out))


def _find(window, image):
    """Every (top, left) where ``window`` sits in ``image`` (HWC arrays)."""
    h, w = window.shape[:2]
    return [(i, j) for i in range(image.shape[0] - h + 1) for j in range(image.shape[1] - w + 1)
            if np.array_equal(image[i:i + h, j:j + w], window)]


def test_random_crop_positions_are_random_and_seeded():
    img = _image()
    ember.manual_seed(0)
    crops = [np.asarray(T.RandomCrop((8, 9))(img)) for _ in range(6)]
    positions = [_find(c, np.asarray(img)) for c in crops]
    assert all(len(p) == 1 for p in positions) and len({p[0] for p in positions}) > 1
    ember.manual_seed(0)
    assert all(np.array_equal(np.asarray(T.RandomCrop((8, 9))(img)), c) for c in crops)
    assert T.RandomCrop((30, 40))(img).size == (40, 30)
    with pytest.raises(ValueError, match=r"Required crop size \(31, 40\) is larger than input image size"):
        T.RandomCrop((31, 40))(img)


def test_random_crop_padding():
    img = _image(width=4, height=3)
    out = T.RandomCrop((5, 6), padding=1)(img)
    padded = np.asarray(ImageOps.expand(img, border=1, fill=0))
    assert _find(np.asarray(out), padded)
    grown = T.RandomCrop((5, 8), pad_if_needed=True)(img)
    assert grown.size == (8, 5)
    tensor_out = T.RandomCrop(3, padding=(1, 2))(T.PILToTensor()(img))
    assert tuple(tensor_out.shape) == (3, 3, 3)


def test_random_resized_crop_window_rules():
    img = _image(width=64, height=48)
    ember.manual_seed(1)
    for _ in range(20):
        top, left, h, w = T.RandomResizedCrop.get_params(img, (0.2, 0.9), (0.5, 2.0))
        assert 0 <= top and top + h <= 48 and 0 <= left and left + w <= 64
        assert 0.5 / 1.2 <= w / h <= 2.0 * 1.2  # rounding of small sides
        assert 0.2 * 64 * 48 * 0.8 <= w * h <= 0.9 * 64 * 48 * 1.2
    # impossible ratio: the centre fallback, clamped to the ratio range
    fallback_h = int(round(64 / 5.0))
    assert T.RandomResizedCrop.get_params(img, (1.0, 1.0), (5.0, 6.0)) == ((48 - fallback_h) // 2, 0, fallback_h, 64)
    out = T.RandomResizedCrop(16)(img)
    assert out.size == (16, 16)
    ember.manual_seed(4)
    first = np.asarray(T.RandomResizedCrop((10, 12))(img))
    ember.manual_seed(4)
    np.testing.assert_array_equal(np.asarray(T.RandomResizedCrop((10, 12))(img)), first)


def test_random_resized_crop_is_resize_of_the_window():
    img = _image(width=64, height=48)
    ember.manual_seed(7)
    top, left, h, w = T.RandomResizedCrop.get_params(img, (0.08, 1.0), (3 / 4, 4 / 3))
    ember.manual_seed(7)
    out = T.RandomResizedCrop((20, 24))(img)
    expected = img.crop((left, top, left + w, top + h)).resize((24, 20), Image.Resampling.BILINEAR)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(expected))


def test_random_horizontal_flip():
    img = _image()
    np.testing.assert_array_equal(np.asarray(T.RandomHorizontalFlip(p=1.0)(img)), np.asarray(ImageOps.mirror(img)))
    assert T.RandomHorizontalFlip(p=0.0)(img) is img
    ember.manual_seed(0)
    flips = sum(T.RandomHorizontalFlip()(img) is not img for _ in range(400))
    assert 150 < flips < 250
    tensor = T.PILToTensor()(img)
    np.testing.assert_array_equal(T.RandomHorizontalFlip(p=1.0)(tensor).numpy(), _chw(ImageOps.mirror(img)))


def _hue_shift(img, factor):
    hue, saturation, value = img.convert("HSV").split()
    shifted = (np.asarray(hue).astype(np.int64) + int(factor * 255)) % 256
    return Image.merge("HSV", (Image.fromarray(shifted.astype(np.uint8), "L"), saturation, value)).convert("RGB")


def test_color_jitter_single_adjustments_match_pillow():
    img = _image()
    for name, enhancer in [("brightness", ImageEnhance.Brightness), ("contrast", ImageEnhance.Contrast),
                           ("saturation", ImageEnhance.Color)]:
        out = T.ColorJitter(**{name: (1.3, 1.3)})(img)
        np.testing.assert_array_equal(np.asarray(out), np.asarray(enhancer(img).enhance(1.3)))
    for factor in (0.2, -0.3, 0.5):
        out = T.ColorJitter(hue=(factor, factor))(img)
        np.testing.assert_array_equal(np.asarray(out), np.asarray(_hue_shift(img, factor)))
    grey = _image(mode="L")
    assert F.adjust_hue(grey, 0.3) is grey


def test_color_jitter_random_order_and_ranges():
    img = _image()
    factors = {"brightness": 1.2, "contrast": 0.7, "saturation": 1.5, "hue": 0.1}
    steps = {"brightness": lambda i: ImageEnhance.Brightness(i).enhance(1.2),
             "contrast": lambda i: ImageEnhance.Contrast(i).enhance(0.7),
             "saturation": lambda i: ImageEnhance.Color(i).enhance(1.5), "hue": lambda i: _hue_shift(i, 0.1)}
    candidates = []
    for order in itertools.permutations(steps):
        out = img
        for name in order:
            out = steps[name](out)
        candidates.append(np.asarray(out))
    jitter = T.ColorJitter(**{k: (v, v) for k, v in factors.items()})
    ember.manual_seed(0)
    for _ in range(4):
        result = np.asarray(jitter(img))
        assert any(np.array_equal(result, c) for c in candidates)
    j = T.ColorJitter(brightness=0.5, contrast=2, hue=0.2)
    assert j.brightness == (0.5, 1.5) and j.contrast == (0.0, 3.0) and j.saturation is None and j.hue == (-0.2, 0.2)
    with pytest.raises(ValueError, match="If brightness is a single number, it must be non negative."):
        T.ColorJitter(brightness=-1)
    with pytest.raises(ValueError, match="hue values should be between"):
        T.ColorJitter(hue=0.7)


def test_compose_and_lambda():
    pipeline = T.Compose([T.CenterCrop(10), T.ToTensor(), T.Lambda(lambda t: t * 2),
                          T.Normalize([0.5] * 3, [0.5] * 3)])
    out = pipeline(_image())
    expected = (np.asarray(F.center_crop(_image(), 10)).transpose(2, 0, 1) / np.float32(255) * 2 - 0.5) / 0.5
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)
    assert "CenterCrop(size=(10, 10))" in repr(pipeline)
    with pytest.raises(TypeError, match="Argument lambd should be callable"):
        T.Lambda(3)
