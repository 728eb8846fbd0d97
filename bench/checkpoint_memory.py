"""Peak memory of a deep MLP's train step with and without activation checkpointing
(ember.utils.checkpoint.checkpoint_sequential, 4 segments, use_reentrant=False), beside
torch's: each configuration in its own process (the ember process never imports torch),
peak resident set size (ru_maxrss) after one step, minus the peak before the step (the
imports, the model and the batch), so the figure is what the step itself added.

PyTorch counterpart: the same step with torch.utils.checkpoint.checkpoint_sequential.
"""

import json
import os
import resource
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEPTH, WIDTH, BATCH, SEGMENTS = 24, 256, 8192, 4  # activations dominate: 8 MB a layer output, 0.25 MB a weight


def _peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(lib_name, threads, checkpointed):
    from common import pin_threads

    pin_threads(threads)
    import numpy as np

    lib = __import__(lib_name)
    if lib_name == "ember":
        import ember.utils.checkpoint as checkpoint
    else:
        import torch.utils.checkpoint as checkpoint

        lib.set_num_threads(threads)
    layers = []
    for _ in range(DEPTH):
        layers += [lib.nn.Linear(WIDTH, WIDTH), lib.nn.ReLU()]
    model = lib.nn.Sequential(*layers)
    x = lib.tensor(np.random.default_rng(0).standard_normal((BATCH, WIDTH)).astype(np.float32), requires_grad=True)
    before = _peak_mb()
    if checkpointed:
        y = checkpoint.checkpoint_sequential(model, SEGMENTS, x, use_reentrant=False)
    else:
        y = model(x)
    y.square().mean().backward()
    assert ("torch" in sys.modules) == (lib_name == "torch")
    print(json.dumps({"added_mb": _peak_mb() - before}))


def added(lib_name, threads, checkpointed):
    command = [sys.executable, __file__, "--child", lib_name, str(threads)] + ["--checkpoint"] * checkpointed
    out = subprocess.run(command, cwd=HERE, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["added_mb"]


def main(threads):
    figures = {f"{lib} {'checkpointed' if c else 'plain'} (MB)": added(lib, threads, c)
               for lib in ("ember", "torch") for c in (False, True)}
    activations = DEPTH * 2 * BATCH * WIDTH * 4 / 2 ** 20
    print(json.dumps({"benchmark": f"MLP {DEPTH}x{WIDTH} train step, batch {BATCH}, memory the step adds (MB); "
                      f"activations {activations:.0f} MB", "threads": threads, **figures,
                      "ember saving": 1 - figures["ember checkpointed (MB)"] / figures["ember plain (MB)"],
                      "torch saving": 1 - figures["torch checkpointed (MB)"] / figures["torch plain (MB)"]}))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], int(sys.argv[3]), "--checkpoint" in sys.argv)
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
