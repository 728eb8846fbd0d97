"""The other norms against PyTorch: BatchNorm2d in training (forward + backward) and in
eval (forward without a graph, contiguous and channels_last), GroupNorm, InstanceNorm2d
and RMSNorm (forward + backward), each on 524,288 float32 values, one JSON line each.

Shapes: (32, 64, 16, 16) for the channel norms (GroupNorm with 8 groups), (32, 64, 256)
for RMSNorm over the last dim; every module has its affine parameters.

Run through bench/run.py, or alone: ``python bench/norms.py 1``.
"""

import sys

IMAGE = (32, 64, 16, 16)
SEQUENCE = (32, 64, 256)


def train_step(lib, module, x, grad):
    def run():
        x.grad = None
        for p in module.parameters():
            p.grad = None
        module(x).backward(grad)
    return run


def eval_step(lib, module, x):
    def run():
        with lib.no_grad():
            module(x)
    return run


def modules(lib):
    """{case: (module, input shape, train)}, built the same way from either library."""
    nn = lib.nn
    return {
        "batch_norm2d train fwd+bwd": (nn.BatchNorm2d(IMAGE[1]), IMAGE, True),
        "batch_norm2d eval fwd": (nn.BatchNorm2d(IMAGE[1]).eval(), IMAGE, False),
        "batch_norm2d eval fwd channels_last": (nn.BatchNorm2d(IMAGE[1]).eval(), IMAGE, "channels_last"),
        "group_norm (8 groups) fwd+bwd": (nn.GroupNorm(8, IMAGE[1]), IMAGE, True),
        "instance_norm2d affine fwd+bwd": (nn.InstanceNorm2d(IMAGE[1], affine=True), IMAGE, True),
        "rms_norm last dim fwd+bwd": (nn.RMSNorm(SEQUENCE[-1]), SEQUENCE, True),
    }


def workload(lib, np, module, shape, mode):
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal(shape).astype("float32"), requires_grad=mode is True)
    if mode is True:
        return train_step(lib, module, x, lib.tensor(rng.standard_normal(shape).astype("float32")))
    with lib.no_grad():  # running statistics away from (0, 1), as after training
        module.running_mean.uniform_(-1, 1)
        module.running_var.uniform_(0.5, 2)
    if mode == "channels_last":
        x = x.contiguous(memory_format=lib.channels_last)
    return eval_step(lib, module, x)


def main(threads):
    from common import interleaved, libraries, report_ms

    np, torch, ember = libraries(threads)
    ours, theirs = modules(ember), modules(torch)
    for case, (module, shape, mode) in ours.items():
        workloads = {"ember": workload(ember, np, module, shape, mode),
                     "torch": workload(torch, np, theirs[case][0], shape, mode)}
        # eval forwards are ~5x shorter: more calls per sample, for as long a sample
        medians = interleaved(workloads, rounds=11, inner=10 if mode is True else 50)
        report_ms(f"{case} {shape} ms", threads, medians)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
