"""LayerNorm forward + backward: ember's fused ops (``norm::layer_norm_stats``,
``norm::layer_norm``, ``norm::layer_norm_backward``) against PyTorch on a (32, 64, 256)
float32 input normalized over the last dim, with weight and bias.

Run through bench/run.py, or alone: ``python bench/layer_norm.py 1``.
"""

import sys

SHAPE = (32, 64, 256)


def step(lib, x, weight, bias, grad):
    def run():
        x.grad = weight.grad = bias.grad = None
        lib.nn.functional.layer_norm(x, SHAPE[-1:], weight, bias).backward(grad)
    return run


def main(threads):
    from common import interleaved, libraries, report_ms

    np, torch, ember = libraries(threads)
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(shape).astype("float32")
              for shape in (SHAPE, SHAPE[-1:], SHAPE[-1:], SHAPE)]
    workloads = {}
    for name, lib in (("ember", ember), ("torch", torch)):
        x, weight, bias = (lib.tensor(a, requires_grad=True) for a in arrays[:3])
        workloads[name] = step(lib, x, weight, bias, lib.tensor(arrays[3]))
    medians = interleaved(workloads, rounds=15, inner=20)
    report_ms(f"layer_norm {SHAPE} last dim, affine fwd+bwd ms", threads, medians)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
