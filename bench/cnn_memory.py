"""Peak memory of the CIFAR-style CNN train step (issue 3), and of the ResNet-18 one
(bench/resnet_step.py's): each library in its own process (the ember process never
imports torch), five steps (ResNet-18: three), peak resident set size (ru_maxrss) of
the whole process, as the issue counts it ("torch alone imports at
about 220 MB"). ember runs three times: as installed (ember-numba's loops compiled ahead
of time, numba never imported), with ``EMBER_NUMBA_JIT=1`` (numba's JIT compiles or loads
the loops at run time: numba's import ~56 MB, LLVM's code and state once a kernel loads
~65 MB, whatever the model) and with ``EMBER_DISABLE_PLUGINS=ember-numba`` (NumPy
kernels only). ResNet-18 runs as installed, and with im2col only (no Winograd, whose
forward keeps its input tiles for the weight's gradient, 2.25 times each input).

PyTorch counterpart: the same step on torch tensors (bench/cnn_step.py's make_step).
"""

import json
import os
import resource
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def cnn_step(lib, np, rng):
    from cnn_step import BATCH, CLASSES, initial_weights, make_step

    x = rng.standard_normal((BATCH, 3, 32, 32)).astype(np.float32)
    return make_step(lib, initial_weights(rng, np), x, rng.integers(0, CLASSES, BATCH))


def resnet_step(lib, np, rng):
    from resnet_step import BATCH, CLASSES, make_step

    if lib.__name__ == "torch":
        from torch_reference import TorchBasicBlock, TorchResNet

        model = TorchResNet(TorchBasicBlock, [2, 2, 2, 2], num_classes=CLASSES, stem="small")
    else:
        model = lib.zoo.create_model("resnet18_cifar", num_classes=CLASSES)
    x = rng.standard_normal((BATCH, 3, 32, 32)).astype(np.float32)
    return make_step(lib, model, x, rng.integers(0, CLASSES, BATCH))


STEPS = {"cnn": cnn_step, "resnet18": resnet_step}


def child(lib_name, threads, model, im2col_only):
    from common import pin_threads

    pin_threads(threads)
    import numpy as np

    lib = __import__(lib_name)
    if lib_name == "torch":
        lib.set_num_threads(threads)
    elif im2col_only:
        lib.backends.mkldnn.enabled = False  # no Winograd: its kept input tiles are memory
    step = STEPS[model](lib, np, np.random.default_rng(0))
    for _ in range(5 if model == "cnn" else 3):
        step()
    assert ("torch" in sys.modules) == (lib_name == "torch")
    print(json.dumps({"lib": lib_name, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def peak(lib_name, threads, model="cnn", im2col_only=False, **env):
    command = [sys.executable, __file__, "--child", lib_name, str(threads), model] + ["--im2col"] * im2col_only
    out = subprocess.run(command, cwd=HERE, check=True, capture_output=True, text=True, env={**os.environ, **env})
    return json.loads(out.stdout.strip().splitlines()[-1])["peak_mb"]


def main(threads):
    ember, torch = peak("ember", threads), peak("torch", threads)
    jit = peak("ember", threads, EMBER_NUMBA_JIT="1")
    without_numba = peak("ember", threads, EMBER_DISABLE_PLUGINS="ember-numba")
    print(json.dumps({"benchmark": "CNN train step, peak process memory (MB)", "threads": threads,
                      "ember": ember, "torch": torch, "ratio": ember / torch,
                      "ember, numba's JIT": jit, "ratio, numba's JIT": jit / torch,
                      "ember without ember-numba": without_numba, "ratio without ember-numba": without_numba / torch}))
    ember, torch = peak("ember", threads, "resnet18"), peak("torch", threads, "resnet18")
    im2col = peak("ember", threads, "resnet18", im2col_only=True)
    print(json.dumps({"benchmark": "ResNet-18 (CIFAR) train step, batch 32, peak process memory (MB)",
                      "threads": threads, "ember": ember, "torch": torch, "ratio": ember / torch,
                      "ember, im2col only": im2col, "ratio, im2col only": im2col / torch}))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], int(sys.argv[3]), sys.argv[4], "--im2col" in sys.argv)
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
