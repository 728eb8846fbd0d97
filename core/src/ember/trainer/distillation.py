"""Knowledge distillation as a mode of the training loop: a trained teacher guides a student.

PyTorch counterpart: none (torch has no distillation trainer); the loss is
``ember.nn.functional.distillation_loss`` (ember-loss, Hinton et al. 2015).

    $ ember train resnet8_cifar --data digits --distill-from resnet8_cifar \\
          --teacher-weights runs/r8/best.pt --model-overrides '{"width": 4}' --out runs/student

# NOTE [ Distillation is a criterion of the ordinary training loop ]
# ``ember train ... --distill-from TEACHER --teacher-weights CKPT`` runs the one
# training loop (ember/trainer/training.py: progress bar, per-epoch checkpoints,
# ``--resume``, validation) with one thing changed: the task's loss.
# ``DistillationTask`` wraps the student's task; its ``loss`` scores the batch with the
# frozen teacher (eval mode, no gradient) and returns ``distillation_loss(student,
# teacher, targets, T, alpha)``; every other method (datasets, loaders, evaluation with
# the plain task metric, predict) is the student task's own. The teacher, its weights, T
# and alpha are run options, saved in the checkpoint's ``config``, so a resumed run is
# distilled by the same teacher. ``distill`` (ember/trainer/compression.py) is that
# run called from Python, and the baseline it is compared with is the same call with
# ``teacher=None``: the same loop, batches and budget with the plain loss.
"""

from ember.zoo.errors import ZooError


class DistillationTask:
    """The student's task with the distillation loss as its criterion (NOTE [ Distillation is a
    criterion of the ordinary training loop ])."""

    def __init__(self, task, teacher, teacher_name, temperature, alpha):
        self.task, self.teacher, self.teacher_name = task, teacher, teacher_name
        self.temperature, self.alpha = temperature, alpha

    def __getattr__(self, name):  # datasets, loader, evaluate, describe, predict, metric ...: the student's
        return getattr(self.task, name)

    def loss(self, model, batch):
        import ember
        import ember.nn.functional as F

        inputs, targets = batch
        logits = model(inputs)
        with ember.no_grad():
            teacher_logits = self.teacher(inputs)
        if tuple(teacher_logits.shape) != tuple(logits.shape):
            raise ZooError(f"teacher {self.teacher_name!r} gives logits of shape {tuple(teacher_logits.shape)}, the "
                           f"student {tuple(logits.shape)}: both must score the same classes")
        return F.distillation_loss(logits, teacher_logits, targets, temperature=self.temperature, alpha=self.alpha)


def distilling(task, config, data):
    """``task`` with the teacher named in the run's ``config`` as its criterion's guide."""
    from ember.zoo import create_model, get_task
    from ember.zoo.weights import read_checkpoint

    teacher, weights = config["distill_from"], config.get("teacher_weights")
    if weights is None:
        raise ZooError("--distill-from needs --teacher-weights CKPT (the trained teacher)")
    temperature, alpha = config.get("temperature", 4.0), config.get("alpha", 0.9)
    if not temperature > 0:
        raise ZooError(f"--temperature must be positive, got {temperature}")
    if not 0 <= alpha <= 1:
        raise ZooError(f"--alpha must be in [0, 1] (the weight of the teacher's soft targets), got {alpha}")
    if task.name != "classification" or get_task(teacher).name != "classification":
        raise ZooError(f"distillation needs two classifiers; the student is a {task.name} model and teacher "
                       f"{teacher!r} a {get_task(teacher).name} model")
    _, checkpoint = read_checkpoint(weights)
    trained_on = (checkpoint or {}).get("data", {}).get("name", data)
    if trained_on != data:
        raise ZooError(f"the teacher was trained on {trained_on!r}, not {data!r}")
    guide = create_model(teacher, pretrained=weights).eval()
    for parameter in guide.parameters():
        parameter.requires_grad_(False)
    return DistillationTask(task, guide, teacher, temperature, alpha)
