"""``sigmoid_focal_loss``: RetinaNet's focal loss on logits.

PyTorch counterpart: torchvision/ops/focal_loss.py (torchvision 0.28).
"""

import ember
import ember.nn.functional as F


def sigmoid_focal_loss(inputs, targets, alpha=0.25, gamma=2, reduction="none"):
    """Binary cross-entropy scaled down where the prediction is already right (Lin et al.,
    2017): ``alpha_t * (1 - p_t) ** gamma * BCE(inputs, targets)``, with ``p_t`` the
    probability given to the true class and ``alpha_t = alpha`` for positives,
    ``1 - alpha`` for negatives (no weighting when ``alpha < 0``).

    Args:
        inputs: logits of any shape.
        targets: the same shape, 0 or 1 (or a soft label in between).
        alpha: the positives' weight in (0, 1), or -1 for none.
        gamma: how fast easy examples are discounted.
        reduction: ``"none"``, ``"mean"`` or ``"sum"``.

    >>> sigmoid_focal_loss(ember.tensor([0.0]), ember.tensor([1.0]), reduction="sum")
    tensor(0.0433)
    """
    p = ember.sigmoid(inputs)
    ce_loss = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce_loss * ((1 - p_t) ** gamma)
    if alpha >= 0:
        loss = (alpha * targets + (1 - alpha) * (1 - targets)) * loss
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"Invalid Value for arg 'reduction': '{reduction} \n Supported reduction modes: 'none', 'mean', "
                     "'sum'")
