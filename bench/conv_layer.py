"""One convolution layer, forward and forward+backward: conv3x3 32->64, padding 1, on a
batch of 32 images 32x32, ember against torch on the same data and weights.

PyTorch counterpart: torch.nn.functional.conv2d (oneDNN/im2col kernels on CPU); ember's
is im2col on a strided view plus one batched matrix product (ember/native/convolution.py).
"""

import json
import sys


def make_steps(lib, x_np, w_np, b_np):
    F = lib.nn.functional
    x, w, b = (lib.tensor(a).requires_grad_() for a in (x_np, w_np, b_np))

    def forward():
        with lib.no_grad():
            return F.conv2d(x, w, b, padding=1)

    def train():
        F.conv2d(x, w, b, padding=1).sum().backward()
        x.grad = w.grad = b.grad = None
    return forward, train


def main(threads):
    from common import interleaved, libraries

    np, torch, ember = libraries(threads)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 32, 32, 32)).astype(np.float32)
    w = (rng.standard_normal((64, 32, 3, 3)) / np.sqrt(32 * 9)).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    ember_forward, ember_train = make_steps(ember, x, w, b)
    torch_forward, torch_train = make_steps(torch, x, w, b)
    difference = np.abs(ember_forward().numpy() - torch_forward().numpy()).max()
    assert difference < 1e-3, difference  # same work on both sides
    forward = interleaved({"ember": ember_forward, "torch": torch_forward}, rounds=11, inner=2)
    train = interleaved({"ember": ember_train, "torch": torch_train}, rounds=11, inner=2)
    print(json.dumps({"benchmark": "conv3x3 32->64, 32x32x32, fwd+bwd (ms)", "threads": threads,
                      "ember": train["ember"] * 1e3, "torch": train["torch"] * 1e3,
                      "ratio": train["ember"] / train["torch"],
                      "forward ratio": forward["ember"] / forward["torch"]}))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
