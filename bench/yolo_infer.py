"""Detector inference, images per second: ember's ``yolo_nano`` against the same network
written in torch here, with the same weights, in eval mode without a graph.

PyTorch counterpart: torch.nn.Conv2d/BatchNorm2d/SiLU/MaxPool2d/Upsample and torch.cat, the same
layers in the same order as ember_zoo_yolo (backbone.py, neck.py, head.py), with
ember's parameter names so one state dict loads into both. Timed: forward and box
decoding on a batch of 32 images of 64x64 (NMS is NumPy on ember's side and has no
torch counterpart without torchvision, so it is left out of the ratio; ember's full
``predict`` with NMS is reported alongside).

tests/zoo/yolo/test_bench_twin.py checks that the torch twin gives ember's outputs.

    python bench/yolo_infer.py [THREADS] [--channels-last]   # both models and the images in that format
    python bench/yolo_infer.py [THREADS] [--channels-last] --per-op   # also where the time goes

``--per-op`` times every leaf module of both networks on the inputs it saw in one
inference (and the box decoding), ember and torch interleaved, and prints the sums per
kind of layer (convolutions by kernel and stride) as JSON lines.
"""

import json
import os
import sys
import time

BATCH = 32


def torch_twin(num_classes, widths, channels, depth, image_size=64):
    """The torch module equivalent to ``ember_zoo_yolo.model.YOLO`` with these sizes."""
    import torch
    from torch import nn

    class ConvBNAct(nn.Module):
        def __init__(self, cin, cout, k=3, s=1):
            super().__init__()
            self.conv = nn.Conv2d(cin, cout, k, stride=s, padding=k // 2, bias=False)
            self.bn = nn.BatchNorm2d(cout, eps=1e-3, momentum=0.03)
            self.act = nn.SiLU()

        def forward(self, x):
            return self.act(self.bn(self.conv(x)))

    class Bottleneck(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.cv1, self.cv2 = ConvBNAct(c, c), ConvBNAct(c, c)

        def forward(self, x):
            return x + self.cv2(self.cv1(x))

    class CSPBlock(nn.Module):
        def __init__(self, cin, cout, n):
            super().__init__()
            hidden = cout // 2
            self.cv1, self.cv2 = ConvBNAct(cin, hidden, 1), ConvBNAct(cin, hidden, 1)
            self.blocks = nn.Sequential(*[Bottleneck(hidden) for _ in range(n)])
            self.cv3 = ConvBNAct(2 * hidden, cout, 1)

        def forward(self, x):
            return self.cv3(torch.cat([self.blocks(self.cv1(x)), self.cv2(x)], 1))

    class SPPF(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.cv1, self.cv2 = ConvBNAct(c, c // 2, 1), ConvBNAct(4 * (c // 2), c, 1)
            self.pool = nn.MaxPool2d(5, stride=1, padding=2)

        def forward(self, x):
            x = self.cv1(x)
            y1 = self.pool(x)
            y2 = self.pool(y1)
            return self.cv2(torch.cat([x, y1, y2, self.pool(y2)], 1))

    class Backbone(nn.Module):
        def __init__(self):
            super().__init__()
            stem, c4, c8, c16 = widths
            self.stem = ConvBNAct(3, stem, 3, 2)
            self.stage2 = nn.Sequential(ConvBNAct(stem, c4, 3, 2), CSPBlock(c4, c4, depth))
            self.stage3 = nn.Sequential(ConvBNAct(c4, c8, 3, 2), CSPBlock(c8, c8, depth))
            self.stage4 = nn.Sequential(ConvBNAct(c8, c16, 3, 2), CSPBlock(c16, c16, depth), SPPF(c16))

        def forward(self, x):
            p3 = self.stage3(self.stage2(self.stem(x)))
            return p3, self.stage4(p3)

    class FPN(nn.Module):
        def __init__(self):
            super().__init__()
            self.reduce = ConvBNAct(widths[3], channels, 1)
            self.upsample = nn.Upsample(scale_factor=2, mode="nearest")
            self.merge = CSPBlock(widths[2] + channels, channels, depth)

        def forward(self, p3, p4):
            n4 = self.reduce(p4)
            return self.merge(torch.cat([p3, self.upsample(n4)], 1)), n4

    class HeadLevel(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = ConvBNAct(channels, channels, 1)
            self.cls_conv, self.reg_conv = ConvBNAct(channels, channels), ConvBNAct(channels, channels)
            self.cls_pred, self.reg_pred = nn.Conv2d(channels, num_classes, 1), nn.Conv2d(channels, 4, 1)

        def forward(self, x):
            x = self.stem(x)
            flat = lambda t: t.flatten(2).transpose(1, 2)
            return flat(self.cls_pred(self.cls_conv(x))), flat(self.reg_pred(self.reg_conv(x)))

    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.levels = nn.ModuleList([HeadLevel(), HeadLevel()])

    class YOLO(nn.Module):
        def __init__(self):
            super().__init__()
            self.backbone, self.neck, self.head = Backbone(), FPN(), Head()
            points, strides = [], []
            for stride in (8, 16):
                cells = image_size // stride
                centres = (torch.arange(cells, dtype=torch.float32) + 0.5) * stride
                ys, xs = torch.meshgrid(centres, centres, indexing="ij")
                points.append(torch.stack([xs.flatten(), ys.flatten()], 1))
                strides.append(torch.full((cells * cells, 1), float(stride)))
            self.points, self.strides = torch.cat(points), torch.cat(strides)

        def forward(self, x):
            outputs = [level(f) for level, f in zip(self.head.levels, self.neck(*self.backbone(x)))]
            return torch.cat([o[0] for o in outputs], 1), torch.cat([o[1] for o in outputs], 1)

        def decode(self, raw):
            distances = torch.nn.functional.softplus(raw) * self.strides
            return torch.cat([self.points - distances[..., :2], self.points + distances[..., 2:]], -1)

    return YOLO()


def load_ember_state(torch_model, ember_model):
    """Copy ember's state dict (parameters and BatchNorm buffers) into the torch twin."""
    import torch

    state = {name: torch.from_numpy(value.numpy().copy()) for name, value in ember_model.state_dict().items()}
    torch_model.load_state_dict(state)


def make_inference(lib, model, images):
    def infer():
        with lib.no_grad():
            logits, raw = model(images)
            return lib.sigmoid(logits), model.decode(raw)
    return infer


def _layer_kind(module):
    if type(module).__name__ == "Conv2d":
        return f"Conv2d {module.kernel_size[0]}x{module.kernel_size[1]} s{module.stride[0]}"
    return type(module).__name__


def _leaf_calls(lib, model, images):
    """``[(name, kind, call)]``: each leaf module's forward on the inputs it got (a module
    called several times, as SPPF's pool, appears once per call)."""
    calls = []
    leaves = [(name, m) for name, m in model.named_modules() if not list(m.children())]
    hooks = [m.register_forward_hook(lambda m, args, out, name=name: calls.append(
        (name, _layer_kind(m), lambda m=m, args=args: m(*args)))) for name, m in leaves]
    with lib.no_grad():
        outputs = model(images)
    for hook in hooks:
        hook.remove()
    return calls, outputs


def per_op_table(np, torch, ember, ours, theirs, ember_images, torch_images, rounds=7):
    """Median ms per inference spent in each kind of layer, ember against torch."""
    from common import interleaved

    ember_calls, (_, ember_raw) = _leaf_calls(ember, ours, ember_images)
    torch_calls, (_, torch_raw) = _leaf_calls(torch, theirs, torch_images)
    assert [c[0] for c in ember_calls] == [c[0] for c in torch_calls]  # the same layers, in order
    kinds = {}
    for (_, kind, ember_call), (_, _, torch_call) in zip(ember_calls, torch_calls):
        kinds.setdefault(kind, []).append((ember_call, torch_call))
    kinds["decode"] = [(lambda: ours.decode(ember_raw), lambda: theirs.decode(torch_raw))]

    def run_all(lib, side, calls):
        def run():
            with lib.no_grad():
                for pair in calls:
                    pair[side]()
        return run

    for kind, calls in kinds.items():
        times = interleaved({"ember": run_all(ember, 0, calls), "torch": run_all(torch, 1, calls)},
                            rounds=rounds, inner=2)
        print(json.dumps({"layer": kind, "calls": len(calls), "ember ms": times["ember"] * 1e3,
                          "torch ms": times["torch"] * 1e3, "ratio": times["ember"] / times["torch"]}))


def main(threads, channels_last=False, per_op=False):
    from common import in_format, interleaved, libraries

    np, torch, ember = libraries(threads)
    from ember_zoo_yolo.model import SIZES, yolo_nano

    ember.manual_seed(0)
    ours = yolo_nano().eval()
    widths, channels, depth = SIZES["yolo_nano"]
    theirs = torch_twin(3, widths, channels, depth).eval()
    load_ember_state(theirs, ours)
    images = np.random.default_rng(0).random((BATCH, 3, 64, 64), dtype=np.float32)
    ours, theirs = in_format(ember, ours, channels_last), in_format(torch, theirs, channels_last)
    ember_images = in_format(ember, ember.from_numpy(images), channels_last)
    torch_images = in_format(torch, torch.from_numpy(images), channels_last)
    ember_infer = make_inference(ember, ours, ember_images)
    torch_infer = make_inference(torch, theirs, torch_images)
    difference = np.abs(ember_infer()[1].numpy() - torch_infer()[1].numpy()).max()
    assert difference < 1e-3, difference  # the same network on both sides
    times = interleaved({"ember": ember_infer, "torch": torch_infer,
                         "ember_nms": lambda: ours.predict(ember_images)}, rounds=7, inner=2)
    # On a shared machine the wall-clock ratio moves with the load; CPU time much less.
    cpu = interleaved({"ember": ember_infer, "torch": torch_infer}, rounds=11, inner=2, clock=time.process_time)
    print(json.dumps({"benchmark": "yolo_nano inference, batch 32x64x64 (img/s)", "threads": threads,
                      "format": "channels_last" if channels_last else "contiguous",
                      "ember": BATCH / times["ember"], "torch": BATCH / times["torch"],
                      "ratio": times["ember"] / times["torch"],
                      "ember with NMS img/s": BATCH / times["ember_nms"],
                      "cpu ratio": round(cpu["ember"] / cpu["torch"], 3), "load": round(os.getloadavg()[0], 2)}))
    if per_op:
        per_op_table(np, torch, ember, ours, theirs, ember_images, torch_images)


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if not a.startswith("--")]
    main(int(arguments[0]) if arguments else 1, "--channels-last" in sys.argv, "--per-op" in sys.argv)
