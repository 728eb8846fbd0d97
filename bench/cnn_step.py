"""One training step of a CIFAR-style CNN (issue 3): conv3x3 3->32 pad 1, conv3x3
32->64 stride 2, conv3x3 64->128 stride 2, ReLU after each, global average pool,
linear 128->10, cross-entropy, SGD with momentum 0.9; batch 32 of 3x32x32. ember
against torch on the same data and initial weights.

PyTorch counterpart: torch.nn.functional.conv2d/relu/adaptive_avg_pool2d/linear with
a hand-written SGD update, the same calls on both sides so the comparison is of the
frameworks' kernels and autograd costs.

    python bench/cnn_step.py [THREADS] [--channels-last]   # input and conv weights channels_last
"""

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
    momentum_sgd,
    report_ms,
)

BATCH = 32
# (out_channels, in_channels, stride, padding) of each 3x3 convolution.
CONVS = ((32, 3, 1, 1), (64, 32, 2, 1), (128, 64, 2, 1))
CLASSES = 10


def make_step(lib, weights, x_np, y_np, channels_last=False):
    F = lib.nn.functional
    params = [(in_format(lib, lib.tensor(w), channels_last) if w.ndim == 4 else lib.tensor(w)).requires_grad_()
              for w in weights]
    velocities = [lib.zeros_like(p) for p in params]
    x, y = in_format(lib, lib.tensor(x_np), channels_last), lib.tensor(y_np)

    def step():
        h = x
        for i, (_, _, stride, padding) in enumerate(CONVS):
            h = F.conv2d(h, params[2 * i], params[2 * i + 1], stride=stride, padding=padding).relu()
        h = F.adaptive_avg_pool2d(h, 1).flatten(1)
        logits = F.linear(h, params[-2], params[-1])
        loss = -logits.log_softmax(1).gather(1, y.unsqueeze(1)).mean()
        loss.backward()
        momentum_sgd(lib, params, velocities)
        return loss
    return step


def initial_weights(rng, np):
    """PyTorch's default init: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weights and biases."""
    weights = []
    for out_channels, in_channels, _, _ in CONVS:
        bound = 1 / np.sqrt(in_channels * 9)
        weights += [rng.uniform(-bound, bound, (out_channels, in_channels, 3, 3)).astype(np.float32),
                    rng.uniform(-bound, bound, out_channels).astype(np.float32)]
    bound = 1 / np.sqrt(CONVS[-1][0])
    weights += [rng.uniform(-bound, bound, (CLASSES, CONVS[-1][0])).astype(np.float32),
                rng.uniform(-bound, bound, CLASSES).astype(np.float32)]
    return weights


def step_flops():
    """Forward + both backward products of the three convolutions (input 3 channels: no grad_input)."""
    total, size = 0, 32
    for i, (out_channels, in_channels, stride, _) in enumerate(CONVS):
        size = (size - 1) // stride + 1
        forward = conv_flops(BATCH, in_channels, out_channels, (3, 3), size, size)
        total += forward * (2 if i == 0 else 3)
    return total


def main(threads, channels_last):
    np, torch, ember = libraries(threads)
    rng = np.random.default_rng(0)
    weights = initial_weights(rng, np)
    x = rng.standard_normal((BATCH, 3, 32, 32)).astype(np.float32)
    y = rng.integers(0, CLASSES, BATCH)
    steps = {"ember": make_step(ember, weights, x, y, channels_last),
             "torch": make_step(torch, weights, x, y, channels_last)}
    assert_losses_agree(steps, 1e-4)
    steps["ember im2col"] = im2col_only(ember, steps["ember"])
    medians = interleaved(steps, rounds=15, inner=2)
    report_ms("CNN (CIFAR-style) train step (ms)", threads, medians,
              format="channels_last" if channels_last else "contiguous",
              **im2col_figures(medians),
              **gemm_limit_figures(np, step_flops(), medians), algorithms=chosen_algorithms(ember, summary=True))


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if not a.startswith("--")]
    main(int(arguments[0]) if arguments else 1, "--channels-last" in sys.argv)
