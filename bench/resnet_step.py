"""One training step of ResNet-18, CIFAR-style (3x3/1 stem, no max pool; 11.2 M
parameters), batch 32 of 3x32x32, cross-entropy, SGD with momentum 0.9 and weight decay
5e-4, in train mode (batch statistics): ember's zoo model against a torch.nn ResNet with
torchvision's names and the same weights.

PyTorch counterpart: torchvision.models.resnet18 with ``conv1`` 3x3/1 and ``maxpool``
Identity, trained with torch.optim.SGD. torchvision does not import beside this torch
build, so the torch side is the test suite's oracle, tests/zoo/resnet/torch_reference.py.

    python bench/resnet_step.py [THREADS] [--profile] [--channels-last]
    # --profile: where ember's time goes; --channels-last: both models and the input in that format

"ember im2col" is the same step with ``ember.backends.mkldnn.enabled = False`` (the
plain path), interleaved with the others; "algorithms" counts eager's measured choices
(none unless ``ember.backends.cpu.benchmark``).
"""

import pathlib
import sys

from common import (
    assert_losses_agree,
    chosen_algorithms,
    conv_flops,
    gemm_limit_figures,
    im2col_figures,
    im2col_only,
    in_format,
    interleaved,
    libraries,
    report_ms,
)

BATCH = 32
CLASSES = 10
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "zoo" / "resnet"))


def make_step(lib, model, x_np, y_np, channels_last=False):
    model = in_format(lib, model, channels_last)
    optimizer = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    x, y = in_format(lib, lib.tensor(x_np), channels_last), lib.tensor(y_np)
    model.train()

    def step():
        loss = lib.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss
    return step


def build_models():
    import torch
    from torch_reference import TorchBasicBlock, TorchResNet

    import ember

    torch.manual_seed(0)
    reference = TorchResNet(TorchBasicBlock, [2, 2, 2, 2], num_classes=CLASSES, stem="small")
    model = ember.zoo.create_model("resnet18_cifar", num_classes=CLASSES)
    model.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy()) for k, v in reference.state_dict().items()})
    return model, reference


def profile(step, rounds=5):
    """ember's time per step by file (kernels, autograd, optimizer ...), from cProfile."""
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(rounds):
        step()
    profiler.disable()
    stats = pstats.Stats(profiler)
    total = sum(s[2] for s in stats.stats.values())
    by_file = {}
    for (filename, _, _), s in stats.stats.items():
        key = pathlib.Path(filename).name if filename != "~" else "NumPy C functions called directly"
        by_file[key] = by_file.get(key, 0.0) + s[2]
    print(f"ember: {total / rounds * 1e3:.0f} ms per step under the profiler; own time by file (ms per step, share)")
    for name, own in sorted(by_file.items(), key=lambda item: -item[1])[:10]:
        print(f"  {own / rounds * 1e3:8.1f}  {own / total:5.1%}  {name}")
    by_function = sorted(((s[2], f) for f, s in stats.stats.items()), reverse=True)[:12]
    print("the 12 functions with the most own time (ms per step)")
    for own, (filename, line, name) in by_function:
        print(f"  {own / rounds * 1e3:8.1f}  {name} ({pathlib.Path(filename).name}:{line})")


def step_flops(model, x_shape):
    """Forward + grad_input + grad_weight products of every convolution (the stem's input
    needs no gradient), from the shapes a forward pass sees."""
    import torch

    shapes = []
    hooks = [m.register_forward_hook(lambda m, i, o: shapes.append((m, i[0].shape, o.shape)))
             for m in model.modules() if isinstance(m, torch.nn.Conv2d)]
    with torch.no_grad():
        model(torch.zeros(x_shape))
    for hook in hooks:
        hook.remove()
    total = 0
    for i, (m, inp, out) in enumerate(shapes):
        forward = conv_flops(inp[0], inp[1], out[1], m.kernel_size, out[2], out[3], m.groups)
        total += forward * (2 if i == 0 else 3)
    return total


def main(threads, want_profile=False, channels_last=False):
    np, torch, ember = libraries(threads)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, 3, 32, 32)).astype(np.float32)
    y = rng.integers(0, CLASSES, BATCH)
    model, reference = build_models()
    flops = step_flops(reference, x.shape)
    steps = {"ember": make_step(ember, model, x, y, channels_last),
             "torch": make_step(torch, reference, x, y, channels_last)}
    assert_losses_agree(steps, 1e-3)
    steps["ember im2col"] = im2col_only(ember, steps["ember"])
    medians = interleaved(steps, rounds=7, inner=1)
    report_ms("ResNet-18 (CIFAR-style, batch 32) train step (ms)", threads, medians,
              format="channels_last" if channels_last else "contiguous",
              **im2col_figures(medians),
              **gemm_limit_figures(np, flops, medians), algorithms=chosen_algorithms(ember, summary=True))
    if want_profile:
        profile(steps["ember"])


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if not a.startswith("--")]
    main(int(arguments[0]) if arguments else 1, "--profile" in sys.argv, "--channels-last" in sys.argv)
