"""Inference with ``ember.compile``: ResNet-18 (CIFAR-style, batch 32) and a Transformer
encoder (2 layers, d_model 256, batch 32 x 64 tokens), each run four ways in one
process, interleaved: ember eager (no_grad), ember.compile, torch eager (no_grad) and
onnxruntime on the model ember.onnx.export wrote.

PyTorch counterpart: torch.compile's inference benchmarks (benchmarks/dynamo), with
torch eager as the reference here. All four sides get the same weights and input, and
their outputs are checked to agree before timing. ``python bench/compile_infer.py 1``
(threads) prints, per model, the medians, the speedup of ember.compile over eager and
the convolution algorithm ember.compile measured and chose per layer
(passes/conv_algorithm.py); ``--algorithms`` also times ember.compile with each
algorithm forced (im2col, winograd_2x2, winograd_4x4).
"""

import io
import json
import pathlib
import sys

from common import interleaved, libraries

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "zoo" / "resnet"))

BATCH = 32


def resnet(ember, torch, np):
    from torch_reference import TorchBasicBlock, TorchResNet

    torch.manual_seed(0)
    reference = TorchResNet(TorchBasicBlock, [2, 2, 2, 2], num_classes=10, stem="small").eval()
    model = ember.zoo.create_model("resnet18_cifar", num_classes=10).eval()
    model.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy()) for k, v in reference.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((BATCH, 3, 32, 32)).astype(np.float32)
    return model, reference, x


def encoder(ember, torch, np):
    def build(lib):
        layer = lib.nn.TransformerEncoderLayer(256, 4, dim_feedforward=1024, dropout=0.0, activation="gelu",
                                               batch_first=True)
        kwargs = {"enable_nested_tensor": False} if lib.__name__ == "torch" else {}
        return lib.nn.TransformerEncoder(layer, 2, **kwargs).eval()

    torch.manual_seed(0)
    reference = build(torch)
    model = build(ember)
    model.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in reference.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((BATCH, 64, 256)).astype(np.float32)
    return model, reference, x


def runners(ember, torch, np, model, reference, x, threads, algorithms):
    import onnxruntime

    xe, xt = ember.tensor(x), torch.tensor(x)
    compiled = ember.compile(model)
    buffer = io.BytesIO()
    ember.onnx.export(model, xe, buffer, input_names=["x"])
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(buffer.getvalue(), options, providers=["CPUExecutionProvider"])

    def eager():
        with ember.no_grad():
            return model(xe).numpy()

    def torch_eager():
        with torch.no_grad():
            return reference(xt).numpy()

    run = {"ember eager": eager, "ember.compile": lambda: compiled(xe).numpy(), "torch eager": torch_eager,
           "onnxruntime": lambda: session.run(None, {"x": x})[0]}
    if algorithms:
        from ember.compiler.passes import ALGORITHMS

        for algorithm in ALGORITHMS:
            forced = ember.compile(model, conv_algorithm=algorithm)
            run[f"ember.compile {algorithm}"] = lambda forced=forced: forced(xe).numpy()
    expected = torch_eager()
    for name, fn in run.items():  # every side computes the same thing
        np.testing.assert_allclose(fn(), expected, rtol=1e-3, atol=1e-3, err_msg=name)
    return run, compiled


def choices(compiled):
    """Per distinct convolution shape: the algorithm chosen and what each measured (ms)."""
    found = {}
    for records in compiled.conv_choices.values():
        for _, shape, algorithm, seconds in records:
            found[shape] = {"chose": algorithm, **{k: round(v * 1e3, 1) for k, v in seconds.items()}}
    return found


def main(threads, algorithms=False, rounds=5):
    np, torch, ember = libraries(threads)
    for title, build in (("ResNet-18 CIFAR inference, batch 32", resnet),
                         ("Transformer encoder inference, batch 32 x 64", encoder)):
        model, reference, x = build(ember, torch, np)
        run, compiled = runners(ember, torch, np, model, reference, x, threads, algorithms)
        medians = interleaved(run, rounds=rounds, inner=1)
        ms = {name: seconds * 1e3 for name, seconds in medians.items()}
        print(json.dumps({"benchmark": title, "threads": threads, **{f"{k} ms": round(v, 1) for k, v in ms.items()},
                          "compile speedup over eager": ms["ember eager"] / ms["ember.compile"],
                          "ember": ms["ember.compile"], "torch": ms["torch eager"],
                          "ratio": ms["ember.compile"] / ms["torch eager"],
                          "ratio to onnxruntime": ms["ember.compile"] / ms["onnxruntime"]}))
        for shape, choice in choices(compiled).items():
            print(json.dumps({"convolution": shape, **choice}))


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if not a.startswith("--")]
    main(int(arguments[0]) if arguments else 1, algorithms="--algorithms" in sys.argv)
