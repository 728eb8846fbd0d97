"""ember-zoo-yolo: a small anchor-free detector of the YOLO family, and its box tools.

PyTorch counterpart: torchvision/models/detection/__init__.py and torchvision/ops
(v0.28) in role; the detector itself follows no PyTorch file (torchvision has no YOLO).

ember loads this module when it first needs the models catalogue and calls the hook
below; the model, task and their dependencies are imported only then.

=============  ===========================================================
file           what
=============  ===========================================================
boxes.py       box formats, IoU family, NMS, GIoU/CIoU losses (torchvision.ops)
layers.py      Conv-BN-SiLU, bottleneck, CSP-lite block, SPPF
backbone.py    stride-2 stages, features at strides 8 and 16
neck.py        top-down feature pyramid
head.py        decoupled class / box head per level
decode.py      anchor points, distances to boxes, post-processing with NMS
model.py       the detector and its sizes (yolo_nano, yolo_small)
assign.py      centre-sampling target assignment
loss.py        IoU-aware BCE + CIoU/GIoU loss
data.py        box-aware flip, collate into (batch_idx, cls, box) rows
draw.py        boxes, labels and scores drawn with Pillow
task.py        the detection task for ember train / eval / predict
=============  ===========================================================
"""

from ember.plugins import hookimpl

__version__ = "0.1.0"

# Facts shown by ``ember models``; num_params is checked against the built models in
# tests/zoo/yolo/test_task.py, measured comes from the acceptance run (README.md).
MODELS = {
    "yolo_nano": {"num_params": 391_550, "description": "anchor-free YOLO-style detector, strides 8/16, 64 px"},
    "yolo_small": {"num_params": 936_934, "description": "yolo_nano with wider layers"},
}
RECIPE = {"epochs": 5, "batch_size": 32, "optimizer": "AdamW", "lr": 2e-3, "weight_decay": 5e-4,
          "scheduler": "onecycle"}
# `ember train yolo_nano --threads 1` (the default dataset and the recipe above, seed 0;
# 5 x 63 = 315 steps) on the shared 2-core x86-64 box under load (15 min wall for 120 s of
# CPU); cpu_seconds is the whole command's. value is the best epoch's (best.pt, here the
# last); checked again by tests/zoo/yolo/test_acceptance.py.
_RUN = {"data": "shapes-detect val split (500 images)", "cpu_seconds": 120.0, "epoch": 5,
        "command": "ember train yolo_nano --threads 1"}
MEASURED = {"yolo_nano": ({"metric": "map", "value": 0.880, "last": 0.880, **_RUN},
                          {"metric": "map_50", "value": 0.992, "last": 0.992, **_RUN})}
PAPER = "Redmon et al., You Only Look Once (2016); Ge et al., YOLOX (2021)"


@hookimpl
def ember_register_models(register):
    from ember_zoo_yolo import model
    from ember_zoo_yolo.task import DetectionTask

    task = DetectionTask()
    for name, facts in MODELS.items():
        register(getattr(model, name), name=name, task=task, family="yolo", input_size=(3, 64, 64), num_classes=3,
                 default_dataset="shapes-detect", recipe=dict(RECIPE), paper=PAPER,
                 measured=MEASURED.get(name, ()), **facts)
