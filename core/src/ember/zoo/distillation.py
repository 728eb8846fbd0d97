"""Knowledge distillation in the zoo: a trained teacher checkpoint guides a smaller student.

PyTorch counterpart: none (torch has no distillation trainer); the loss is
``ember.nn.functional.distillation_loss`` (ember-loss, Hinton et al. 2015).

    >>> distill("resnet8_cifar", "runs/r8/best.pt", "resnet8_cifar", "digits",       # doctest: +SKIP
    ...         student_overrides={"width": 4}, fraction=0.1, epochs=30)

The student trains with SGD (Nesterov momentum, cosine learning rate) on
``fraction`` of the training split, each batch scored by the frozen teacher in eval
mode; ``teacher=None`` trains the same student on the same batches with plain
cross-entropy, the baseline a distillation run is compared with. ember leaves out the
zoo trainer's progress bar, resumable checkpoints and data-parallel ranks here: this
loop is short by design (the comparison in the report runs it 6 times).
"""

import pathlib

from ember.zoo.errors import ZooError


def _subset(dataset, fraction, seed):
    """A seeded random ``fraction`` of ``dataset`` (the same images for teacher-guided and plain runs)."""
    import numpy as np

    import ember

    if not 0 < fraction <= 1:
        raise ZooError(f"fraction must be in (0, 1], got {fraction}")
    count = max(1, round(len(dataset) * fraction))
    indices = np.random.default_rng(seed).permutation(len(dataset))[:count]
    return ember.data.Subset(dataset, indices.tolist())


def distill(teacher, teacher_weights, student, data, out=None, student_overrides=None, fraction=1.0, epochs=10,
            batch_size=64, lr=0.05, temperature=4.0, alpha=0.9, seed=0, log=print):
    """Train ``student`` on ``data``, taught by ``teacher`` (or alone if ``teacher`` is None).

    Returns the student's validation metrics; writes ``out/student.pt`` (a zoo checkpoint
    ``ember eval`` reads) when ``out`` is given.
    """
    import ember
    from ember.zoo import create_model, get_task
    from ember.zoo.weights import read_checkpoint

    task = get_task(student)
    train_set, val_set = task.datasets(data, seed=0)
    described = task.describe(train_set)
    overrides = {**described["model_overrides"], **(student_overrides or {})}
    ember.manual_seed(seed)
    model = create_model(student, **overrides)
    guide = None
    if teacher is not None:
        guide = create_model(teacher, pretrained=teacher_weights).eval()
        _, checkpoint = read_checkpoint(teacher_weights)
        if (checkpoint or {}).get("data", {}).get("name", data) != data:
            raise ZooError(f"the teacher was trained on {checkpoint['data']['name']!r}, not {data!r}")
    loader = task.loader(_subset(train_set, fraction, seed), batch_size, train=True, seed=seed)
    optimizer = ember.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True, weight_decay=5e-4)
    scheduler = ember.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs * len(loader))
    for _ in range(epochs):
        _train_epoch(model, guide, loader, optimizer, scheduler, temperature, alpha)
    metrics = task.evaluate(model, task.loader(val_set, 256, train=False))
    log(f"{student} {'taught by ' + teacher if teacher else 'alone'} on {fraction:.0%} of {data}: "
        f"{task.metric} {metrics[task.metric]:.4f}")
    if out is not None:
        path = pathlib.Path(out)
        path.mkdir(parents=True, exist_ok=True)
        ember.save({"model_name": student, "model_overrides": overrides, "model": model.state_dict(),
                    "data": {**described, "name": data}, "distilled_from": teacher}, path / "student.pt")
    return metrics


def _train_epoch(model, guide, loader, optimizer, scheduler, temperature, alpha):
    import ember
    import ember.nn.functional as F

    model.train()
    for inputs, targets in loader:
        logits = model(inputs)
        if guide is None:
            loss = F.cross_entropy(logits, targets)
        else:
            with ember.no_grad():
                teacher_logits = guide(inputs)
            loss = F.distillation_loss(logits, teacher_logits, targets, temperature=temperature, alpha=alpha)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
