"""The fixed cost of a small convolution: conv2d on tiny inputs, where the arithmetic is
a few thousand multiplies and the time is the Python path around it (argument checks,
layout tests, the geometry, dispatch, the array views). Forward without grad, and
forward+backward, NCHW and channels_last, float32, ember against torch in one process.

PyTorch counterpart: torch.nn.functional.conv2d (on CPU oneDNN's direct kernel after
aten/src/ATen/native/Convolution.cpp's checks); ember's path is
ember/native/convolution/convolution.py with ember/native/convolution/arguments.py's checks.

    python bench/conv_small.py [THREADS]

One JSON line per (shape, format): the forward+backward CPU times in microseconds, their
ratio, and the forward-only ratio (medians of 15 interleaved rounds of 40 calls).
"""

import json
import sys

# name -> (input shape, (out_channels, in_channels/groups, kh, kw), stride, padding, groups)
CASES = {
    "1x4x8x8 4->4 3x3": ((1, 4, 8, 8), (4, 4, 3, 3), 1, 1, 1),
    "2x16x16x16 16->16 3x3": ((2, 16, 16, 16), (16, 16, 3, 3), 1, 1, 1),
    "1x8x5x5 8->8 1x1": ((1, 8, 5, 5), (8, 8, 1, 1), 1, 0, 1),
    "1x8x8x8 8->8 3x3 groups=4": ((1, 8, 8, 8), (8, 2, 3, 3), 1, 1, 4),
    "1x8x8x8 8->16 3x3 stride 2": ((1, 8, 8, 8), (16, 8, 3, 3), 2, 1, 1),
}
CALLS = 40  # calls per timed sample: one call is tens of microseconds


def make_steps(lib, x_np, w_np, b_np, stride, padding, groups, channels_last):
    from common import in_format

    F = lib.nn.functional
    x, w = (in_format(lib, lib.tensor(a), channels_last).requires_grad_() for a in (x_np, w_np))
    b = lib.tensor(b_np).requires_grad_()

    def forward():
        with lib.no_grad():
            return F.conv2d(x, w, b, stride=stride, padding=padding, groups=groups)

    def train():
        F.conv2d(x, w, b, stride=stride, padding=padding, groups=groups).sum().backward()
        x.grad = w.grad = b.grad = None

    return _repeated(forward), _repeated(train), forward


def _repeated(step):
    def run():
        for _ in range(CALLS):
            step()
    return run


def main(threads):
    import time

    from common import interleaved, libraries

    np, torch, ember = libraries(threads)
    rng = np.random.default_rng(0)
    for name, (shape, weight_shape, stride, padding, groups) in CASES.items():
        x = rng.standard_normal(shape).astype(np.float32)
        w = rng.standard_normal(weight_shape).astype(np.float32)
        b = rng.standard_normal(weight_shape[0]).astype(np.float32)
        for channels_last in (False, True):
            ember_forward, ember_train, ember_once = make_steps(ember, x, w, b, stride, padding, groups,
                                                                channels_last)
            torch_forward, torch_train, torch_once = make_steps(torch, x, w, b, stride, padding, groups,
                                                                channels_last)
            difference = np.abs(ember_once().numpy() - torch_once().numpy()).max()
            assert difference < 1e-4, (name, difference)  # the same convolution on both sides
            # CPU time: on the shared machine a wait for a core is not the convolution's cost
            forward = interleaved({"ember": ember_forward, "torch": torch_forward}, rounds=15, inner=1,
                                  clock=time.process_time)
            train = interleaved({"ember": ember_train, "torch": torch_train}, rounds=15, inner=1,
                                clock=time.process_time)
            print(json.dumps({"benchmark": f"small conv {name}, fwd+bwd (us)", "threads": threads,
                              "format": "channels_last" if channels_last else "contiguous",
                              "ember": train["ember"] / CALLS * 1e6, "torch": train["torch"] / CALLS * 1e6,
                              "ratio": train["ember"] / train["torch"],
                              "forward ember (us)": forward["ember"] / CALLS * 1e6,
                              "forward torch (us)": forward["torch"] / CALLS * 1e6,
                              "forward ratio": forward["ember"] / forward["torch"]}))


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if not a.startswith("--")]
    main(int(arguments[0]) if arguments else 1)
