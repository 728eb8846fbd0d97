"""Tasks: what the generic ``ember train/eval/predict`` needs to know about a kind of model.

PyTorch counterpart: none in torch; torchvision's reference scripts
(references/classification/train.py, references/detection/train.py) hard-code one task
each. ember keeps one generic loop (ember/trainer/training.py) and asks the model's
``Task``, registered with the model (``task=``) as a Lightning module carries its own
``training_step``, for everything task-specific.

# NOTE [ The task protocol ]
# A model is registered with ``task="classification"`` (a task the core provides) or
# with ``task=SomeTask()``, an instance of a ``Task`` subclass its family ships
# (detection, seq2seq, language-model). The loop only ever calls these methods:
#
#   datasets(data, seed)          -> (train, val)   datasets from ember.data by name
#   describe(dataset)             -> dict           plain data saved in the checkpoint:
#       "model_overrides" (builder keywords the data fixes, e.g. num_classes) and
#       anything predict needs (class names ...)
#   loader(dataset, batch_size, train, workers, seed) -> iterable of batches
#   loss(model, batch)            -> scalar tensor  for one training step
#   batch_size(batch)             -> int            samples in a batch (throughput)
#   evaluate(model, loader)       -> dict           {"loss": ..., self.metric: ...}
#   predict(model, input, meta, out_dir, top_k)
#                                 -> list of lines to print; may write files
#
# ``metric`` names the headline validation metric (higher is better). Everything is
# plain Python around ember tensors, so a family overrides only what differs (a
# detector: collate, loss, mAP, drawing).
"""

import os

from ember.zoo.errors import ZooError
from ember.zoo.images import MAX_IMAGE_PIXELS, open_image


class Task:
    """Base of every task; subclasses set ``name`` and ``metric`` and fill in the methods."""

    name = None
    metric = None
    # the most pixels an image file given to ``predict`` may have (NOTE [ The image size
    # limit ] in ember/zoo/images.py): the image is resized to the model's input first
    max_image_pixels = MAX_IMAGE_PIXELS

    def datasets(self, data, seed=0):
        """``(train, val)`` of the dataset registered in ember.data as ``data``."""
        return load_dataset(data, "train", seed), load_dataset(data, self.val_split(data), seed)

    def val_split(self, data):
        """The split validated on: "val" where the dataset has one, else "test"."""
        import ember

        try:
            ember.data.load_dataset(data, split="val")
            return "val"
        except (ValueError, KeyError, TypeError):
            return "test"

    def describe(self, dataset):
        return {"model_overrides": {}}

    def loader(self, dataset, batch_size, train, workers=0, seed=0):
        import ember

        generator = ember.Generator().manual_seed(seed) if train else None
        return ember.data.DataLoader(dataset, batch_size=batch_size, shuffle=train, drop_last=False,
                                     num_workers=workers, generator=generator)

    def loss(self, model, batch):
        raise NotImplementedError

    def batch_size(self, batch):
        return len(batch[0])

    def evaluate(self, model, loader):
        raise NotImplementedError

    def predict(self, model, input, meta, out_dir=None, top_k=5):
        raise NotImplementedError

    def __repr__(self):
        return f"<{type(self).__name__} {self.name!r}>"


class ClassificationTask(Task):
    """Images (or any tensors) to one of ``num_classes`` labels; cross-entropy, accuracy.

    Batches are ``(inputs, targets)``. ``predict`` takes an image file, or samples of the
    validation split written ``DATASET:INDICES`` (``digits:0-4``, ``shapes:3,7``), and
    prints the ``top_k`` classes with their probabilities.
    """

    name = "classification"
    metric = "accuracy"

    def describe(self, dataset):
        image, _ = dataset[0]
        classes = [str(c) for c in getattr(dataset, "classes", None) or sorted({int(t) for t in _targets(dataset)})]
        return {"model_overrides": {"num_classes": len(classes), "in_channels": int(image.shape[0])},
                "classes": classes, "input_shape": [int(s) for s in image.shape]}

    def loss(self, model, batch):
        import ember.nn.functional as F

        inputs, targets = batch
        return F.cross_entropy(model(inputs), targets)

    def evaluate(self, model, loader, metrics=None):
        """Loss and accuracy on ``loader``; ``metrics`` (``update(logits, targets)``,
        ``compute()`` -> a dict), if given, adds its values (NOTE [ Metrics of a
        validation ] in ember/trainer/validation_metrics.py)."""
        import ember
        import ember.nn.functional as F

        was_training = model.training
        model.eval()
        total_loss, correct, count = 0.0, 0, 0
        with ember.no_grad():
            for inputs, targets in loader:
                logits = model(inputs)
                total_loss += F.cross_entropy(logits, targets, reduction="sum").item()
                correct += int((logits.argmax(1) == targets).sum().item())
                count += len(targets)
                if metrics is not None:
                    metrics.update(logits, targets)
        model.train(was_training)
        result = {"loss": total_loss / max(count, 1), "accuracy": correct / max(count, 1), "samples": count}
        return result if metrics is None else {**result, **metrics.compute()}

    def predict(self, model, input, meta, out_dir=None, top_k=5):
        import ember

        classes = meta.get("classes") or [str(i) for i in range(meta["model_overrides"]["num_classes"])]
        samples = load_samples(input, meta, max_pixels=self.max_image_pixels)
        model.eval()
        lines = []
        with ember.no_grad():
            for source, label, image in samples:
                probs = model(image.unsqueeze(0)).softmax(1)[0]
                values, indices = probs.topk(min(top_k, len(classes)))
                shown = ", ".join(f"{classes[i]} {p:.3f}" for p, i in zip(values.tolist(), indices.tolist()))
                truth = f" (true: {classes[label]})" if label is not None else ""
                lines.append(f"{source}{truth}: {shown}")
        return lines


def load_dataset(name, split, seed=0):
    """``ember.data.load_dataset``, with an unknown name as a ZooError (one line in the CLI)."""
    import ember

    try:
        return ember.data.load_dataset(name, split=split, seed=seed)
    except KeyError as exc:
        raise ZooError(exc.args[0] if exc.args else f"no dataset named {name!r}") from None


def _targets(dataset):
    targets = getattr(dataset, "targets", None)
    if targets is not None:
        return targets
    return [dataset[i][1] for i in range(len(dataset))]


def parse_sample_spec(spec):
    """``"digits:0-2,7"`` -> ``("digits", [0, 1, 2, 7])``; None when ``spec`` is a path."""
    if os.path.exists(spec) or ":" not in spec:
        return None
    name, _, indices = spec.partition(":")
    chosen = []
    for part in indices.split(","):
        first, _, last = part.partition("-")
        try:
            chosen.extend(range(int(first), int(last or first) + 1))
        except ValueError:
            raise ZooError(f"cannot read the sample indices in {spec!r}; "
                             f"write e.g. digits:0-4 or digits:3,7") from None
    return name, chosen


def load_samples(spec, meta, seed=0, max_pixels=MAX_IMAGE_PIXELS):
    """``[(source, true class index or None, tensor)]`` for a classification ``predict`` input.

    ``spec`` is ``DATASET:INDICES`` (samples of the validation split) or an image file,
    resized and converted to the checkpoint's input
    shape (``meta["input_shape"]``, channels first, values in [0, 1]); one of more than
    ``max_pixels`` pixels, or one Pillow cannot read, is a ``ZooError``.
    """

    parsed = parse_sample_spec(spec)
    if parsed is not None:
        name, indices = parsed
        dataset = samples_of(name, indices, seed)
        return [(f"{name}[{i}]", int(dataset[i][1]), dataset[i][0]) for i in indices]
    check_input_file(spec, "digits:0-4")
    return [(os.path.basename(spec), None, _image_tensor(spec, meta["input_shape"], max_pixels))]


def check_input_file(spec, example):
    """Refuse a ``predict`` input that is neither ``DATASET:INDICES`` nor a file."""
    if os.path.isdir(spec):
        raise ZooError(f"{spec!r} is a folder; predict takes an image file or DATASET:INDICES (e.g. {example})")
    if not os.path.isfile(spec):
        raise FileNotFoundError(f"no such input file: {spec!r} (or write DATASET:INDICES, e.g. {example})")


def samples_of(name, indices, seed=0):
    """The validation split of dataset ``name``, after checking that it has every index."""
    split = Task().val_split(name)
    dataset = load_dataset(name, split, seed)
    outside = [i for i in indices if not 0 <= i < len(dataset)]
    if outside:
        raise ZooError(f"{name}:{outside[0]} is out of range: the {split} split of {name!r} has "
                       f"{len(dataset)} samples ({name}:0-{len(dataset) - 1})")
    return dataset


def _image_tensor(path, input_shape, max_pixels):
    import numpy as np

    import ember

    channels, height, width = input_shape
    image = open_image(path, "L" if channels == 1 else "RGB", max_pixels).resize((width, height))
    array = np.asarray(image, dtype=np.float32) / 255.0
    array = array[None] if channels == 1 else array.transpose(2, 0, 1)
    return ember.from_numpy(np.ascontiguousarray(array))


CORE_TASKS = {"classification": ClassificationTask()}


def task_for(info):
    """The ``Task`` of a ``ModelInfo``: its own object, or the core task of that name."""
    if info.task_object is not None:
        return info.task_object
    task = CORE_TASKS.get(info.task)
    if task is None:
        raise ZooError(f"model {info.name!r} has task {info.task!r}, which the core does not provide; "
                       f"register the model with task=<a Task instance> (core tasks: {', '.join(CORE_TASKS)})")
    return task

