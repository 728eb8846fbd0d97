"""The detection data pipeline: box-aware flip (checked against the flipped pixels), collate rows."""

import numpy as np
import pytest

import ember
from ember_zoo_yolo.data import PairTransformed, RandomHorizontalFlip, collate, hflip, split_targets


@pytest.fixture(scope="module")
def dataset():
    return ember.data.load_dataset("shapes-detect", split="train", seed=0, num_samples=8)


def _bright_extent(image_np, box):
    """Extent of the bright shape pixels inside (a margin around) ``box``: the drawn object."""
    x1, y1, x2, y2 = (int(v) for v in box)
    window = image_np.max(axis=0)[max(y1 - 1, 0):y2 + 1, max(x1 - 1, 0):x2 + 1] > 90 / 255
    ys, xs = np.nonzero(window)
    return [xs.min() + max(x1 - 1, 0), ys.min() + max(y1 - 1, 0), xs.max() + 1 + max(x1 - 1, 0),
            ys.max() + 1 + max(y1 - 1, 0)]


def test_flipped_boxes_still_frame_the_flipped_shapes(dataset):
    for index in range(4):
        image, target = dataset[index]
        flipped, flipped_target = hflip(image, target)
        np.testing.assert_array_equal(flipped.numpy(), image.numpy()[..., ::-1])
        for box, new_box in zip(target["boxes"].tolist(), flipped_target["boxes"].tolist()):
            assert _bright_extent(image.numpy(), box) == [int(v) for v in box]  # the premise
            assert _bright_extent(flipped.numpy(), new_box) == [int(v) for v in new_box]
        assert flipped_target["labels"] is target["labels"]


def test_random_flip_probability_and_seed(dataset):
    image, target = dataset[0]
    assert RandomHorizontalFlip(0.0)(image, target)[0] is image
    assert RandomHorizontalFlip(1.0)(image, target)[1]["boxes"].tolist() == hflip(image, target)[1]["boxes"].tolist()
    flip = RandomHorizontalFlip(0.5)
    ember.manual_seed(3)
    first = [flip(image, target)[0] is image for _ in range(20)]
    ember.manual_seed(3)
    assert first == [flip(image, target)[0] is image for _ in range(20)] and 0 < sum(first) < 20
    with pytest.raises(ValueError, match="p must be"):
        RandomHorizontalFlip(1.5)
    assert repr(flip) == "RandomHorizontalFlip(p=0.5)"


def test_collate_makes_rows_and_split_targets_undoes_it(dataset):
    batch = [dataset[i] for i in range(4)]
    images, rows = collate(batch)
    assert tuple(images.shape) == (4, 3, 64, 64) and rows.dtype == ember.float32 and rows.shape[1] == 6
    assert len(rows) == sum(len(t["labels"]) for _, t in batch)
    for (image, target), part, got in zip(batch, split_targets(rows, 4), images):
        np.testing.assert_array_equal(part["boxes"], target["boxes"].numpy())
        np.testing.assert_array_equal(part["labels"], target["labels"].numpy())
        np.testing.assert_array_equal(got.numpy(), image.numpy())
    assert rows[:, 0].tolist() == sorted(rows[:, 0].tolist())


def test_collate_of_images_without_objects():
    empty = {"boxes": ember.zeros(0, 4), "labels": ember.zeros(0, dtype=ember.int64)}
    images, rows = collate([(ember.zeros(3, 8, 8), empty)] * 2)
    assert tuple(rows.shape) == (0, 6)
    assert [len(t["labels"]) for t in split_targets(rows, 2)] == [0, 0]


def test_pair_transformed_dataset_through_a_loader(dataset):
    flipped = PairTransformed(dataset, RandomHorizontalFlip(1.0))
    assert len(flipped) == len(dataset) and flipped.classes == dataset.classes
    images, rows = next(iter(ember.data.DataLoader(flipped, batch_size=3, collate_fn=collate)))
    np.testing.assert_array_equal(images[0].numpy(), dataset[0][0].numpy()[..., ::-1])
    first = rows.numpy()[rows.numpy()[:, 0] == 0]
    np.testing.assert_array_equal(first[:, 2], 64 - dataset[0][1]["boxes"].numpy()[:, 2])
