"""``shapes`` and ``shapes-detect``: circles, squares and triangles drawn with Pillow.

PyTorch counterpart: none (torchvision's FakeData is the nearest); a synthetic stand-in
for CIFAR-style classification and COCO-style detection that needs no download.

Every image is drawn on demand from ``(seed, split, index)``, so a dataset costs no
memory, two workers draw the same image for the same index, and a seed fixes
everything. A canvas is dark noise; each shape has a bright random colour and size.
Boxes are the tight extents of the drawn pixels, ``[x0, y0, x1, y1]`` with exclusive
ends, in pixels (torchvision's detection convention).
"""

import numpy as np

from ember_data.dataset import Dataset

CLASSES = ["circle", "square", "triangle"]
_SPLITS = {"train": 0, "test": 1, "val": 2}


def _rng(seed, split, index):
    if split not in _SPLITS:
        raise ValueError(f"split must be one of {sorted(_SPLITS)}, but got {split!r}")
    return np.random.default_rng([seed, _SPLITS[split], index])


def _canvas(rng, size):
    from PIL import Image

    noise = rng.integers(0, 64, size=(size, size, 3), dtype=np.uint8)
    return Image.fromarray(noise, "RGB")


def _draw(draw, label, box, fill):
    x0, y0, x1, y1 = box
    if CLASSES[label] == "circle":
        draw.ellipse([x0, y0, x1 - 1, y1 - 1], fill=fill)
    elif CLASSES[label] == "square":
        draw.rectangle([x0, y0, x1 - 1, y1 - 1], fill=fill)
    else:
        draw.polygon([((x0 + x1 - 1) / 2, y0), (x1 - 1, y1 - 1), (x0, y1 - 1)], fill=fill)


def _colour(rng):
    colour = rng.integers(96, 256, size=3)
    colour[rng.integers(0, 3)] = 255  # at least one channel at full brightness: always visible
    return tuple(int(c) for c in colour)


def _to_tensor(image):
    from ember_data.transforms.functional import to_tensor

    return to_tensor(image)


class _ShapeImages(Dataset):
    """What both datasets share: ``num_samples`` images of ``size`` x ``size``, each drawn
    from its own generator seeded by ``(seed, split, index)``."""

    classes = CLASSES

    def __init__(self, split, seed, size, num_samples, transform, train_samples, other_samples):
        _rng(seed, split, 0)  # validates split
        self.split, self.seed, self.size = split, seed, size
        self.num_samples = num_samples if num_samples is not None else (
            train_samples if split == "train" else other_samples)
        self.transform = transform

    def __len__(self):
        return self.num_samples

    def _start(self, index):
        """``(rng, canvas)`` for ``index``: its generator and its noise background."""
        if not 0 <= index < self.num_samples:
            raise IndexError(f"index {index} is out of range for a dataset of {self.num_samples} samples")
        rng = _rng(self.seed, self.split, index)
        return rng, _canvas(rng, self.size)


class Shapes(_ShapeImages):
    """One shape per ``size`` x ``size`` RGB image: ``(image, label)``, label in 0..2.

    Without ``transform`` the image is a float32 tensor (3, size, size) in [0, 1];
    with one, ``transform`` receives the PIL image.
    """

    def __init__(self, split="train", seed=0, size=32, num_samples=None, transform=None):
        super().__init__(split, seed, size, num_samples, transform, train_samples=4000, other_samples=1000)

    def draw(self, index):
        """``(PIL image, label)`` for ``index``."""
        from PIL import ImageDraw

        rng, image = self._start(index)
        label = int(rng.integers(0, len(CLASSES)))
        side = int(rng.integers(self.size * 3 // 10, self.size * 8 // 10 + 1))
        x0, y0 = (int(v) for v in rng.integers(0, self.size - side + 1, size=2))
        _draw(ImageDraw.Draw(image), label, (x0, y0, x0 + side, y0 + side), _colour(rng))
        return image, label

    def __getitem__(self, index):
        image, label = self.draw(index)
        return (self.transform(image) if self.transform is not None else _to_tensor(image)), label


class ShapesDetect(_ShapeImages):
    """1 to ``max_objects`` non-overlapping shapes per image, for detection.

    ``(image, target)`` with ``target = {"boxes": float32 (k, 4) xyxy, "labels": int64 (k,)}``.
    Batches of variable-size targets need ``collate_fn=ShapesDetect.collate_fn``
    (images stacked, targets kept as a list).
    """

    def __init__(self, split="train", seed=0, size=64, num_samples=None, max_objects=4, min_side=8,
                 max_side=22, transform=None):
        super().__init__(split, seed, size, num_samples, transform, train_samples=2000, other_samples=500)
        self.max_objects, self.min_side, self.max_side = max_objects, min_side, max_side

    def draw(self, index):
        """``(PIL image, boxes (k, 4) float32, labels (k,) int64)`` for ``index``."""
        from PIL import Image, ImageDraw

        rng, image = self._start(index)
        draw = ImageDraw.Draw(image)
        boxes, labels = [], []
        for _ in range(int(rng.integers(1, self.max_objects + 1))):
            placed = self._place(rng, boxes)
            if placed is None:
                continue
            label = int(rng.integers(0, len(CLASSES)))
            mask = Image.new("L", image.size, 0)
            _draw(ImageDraw.Draw(mask), label, placed, 255)
            _draw(draw, label, placed, _colour(rng))
            boxes.append(mask.getbbox())  # the drawn pixels' extent
            labels.append(label)
        return image, np.array(boxes, dtype=np.float32).reshape(-1, 4), np.array(labels, dtype=np.int64)

    def _place(self, rng, boxes, attempts=20):
        """A square box that keeps a 2-pixel gap from ``boxes``, or None."""
        for _ in range(attempts):
            side = int(rng.integers(self.min_side, self.max_side + 1))
            x0, y0 = (int(v) for v in rng.integers(0, self.size - side + 1, size=2))
            box = (x0, y0, x0 + side, y0 + side)
            if all(box[2] + 2 <= b[0] or b[2] + 2 <= box[0] or box[3] + 2 <= b[1] or b[3] + 2 <= box[1]
                   for b in boxes):
                return box
        return None

    def __getitem__(self, index):
        import ember

        image, boxes, labels = self.draw(index)
        image = self.transform(image) if self.transform is not None else _to_tensor(image)
        return image, {"boxes": ember.from_numpy(boxes), "labels": ember.from_numpy(labels)}

    @staticmethod
    def collate_fn(batch):
        """``(images stacked, [target, ...])``: targets differ in size, so they stay a list."""
        from ember_data._utils.collate import default_collate

        images, targets = zip(*batch)
        return default_collate(list(images)), list(targets)
