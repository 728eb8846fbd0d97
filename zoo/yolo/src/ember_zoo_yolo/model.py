"""The detector: backbone, neck and head, with the sizes the zoo registers.

PyTorch counterpart: none (torchvision has no YOLO); torchvision/models/detection/fcos.py
(v0.28) is the nearest anchor-free detector. Unlike torchvision's detectors, ``forward``
returns raw outputs in both modes; the loss (loss.py) and the post-processing
(``predict``, decode.py) are separate steps, so each can be read and tested alone.
"""

import ember
import ember.nn as nn
from ember_zoo_yolo.backbone import Backbone
from ember_zoo_yolo.decode import decode_boxes, make_anchors, postprocess
from ember_zoo_yolo.head import DecoupledHead
from ember_zoo_yolo.neck import FPN

# name -> (backbone widths, neck/head channels, CSP depth)
SIZES = {
    "yolo_nano": ((16, 32, 64, 96), 64, 1),
    "yolo_small": ((24, 48, 96, 160), 96, 1),
}


class YOLO(nn.Module):
    """An anchor-free, two-level (strides 8 and 16) detector for square images.

    ``forward(images)`` returns ``(logits (B, A, num_classes), raw distances (B, A, 4))``
    over the ``A`` anchors of both levels; ``decode(raw)`` turns distances into xyxy
    boxes; ``predict(images)`` gives one ``{"boxes", "scores", "labels"}`` dict per image.
    """

    def __init__(self, num_classes=3, widths=(16, 32, 64, 96), channels=64, depth=1, image_size=64):
        super().__init__()
        if image_size % 16:
            raise ValueError(f"image_size must be a multiple of the largest stride (16), but got {image_size}")
        self.num_classes, self.image_size = num_classes, image_size
        self.backbone = Backbone(widths, depth)
        self.neck = FPN(self.backbone.out_channels, channels, depth)
        self.head = DecoupledHead([channels, channels], channels, num_classes)
        self.strides = Backbone.strides
        self._anchors = make_anchors(image_size, self.strides)

    def forward(self, images):
        if images.dim() != 4 or images.shape[1] != 3:
            raise ValueError(f"expected images of shape (B, 3, H, W), but got {tuple(images.shape)}")
        if images.shape[2] != self.image_size or images.shape[3] != self.image_size:
            raise ValueError(f"this model was built for {self.image_size}x{self.image_size} images, "
                             f"but got {images.shape[2]}x{images.shape[3]}")
        return self.head(self.neck(self.backbone(images)))

    @property
    def anchors(self):
        """``(points (A, 2), strides (A, 1))``, see NOTE [ Anchor points and distances ]."""
        return self._anchors

    def decode(self, raw_distances):
        points, strides = self._anchors
        return decode_boxes(raw_distances, points, strides)

    def predict(self, images, conf_threshold=0.25, iou_threshold=0.7, max_detections=300):
        """Detections per image, in eval mode and without a graph; restores the training mode."""
        was_training = self.training
        self.eval()
        try:
            with ember.no_grad():
                logits, raw = self(images)
                return postprocess(logits, self.decode(raw), conf_threshold, iou_threshold, max_detections,
                                   image_size=self.image_size)
        finally:
            self.train(was_training)


def _builder(name):
    widths, channels, depth = SIZES[name]

    def build(num_classes=3, image_size=64, **overrides):
        options = {"widths": widths, "channels": channels, "depth": depth, **overrides}
        return YOLO(num_classes=num_classes, image_size=image_size, **options)

    build.__name__ = name
    build.__doc__ = f"``{name}``: YOLO(widths={widths}, channels={channels}, depth={depth})."
    return build


yolo_nano = _builder("yolo_nano")
yolo_small = _builder("yolo_small")
