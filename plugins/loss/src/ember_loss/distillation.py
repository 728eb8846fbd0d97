"""Knowledge distillation: match a teacher's softened probabilities while fitting the labels.

PyTorch counterpart: none in torch itself (the loss is composed from kl_div and
cross_entropy; torch/nn/functional.py holds both). Reference: G. Hinton, O. Vinyals,
J. Dean, "Distilling the Knowledge in a Neural Network", NIPS 2014 Deep Learning
Workshop, arXiv:1503.02531 (2015).

    loss = alpha * T**2 * KL(softmax(teacher / T) || softmax(student / T))
           + (1 - alpha) * cross_entropy(student, target)

The KL term is averaged over the batch (``batchmean``, the true KL per sample). Its
gradient with respect to the student logits scales as ``1 / T**2`` (section 2 of the
paper), so the ``T**2`` factor keeps the soft and hard terms' relative weight the same
whatever the temperature. The teacher's logits are detached: only the student learns.
The module form is ``ember.nn.DistillationLoss`` (modules.py).
"""

def distillation_loss(student_logits, teacher_logits, target, temperature=4.0, alpha=0.5, reduction="mean"):
    """Hinton et al.'s distillation loss for ``(N, C)`` logits and class-index ``target``.

    Args:
        student_logits: the student's raw scores, ``(N, C)``.
        teacher_logits: the teacher's raw scores for the same inputs (detached here).
        target: class indices ``(N,)`` for the hard-label term.
        temperature: ``T > 0``; higher values soften both distributions.
        alpha: weight of the soft (teacher) term in ``[0, 1]``; ``1 - alpha`` weighs the labels.
        reduction: ``"mean"`` or ``"sum"`` over the batch, for both terms.

    Returns:
        A scalar tensor.

    >>> import ember
    >>> from ember_loss.distillation import distillation_loss
    >>> student = ember.tensor([[1.0, 2.0, 0.5]])
    >>> teacher = ember.tensor([[1.0, 2.0, 0.5]])
    >>> distillation_loss(student, teacher, ember.tensor([1]), alpha=1.0)  # same logits: no soft loss
    tensor(0.)
    """
    from ember_loss.cross_entropy import cross_entropy
    from ember_loss.kl_div import kl_div

    if temperature <= 0:
        raise ValueError(f"distillation_loss: temperature must be positive, got {temperature}")
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"distillation_loss: alpha must be in [0, 1], got {alpha}")
    if reduction not in ("mean", "sum"):
        raise ValueError(f"distillation_loss: reduction must be 'mean' or 'sum', got {reduction!r}")
    if student_logits.shape != teacher_logits.shape:
        raise ValueError(f"distillation_loss: student logits {tuple(student_logits.shape)} and teacher logits "
                         f"{tuple(teacher_logits.shape)} differ in shape")
    student_log_p = (student_logits / temperature).log_softmax(dim=1)
    teacher_log_p = (teacher_logits.detach() / temperature).log_softmax(dim=1)
    soft = kl_div(student_log_p, teacher_log_p,
                  reduction="batchmean" if reduction == "mean" else "sum",
                  log_target=True)
    hard = cross_entropy(student_logits, target, reduction=reduction)
    return alpha * temperature ** 2 * soft + (1.0 - alpha) * hard
