"""Peak memory of the CIFAR-style CNN train step (issue 3): each library in its own
process (the ember process never imports torch), five steps, peak resident set size
(ru_maxrss) of the whole process, as the issue counts it ("torch alone imports at
about 220 MB"). ember runs three times: as installed (ember-numba's loops compiled ahead
of time, numba never imported), with ``EMBER_NUMBA_JIT=1`` (numba's JIT compiles or loads
the loops at run time: numba's import ~56 MB, LLVM's code and state once a kernel loads
~65 MB, whatever the model) and with ``EMBER_DISABLE_PLUGINS=ember-numba`` (NumPy
kernels only).

PyTorch counterpart: the same step on torch tensors (bench/cnn_step.py's make_step).
"""

import json
import os
import resource
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def child(lib_name, threads):
    from common import pin_threads

    pin_threads(threads)
    import numpy as np

    lib = __import__(lib_name)
    if lib_name == "torch":
        lib.set_num_threads(threads)
    from cnn_step import BATCH, CLASSES, initial_weights, make_step

    rng = np.random.default_rng(0)
    weights = initial_weights(rng, np)
    x = rng.standard_normal((BATCH, 3, 32, 32)).astype(np.float32)
    y = rng.integers(0, CLASSES, BATCH)
    step = make_step(lib, weights, x, y)
    for _ in range(5):
        step()
    assert ("torch" in sys.modules) == (lib_name == "torch")
    print(json.dumps({"lib": lib_name, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def peak(lib_name, threads, **env):
    out = subprocess.run([sys.executable, __file__, "--child", lib_name, str(threads)], cwd=HERE,
                         check=True, capture_output=True, text=True, env={**os.environ, **env})
    return json.loads(out.stdout.strip().splitlines()[-1])["peak_mb"]


def main(threads):
    ember, torch = peak("ember", threads), peak("torch", threads)
    jit = peak("ember", threads, EMBER_NUMBA_JIT="1")
    without_numba = peak("ember", threads, EMBER_DISABLE_PLUGINS="ember-numba")
    print(json.dumps({"benchmark": "CNN train step, peak process memory (MB)", "threads": threads,
                      "ember": ember, "torch": torch, "ratio": ember / torch,
                      "ember, numba's JIT": jit, "ratio, numba's JIT": jit / torch,
                      "ember without ember-numba": without_numba, "ratio without ember-numba": without_numba / torch}))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], int(sys.argv[3]))
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
