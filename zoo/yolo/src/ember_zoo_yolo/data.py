"""The detection data pipeline: a box-aware horizontal flip and the collate that makes target rows.

PyTorch counterpart: torchvision/transforms/v2/_geometry.py's RandomHorizontalFlip
(v0.28), which flips an image and its bounding boxes together, and the ``collate_fn``
of torchvision's detection references; the row format is ember's own.

NOTE [ Target rows ]
Images in a batch hold different numbers of objects, so targets cannot stack into one
tensor per field. ``collate`` stacks the images and flattens every object of the batch
into one ``(N, 6)`` float32 tensor of rows ``(batch_idx, cls, x1, y1, x2, y2)``: one
tensor, no Python list of dicts, and the loss selects an image's objects with
``rows[:, 0] == b``. ``split_targets`` turns rows back into per-image dicts for mAP.
"""

import numpy as np

import ember
from ember_data.dataset import Dataset


def hflip_boxes(boxes, width):
    """Mirror xyxy boxes in an image ``width`` wide: x1' = width - x2, x2' = width - x1."""
    x1, y1, x2, y2 = boxes.unbind(-1)
    return ember.stack([width - x2, y1, width - x1, y2], dim=-1)


def hflip(image, target):
    """Mirror a ``(C, H, W)`` image left-right, and its ``target["boxes"]`` with it."""
    flipped = dict(target)
    flipped["boxes"] = hflip_boxes(target["boxes"], image.shape[-1])
    return image.flip(-1), flipped


class RandomHorizontalFlip:
    """``(image, target) -> (image, target)``, mirrored together with probability ``p``.

    Draws from ember's generator, so ``ember.manual_seed`` fixes the flips.
    """

    def __init__(self, p=0.5):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p must be between 0 and 1, but got {p}")
        self.p = p

    def __call__(self, image, target):
        if ember.rand(1).item() < self.p:
            return hflip(image, target)
        return image, target

    def __repr__(self):
        return f"{type(self).__name__}(p={self.p})"


class PairTransformed(Dataset):
    """``dataset`` of ``(image, target)`` with ``transform(image, target)`` applied to each sample.

    The dataset's own ``transform`` sees only the image, so box-aware transforms go here.
    """

    def __init__(self, dataset, transform):
        self.dataset, self.transform = dataset, transform
        self.classes = getattr(dataset, "classes", None)

    def __len__(self):
        return len(self.dataset)

    def __getitem__(self, index):
        image, target = self.dataset[index]
        return self.transform(image, target)


def collate(batch):
    """``[(image, {"boxes", "labels"}), ...]`` -> ``(images (B, C, H, W), rows (N, 6))``.

    See NOTE [ Target rows ].
    """
    images = ember.stack([image for image, _ in batch])
    rows = [np.zeros((0, 6), dtype=np.float32)]
    for index, (_, target) in enumerate(batch):
        boxes = np.asarray(target["boxes"].numpy(), dtype=np.float32).reshape(-1, 4)
        labels = np.asarray(target["labels"].numpy(), dtype=np.float32).reshape(-1, 1)
        rows.append(np.concatenate([np.full_like(labels, index), labels, boxes], axis=1))
    return images, ember.from_numpy(np.concatenate(rows))


def split_targets(rows, batch_size):
    """Rows back to ``[{"boxes": (k, 4), "labels": (k,)}]``, one dict per image of the batch."""
    rows = rows.numpy() if isinstance(rows, ember.Tensor) else np.asarray(rows)
    return [{"boxes": rows[rows[:, 0] == b, 2:6], "labels": rows[rows[:, 0] == b, 1].astype(np.int64)}
            for b in range(batch_size)]
