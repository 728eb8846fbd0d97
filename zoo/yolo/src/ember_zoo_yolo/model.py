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
    """An anchor-free, two-level (strides 8 and 16) detector.

    ``forward(images)`` returns ``(logits (B, A, num_classes), raw distances (B, A, 4))``
    over the ``A`` anchors of both levels; ``decode(raw)`` turns distances into xyxy
    boxes; ``predict(images)`` gives one ``{"boxes", "scores", "labels"}`` dict per image.

    Images may have any height and width that are multiples of the largest stride (16):
    the anchor points are made for each input size and cached (``anchors_for``), as
    torchvision's detectors take any size. ``forward`` refuses other sizes, naming the
    nearest sizes that fit; ``predict`` pads such images at the bottom and right (boxes
    keep the original image's coordinates). ``image_size`` is the size the model is
    trained at by default (the dataset's), and that of ``anchors`` before any forward.
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
        self._anchor_cache = {}  # (height, width) -> anchors; a few sizes in practice
        self.input_size = (image_size, image_size)  # of the last forward: what ``anchors`` and ``decode`` use

    def forward(self, images):
        if images.dim() != 4 or images.shape[1] != 3:
            raise ValueError("expected images of shape (B, 3, H, W), but got "
                             f"{tuple(images.shape)}")
        size = (int(images.shape[2]), int(images.shape[3]))
        check_size(size, max(self.strides))
        self.input_size = size
        return self.head(self.neck(self.backbone(images)))

    def anchors_for(self, size):
        """``(points (A, 2), strides (A, 1))`` for ``(height, width)`` images, made once per
        size (NOTE [ Anchor points and distances ])."""
        size = (int(size[0]), int(size[1]))
        if size not in self._anchor_cache:
            check_size(size, max(self.strides))
            self._anchor_cache[size] = make_anchors(size, self.strides)
        return self._anchor_cache[size]

    @property
    def anchors(self):
        """The anchors of the last forward's input size (``image_size`` before any)."""
        return self.anchors_for(self.input_size)

    def decode(self, raw_distances, size=None):
        """xyxy boxes from raw distances, for ``(height, width)`` inputs (default: the last forward's)."""
        points, strides = self.anchors_for(size or self.input_size)
        return decode_boxes(raw_distances, points, strides)

    def predict(self, images, conf_threshold=0.25, iou_threshold=0.7, max_detections=300):
        """Detections per image, in eval mode and without a graph; restores the training mode.
        Images whose sides are not multiples of the largest stride are padded with zeros at the
        bottom and right; boxes are clipped to the original size."""
        was_training = self.training
        self.eval()
        size = (int(images.shape[-2]), int(images.shape[-1]))
        try:
            with ember.no_grad():
                logits, raw = self(pad_to_stride(images, max(self.strides)))
                return postprocess(logits, self.decode(raw), conf_threshold, iou_threshold, max_detections,
                                   image_size=size)
        finally:
            self.train(was_training)


def check_size(size, stride):
    """Refuse ``(height, width)`` unless both are positive multiples of ``stride``."""
    height, width = size
    if height < stride or width < stride or height % stride or width % stride:
        def fit(n):
            return max(stride, -(-n // stride) * stride)

        raise ValueError(f"the detector takes images whose height and width are multiples of its largest stride "
                         f"({stride}), but got {height}x{width}; pad them to {fit(height)}x{fit(width)} "
                         f"(ember_zoo_yolo.model.pad_to_stride; YOLO.predict does it) or resize them")


def pad_to_stride(images, stride):
    """``images`` (B, C, H, W) padded with zeros at the bottom and right to multiples of ``stride``."""
    height, width = images.shape[-2], images.shape[-1]
    bottom, right = -height % stride, -width % stride
    if not bottom and not right:
        return images
    return ember.nn.functional.pad(images, (0, right, 0, bottom))


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
