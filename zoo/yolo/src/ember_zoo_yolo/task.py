"""The detection task: what ``ember train/eval/predict`` need to run a detector.

PyTorch counterpart: torchvision's references/detection/train.py and engine.py (v0.28),
which hard-code one detection loop; here the generic loop of ember/trainer/training.py asks
this object for each detection-specific step (NOTE [ The task protocol ] in
ember/zoo/tasks.py): box-aware augmentation, the collate into target rows, the loss,
COCO-style mAP (ember-metrics' MeanAveragePrecision), and boxes drawn on a PNG.
"""

import os

import numpy as np

import ember
import ember.metrics  # ember-metrics' classes, by name (the "metrics" catalogue)
from ember.zoo.images import open_image
from ember.zoo.tasks import Task, check_input_file, parse_sample_spec, samples_of
from ember_zoo_yolo.data import PairTransformed, RandomHorizontalFlip, collate, split_targets
from ember_zoo_yolo.draw import draw_detections
from ember_zoo_yolo.loss import DetectionLoss

# post-processing settings (notes/zoo.md, section 5): a low threshold for mAP, which
# rewards ranking every candidate; a high one for pictures meant for people
EVAL_CONF, PREDICT_CONF, NMS_IOU = 0.001, 0.25, 0.7


class DetectionTask(Task):
    """Images to boxes: ``(images, rows)`` batches (NOTE [ Target rows ]), metric mAP@0.5:0.95."""

    name = "detection"
    metric = "map"
    # predict runs at the image's own size (NOTE [ The image size limit ] in
    # ember/zoo/images.py): yolo_nano's forward peaks near 400 MB at 2048 x 2048
    max_image_pixels = 2048 * 2048

    def __init__(self, box_loss="ciou", flip=0.5):
        self.box_loss, self.flip = box_loss, flip
        self._criterion = None

    @property
    def criterion(self):
        """The ``DetectionLoss``, built on first use: the task is created while plugins
        register, when ``ember.nn``'s catalogue (which the loss's BCE module comes from)
        may not be built yet."""
        if self._criterion is None:
            self._criterion = DetectionLoss(box_loss=self.box_loss)
        return self._criterion

    def datasets(self, data, seed=0):
        train, val = super().datasets(data, seed)
        if self.flip:
            train = PairTransformed(train, RandomHorizontalFlip(self.flip))
        return train, val

    def describe(self, dataset):
        image, _ = dataset[0]
        classes = [str(c) for c in dataset.classes]
        return {"model_overrides": {"num_classes": len(classes), "image_size": int(image.shape[-1])},
                "classes": classes, "input_shape": [int(s) for s in image.shape]}

    def loader(self, dataset, batch_size, train, workers=0, seed=0):
        generator = ember.Generator().manual_seed(seed) if train else None
        return ember.data.DataLoader(dataset, batch_size=batch_size, shuffle=train, num_workers=workers,
                                     collate_fn=collate, generator=generator)

    def loss(self, model, batch, parts=None):
        """The training loss of one batch; ``parts`` (a dict), if given, receives the
        box and class terms."""
        images, rows = batch
        logits, raw = model(images)
        total, terms = self.criterion(logits, model.decode(raw), rows, *model.anchors)
        if parts is not None:
            parts.update(terms)
        return total

    def evaluate(self, model, loader):
        was_training = model.training
        model.eval()
        # ember-metrics' COCO mAP, from ember's "metrics" catalogue (ember/metrics.py)
        metric = ember.metrics.MeanAveragePrecision()
        total_loss, count = 0.0, 0
        try:
            with ember.no_grad():
                for images, rows in loader:
                    logits, raw = model(images)
                    boxes = model.decode(raw)
                    loss = self.criterion(logits, boxes, rows, *model.anchors)[0]
                    total_loss += loss.item() * len(images)
                    count += len(images)
                    found = detect(model, logits, boxes, EVAL_CONF)
                    metric.update(found, split_targets(rows, len(images)))
        finally:
            model.train(was_training)
        result = metric.compute()
        result = {key: float(result[key]) for key in ("map", "map_50", "map_75")}
        return {"loss": total_loss / max(count, 1), **result, "samples": count}

    def predict(self, model, input, meta, out_dir=None, top_k=5):
        """Draws the detections of each input image on a PNG in ``out_dir``; one line per image.

        ``input`` is an image file or ``DATASET:INDICES`` (validation samples, e.g.
        ``shapes-detect:0-3``). ``top_k`` is unused: every detection above the
        confidence threshold is drawn.
        """
        classes = meta.get("classes") or [str(i) for i in range(model.num_classes)]
        out_dir = out_dir or "."
        os.makedirs(out_dir, exist_ok=True)
        model.eval()
        lines = []
        for source, image in _samples(input, self.max_image_pixels):
            detection = model.predict(image.unsqueeze(0), conf_threshold=PREDICT_CONF, iou_threshold=NMS_IOU)[0]
            path = os.path.join(out_dir, _file_name(source))
            draw_detections(image, detection, classes, scale=4, width=2).save(path, format="PNG")
            lines.append(f"{source}: {_describe(detection, classes)} -> {path}")
        return lines


def detect(model, logits, boxes, conf_threshold):
    """Detections from the model's outputs, as the evaluation scores them."""
    from ember_zoo_yolo.decode import postprocess

    return postprocess(logits, boxes, conf_threshold, NMS_IOU, max_detections=300, image_size=model.input_size)


def _describe(detection, classes):
    found = [f"{classes[label]} {score:.2f} [{', '.join(f'{v:.0f}' for v in box)}]"
             for box, label, score in zip(detection["boxes"].tolist(), detection["labels"].tolist(),
                                          detection["scores"].tolist())]
    return f"{len(found)} object(s)" + (": " + "; ".join(found) if found else "")


def _file_name(source):
    stem = "".join(c if c.isalnum() or c in "-_" else "_" for c in os.path.splitext(source)[0])
    return f"{stem}_boxes.png"


def _samples(spec, max_pixels):
    """``[(source, (3, H, W) tensor)]`` from ``DATASET:INDICES`` or an image file (at its own
    size: ``YOLO.predict`` pads it to the strides)."""
    parsed = parse_sample_spec(spec)
    if parsed is not None:
        name, indices = parsed
        dataset = samples_of(name, indices)  # (refuses indices outside the split)
        return [(f"{name}[{i}]", dataset[i][0]) for i in indices]
    check_input_file(spec, "shapes-detect:0-3")
    image = open_image(spec, "RGB", max_pixels)
    array = np.asarray(image, dtype=np.float32).transpose(2, 0, 1) / 255.0
    return [(os.path.basename(spec), ember.from_numpy(np.ascontiguousarray(array)))]
