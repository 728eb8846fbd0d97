"""Int8 inference: quantized Linear and Conv2d against float32 ember and against torch's
quantized engine (x86/fbgemm), on the same weights and inputs, interleaved in one process.

PyTorch counterpart: torch.ao.nn.quantized.Linear / Conv2d (fbgemm kernels); ember's
are ember_quantization/kernels.py (exact integer GEMM on NumPy's float BLAS).

Each line reports ember int8 vs torch int8 ("ratio"), and ember int8 vs ember float32
("vs float32": below 1.0 means int8 is faster than ember's own float path). The last
line times the zoo's ResNet-8 dense, statically quantized and 50% pruned (ember only:
unstructured zeros do not make a dense kernel faster, which the line shows).

Times are CPU seconds (``time.process_time``): everything runs on one thread, and on a
shared machine the wall clock also counts the waits for a core, which swung the 0.5 ms
Linear's ratio from 1x to 30x between runs. The int8 modules pack their weights once
(NOTE [ Packed weights ] in ember_quantization/kernels.py), so a call is the activation's
quantization, one float GEMM on exact integers, and the requantisation.
"""

import json
import sys
import time


def int8_pair(ember, torch, eq, tq, float_ours, float_theirs, x_np):
    """Static int8 versions of the two float modules, calibrated on the same batch."""
    wrap_ours = ember.nn.Sequential(eq.QuantStub(), float_ours, eq.DeQuantStub()).eval()
    wrap_theirs = torch.nn.Sequential(tq.QuantStub(), float_theirs, tq.DeQuantStub()).eval()
    wrap_ours.qconfig = eq.get_default_qconfig("x86")
    wrap_theirs.qconfig = tq.get_default_qconfig("x86")
    prepared_ours, prepared_theirs = eq.prepare(wrap_ours), tq.prepare(wrap_theirs)
    prepared_ours(ember.tensor(x_np))
    prepared_theirs(torch.tensor(x_np))
    return eq.convert(prepared_ours), tq.convert(prepared_theirs)


def measure(name, threads, ember, torch, float_ours, int8_ours, int8_theirs, x_np, step):
    from common import interleaved

    x_ours, x_theirs = ember.tensor(x_np), torch.tensor(x_np)

    def ember_float():
        with ember.no_grad():
            return float_ours(x_ours)

    def ember_int8():
        return int8_ours(x_ours)

    def torch_int8():
        return int8_theirs(x_theirs)

    difference = abs(ember_int8().numpy() - torch_int8().numpy()).max()
    assert difference <= step * 1.01, (difference, step)  # same work: within one quantization step
    medians = interleaved({"ember": ember_int8, "torch": torch_int8, "float": ember_float}, rounds=9, inner=3,
                          clock=time.process_time)
    print(json.dumps({"benchmark": name, "threads": threads, "ember": medians["ember"] * 1e3,
                      "torch": medians["torch"] * 1e3, "ratio": medians["ember"] / medians["torch"],
                      "ember float32": medians["float"] * 1e3, "vs float32": medians["ember"] / medians["float"]}))


def main(threads):
    from common import libraries

    np, torch, ember = libraries(threads)
    import ember_quantization as eq
    import torch.ao.quantization as tq

    torch.backends.quantized.engine = "x86"
    rng = np.random.default_rng(0)
    cases = [
        ("int8 Linear 512->512, batch 64 (ms)", lambda lib: lib.nn.Linear(512, 512), (64, 512)),
        ("int8 Conv2d 3x3 32->64, 32x32x32 (ms)", lambda lib: lib.nn.Conv2d(32, 64, 3, padding=1), (32, 32, 32, 32)),
    ]
    for name, make, shape in cases:
        torch.manual_seed(0)
        float_theirs = make(torch).eval()
        float_ours = make(ember).eval()
        float_ours.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in float_theirs.state_dict().items()})
        x_np = rng.standard_normal(shape).astype(np.float32)
        int8_ours, int8_theirs = int8_pair(ember, torch, eq, tq, float_ours, float_theirs, x_np)
        measure(name, threads, ember, torch, float_ours, int8_ours, int8_theirs, x_np, int8_theirs[1].scale)
    compressed_resnet(threads, np, ember)


def compressed_resnet(threads, np, ember):
    """The zoo's ResNet-8 (digits shapes, batch 256): static int8 and 50%-pruned against dense, ember only."""
    from common import interleaved

    from ember.nn.utils import prune
    from ember.trainer import compression
    from ember.zoo.quantizable import quantize_static

    ember.manual_seed(0)
    dense = ember.zoo.create_model("resnet8_cifar", num_classes=10, in_channels=1).eval()
    x = ember.tensor(np.random.default_rng(0).standard_normal((256, 1, 8, 8)).astype(np.float32))
    int8 = quantize_static(dense, [(x, None)])
    pruned = ember.zoo.create_model("resnet8_cifar", num_classes=10, in_channels=1).eval()
    pruned.load_state_dict(dense.state_dict())
    targets = compression.prune_model(pruned, 0.5, "l1")
    for module, name in targets:
        prune.remove(module, name)

    def run(model):
        def forward():
            with ember.no_grad():
                return model(x)
        return forward

    medians = interleaved({"dense": run(dense), "int8": run(int8), "pruned": run(pruned)}, rounds=7, inner=2,
                          clock=time.process_time)
    print(json.dumps({"benchmark": "resnet8_cifar inference, batch 256 of 1x8x8 (ms)", "threads": threads,
                      "dense": medians["dense"] * 1e3, "static int8": medians["int8"] * 1e3,
                      "50% pruned": medians["pruned"] * 1e3, "int8 / dense": medians["int8"] / medians["dense"],
                      "pruned / dense": medians["pruned"] / medians["dense"]}))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
