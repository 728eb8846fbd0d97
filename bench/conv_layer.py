"""One convolution layer, forward and forward+backward: conv3x3 32->64, padding 1, on a
batch of 32 images 32x32, ember against torch on the same data and weights.

PyTorch counterpart: torch.nn.functional.conv2d (oneDNN/im2col kernels on CPU); ember's
is the kernel the fixed rule of ember/native/convolution/algorithm.py picks (a few
images at a time on one thread: images.py, or channels_last_images.py with
``--channels-last``; Winograd only with ``ember.backends.cpu.benchmark``). The run also
times ember with ``ember.backends.mkldnn.enabled = False`` (the reference im2col; with
``--channels-last`` channels_last.py's rows of the whole batch),
interleaved with the others, and prints the choices ``--benchmark`` measured.

    python bench/conv_layer.py [THREADS] [--channels-last] [--benchmark]
"""

import json
import sys


def make_steps(lib, x_np, w_np, b_np, channels_last=False):
    from common import in_format

    F = lib.nn.functional
    x, w = (in_format(lib, lib.tensor(a), channels_last).requires_grad_() for a in (x_np, w_np))
    b = lib.tensor(b_np).requires_grad_()

    def forward():
        with lib.no_grad():
            return F.conv2d(x, w, b, padding=1)

    def train():
        F.conv2d(x, w, b, padding=1).sum().backward()
        x.grad = w.grad = b.grad = None
    return forward, train


def main(threads, channels_last, benchmark=False):
    from common import chosen_algorithms, conv_flops, gemm_limit_figures, im2col_only, interleaved, libraries

    np, torch, ember = libraries(threads)
    ember.backends.cpu.benchmark = benchmark  # opt-in: measure Winograd per shape
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 32, 32, 32)).astype(np.float32)
    w = (rng.standard_normal((64, 32, 3, 3)) / np.sqrt(32 * 9)).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    ember_forward, ember_train = make_steps(ember, x, w, b, channels_last)
    torch_forward, torch_train = make_steps(torch, x, w, b, channels_last)
    difference = np.abs(ember_forward().numpy() - torch_forward().numpy()).max()
    assert difference < 1e-3, difference  # same work on both sides
    forward = interleaved({"ember": ember_forward, "torch": torch_forward,
                           "ember im2col": im2col_only(ember, ember_forward)}, rounds=11, inner=2)
    train = interleaved({"ember": ember_train, "torch": torch_train,
                         "ember im2col": im2col_only(ember, ember_train)}, rounds=11, inner=2)
    flops = 3 * conv_flops(32, 32, 64, (3, 3), 32, 32)  # forward, grad_input, grad_weight
    print(json.dumps({"benchmark": "conv3x3 32->64, 32x32x32, fwd+bwd (ms)", "threads": threads,
                      "format": "channels_last" if channels_last else "contiguous", "cpu.benchmark": benchmark,
                      "ember": train["ember"] * 1e3, "torch": train["torch"] * 1e3,
                      "ratio": train["ember"] / train["torch"],
                      "forward ratio": forward["ember"] / forward["torch"],
                      "ember im2col": train["ember im2col"] * 1e3,
                      "im2col ratio": train["ember im2col"] / train["torch"],
                      "forward im2col ratio": forward["ember im2col"] / forward["torch"],
                      **gemm_limit_figures(np, flops, train), "algorithms": chosen_algorithms(ember)}))


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if not a.startswith("--")]
    main(int(arguments[0]) if arguments else 1, "--channels-last" in sys.argv, "--benchmark" in sys.argv)
