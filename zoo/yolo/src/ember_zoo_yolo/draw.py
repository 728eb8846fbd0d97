"""Drawing detections on an image with Pillow: boxes, class names and scores.

PyTorch counterpart: torchvision/utils.py ``draw_bounding_boxes`` (v0.28), which draws
on a uint8 tensor; ember draws on a PIL image and returns it, since the only consumer
is ``ember predict``, which saves a PNG.
"""

import numpy as np

import ember

# one colour per class, bright on the dark canvases of shapes-detect; repeats past 8 classes
PALETTE = [(255, 64, 64), (64, 255, 64), (64, 160, 255), (255, 220, 0), (255, 0, 255), (0, 255, 255),
           (255, 140, 0), (180, 120, 255)]


def to_pil(image):
    """A ``(3, H, W)`` float tensor in [0, 1] (or a PIL image) -> an RGB PIL image."""
    from PIL import Image

    if isinstance(image, Image.Image):
        return image.convert("RGB")
    array = image.detach().numpy() if isinstance(image, ember.Tensor) else np.asarray(image)
    array = (np.clip(array.transpose(1, 2, 0), 0, 1) * 255).round().astype(np.uint8)
    return Image.fromarray(np.ascontiguousarray(array), "RGB")


def draw_detections(image, detection, classes=None, scale=1, width=1):
    """A new RGB image with each detection's box, class name and score drawn on it.

    Args:
        image: ``(3, H, W)`` tensor in [0, 1] or a PIL image.
        detection: ``{"boxes": (k, 4) xyxy, "labels": (k,), "scores": (k,)}`` (scores optional).
        classes: names for the labels; default the label numbers.
        scale: enlarge the image this many times first (nearest), so text stays readable
            on a 64-pixel image; boxes are scaled with it.
        width: line width in (scaled) pixels.
    """
    from PIL import Image, ImageDraw

    canvas = to_pil(image)
    if scale != 1:
        canvas = canvas.resize((canvas.width * scale, canvas.height * scale), Image.NEAREST)
    draw = ImageDraw.Draw(canvas)
    boxes = _numpy(detection["boxes"]).reshape(-1, 4) * scale
    labels = _numpy(detection["labels"]).reshape(-1).astype(int)
    scores = _numpy(detection["scores"]).reshape(-1) if "scores" in detection else [None] * len(labels)
    for box, label, score in zip(boxes, labels, scores):
        colour = PALETTE[label % len(PALETTE)]
        x1, y1, x2, y2 = (float(v) for v in box)
        # xyxy ends are exclusive; Pillow's rectangle includes its last pixel
        draw.rectangle([x1, y1, max(x1, x2 - 1), max(y1, y2 - 1)], outline=colour, width=width)
        name = classes[label] if classes is not None else str(label)
        text = name if score is None else f"{name} {score:.2f}"
        draw.text((x1 + 1, max(0.0, y1 - 11)), text, fill=colour)
    return canvas


def _numpy(value):
    return value.detach().numpy() if isinstance(value, ember.Tensor) else np.asarray(value)
