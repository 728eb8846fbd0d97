"""Centre-sampling assignment (NOTE [ Centre sampling ]) on hand-made boxes."""

import numpy as np

from ember_zoo_yolo.assign import assign_batch, assign_image
from ember_zoo_yolo.decode import make_anchors


def anchors(size=64):
    points, strides = make_anchors(size, (8, 16))
    return points.numpy(), strides.numpy().reshape(-1)


def test_anchors_inside_the_box_and_near_its_centre():
    points, strides = anchors()
    box = np.array([[8.0, 8.0, 30.0, 30.0]])
    assigned = assign_image(points, strides, box, radius=2.5)
    chosen = points[assigned == 0]
    # stride-8 centres strictly inside (8, 30): 12, 20, 28; stride-16 centres inside: 24
    expected = {(x, y) for x in (12, 20, 28) for y in (12, 20, 28)} | {(24, 24)}
    assert {tuple(p) for p in chosen.tolist()} == expected


def test_radius_limits_candidates_in_a_large_box():
    points, strides = anchors()
    box = np.array([[0.0, 0.0, 64.0, 64.0]])
    near = assign_image(points, strides, box, radius=1.0)
    # within 1 stride of the centre (32, 32), strictly: stride-8 centres 28 and 36, stride-16 centre 24 and 40
    xs = sorted({p[0] for p in points[near == 0].tolist()})
    assert xs == [24.0, 28.0, 36.0, 40.0]


def test_overlapping_candidates_go_to_the_smallest_box():
    points, strides = anchors()
    boxes = np.array([[0.0, 0.0, 40.0, 40.0], [14.0, 14.0, 26.0, 26.0]])
    assigned = assign_image(points, strides, boxes)
    at = {tuple(p): a for p, a in zip(points.tolist(), assigned)}
    assert at[(20.0, 20.0)] == 1  # inside both: the small one wins
    assert at[(12.0, 12.0)] == 0  # only inside the large one


def test_a_box_without_candidates_takes_the_nearest_fine_anchor():
    points, strides = anchors()
    # 2 px box between cell centres: no centre lies strictly inside it
    box = np.array([[21.0, 21.0, 23.0, 23.0]])
    assigned = assign_image(points, strides, box)
    assert (assigned == 0).sum() == 1
    assert points[assigned == 0].tolist() == [[20.0, 20.0]]


def test_empty_ground_truth_is_all_background():
    points, strides = anchors()
    assert (assign_image(points, strides, np.zeros((0, 4))) == -1).all()


def test_batch_rows_select_each_image_objects():
    points, strides = anchors()
    rows = np.array([[0, 2, 8, 8, 30, 30], [1, 1, 40, 40, 60, 60], [1, 0, 2, 2, 14, 14]], dtype=np.float32)
    positive, labels, boxes = assign_batch(points, strides, rows, batch_size=3)
    assert positive.shape == (3, 80) and not positive[2].any()
    single = assign_image(points, strides, rows[:1, 2:])
    assert (positive[0] == (single >= 0)).all() and (labels[0][positive[0]] == 2).all()
    assert set(labels[1][positive[1]].tolist()) == {0, 1}
    for b, a in zip(*np.nonzero(positive)):
        box = boxes[b, a]
        assert box[0] < points[a, 0] < box[2] and box[1] < points[a, 1] < box[3]
