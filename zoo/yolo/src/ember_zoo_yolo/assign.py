"""Target assignment: which anchors learn which ground-truth box (centre sampling).

PyTorch counterpart: none in PyTorch; torchvision/models/detection/fcos.py (v0.28)
assigns FCOS targets the same way in spirit (centre sampling inside the box). The rule
here is ember's own and runs in NumPy: assignment picks indices, it has no gradient.

NOTE [ Centre sampling ]
An anchor (a cell centre, NOTE [ Anchor points and distances ]) is a candidate for a
ground-truth box when it lies strictly inside the box, so that four positive distances
can reach the box's sides, and within ``radius`` strides of the box's centre (per axis),
so that only cells near the middle, which see the whole object, learn it. An anchor
that qualifies for several boxes takes the smallest one (the large box has other
anchors; the small one may not). A box left without any candidate (possible only for
boxes smaller than a cell) takes the finest-level anchor nearest its centre, so no
object goes unlearned. Coarse levels get an object only if it covers their cell
centres, which sends large objects to stride 16 as well as stride 8.
"""

import numpy as np


def assign_image(points, strides, gt_boxes, radius=2.5):
    """Indices of the ground truth each anchor learns, or -1 for background.

    Args:
        points: ``(A, 2)`` anchor centres in pixels.
        strides: ``(A,)`` the stride of each anchor's level.
        gt_boxes: ``(G, 4)`` xyxy boxes in pixels.
        radius: the centre-sampling radius in strides.

    Returns:
        ``(A,)`` int64, values in ``-1 .. G - 1``.
    """
    num_anchors = len(points)
    if len(gt_boxes) == 0:
        return np.full(num_anchors, -1, dtype=np.int64)
    x, y = points[:, 0, None], points[:, 1, None]  # (A, 1) against (1, G)
    x1, y1, x2, y2 = (gt_boxes[None, :, i] for i in range(4))
    inside = (x > x1) & (x < x2) & (y > y1) & (y < y2)
    reach = radius * strides[:, None]
    near_centre = ((np.abs(x - (x1 + x2) / 2) < reach)
                   & (np.abs(y - (y1 + y2) / 2) < reach))
    candidate = inside & near_centre
    area = (x2 - x1) * (y2 - y1)  # (1, G)
    cost = np.where(candidate, area, np.inf)
    assigned = np.where(candidate.any(axis=1), cost.argmin(axis=1), -1)
    for g in np.flatnonzero(~candidate.any(axis=0)):
        assigned[_nearest_fine_anchor(points, strides, gt_boxes[g])] = g
    return assigned.astype(np.int64)


def _nearest_fine_anchor(points, strides, box):
    finest = np.flatnonzero(strides == strides.min())
    centre = np.array([(box[0] + box[2]) / 2, (box[1] + box[3]) / 2])
    return finest[np.argmin(((points[finest] - centre) ** 2).sum(axis=1))]


def assign_batch(points, strides, targets, batch_size, radius=2.5):
    """Assignment for a batch given collated ``(batch_idx, cls, x1, y1, x2, y2)`` rows.

    Returns ``(positive (B, A) bool, labels (B, A) int64, boxes (B, A, 4) float32)``;
    labels and boxes are meaningful only where ``positive``.
    """
    num_anchors = len(points)
    positive = np.zeros((batch_size, num_anchors), dtype=bool)
    labels = np.zeros((batch_size, num_anchors), dtype=np.int64)
    boxes = np.zeros((batch_size, num_anchors, 4), dtype=np.float32)
    for b in range(batch_size):
        rows = targets[targets[:, 0] == b]
        assigned = assign_image(points, strides, rows[:, 2:6], radius)
        mine = assigned >= 0
        positive[b] = mine
        labels[b, mine] = rows[assigned[mine], 1].astype(np.int64)
        boxes[b, mine] = rows[assigned[mine], 2:6]
    return positive, labels, boxes
