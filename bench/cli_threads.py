"""The ``ember`` command's default thread policy against a fixed thread count, on the
training steps of the zoo models the CLI trains by default: ResNet-8 (batch 64 of
3x32x32, SGD) and yolo_nano (batch 32 of 3x64x64, AdamW).

PyTorch counterpart: none (a benchmark of ember's CLI, ember/utils/threads.py).

Each round asks the policy afresh, as ``ember train`` does at start-up (the machine's
load changes under a shared box), runs the step under its choice, then under the fixed
count, switching thread pools in place with threadpoolctl; the figures are the medians
and their ratio (below 1.0: the default is faster). Run with THREADS=1 it is the claim
"the default is never slower than one thread"; with the machine's core count it is the
default against what NumPy's BLAS does left alone.

    python bench/cli_threads.py [THREADS]      # default 1
"""

import json
import os
import statistics
import sys
import time
from collections import Counter

# The thread pools must start at full size, so that both sides can be run in one
# process: no pinning variable may be inherited (bench/run.py pins for the others).
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "EMBER_NUM_THREADS"):
    os.environ.pop(_variable, None)

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

import ember  # noqa: E402
from ember.utils.threads import choose_threads  # noqa: E402

ROUNDS = 7


def resnet8_step():
    model = ember.zoo.create_model("resnet8_cifar", num_classes=10)
    optimizer = ember.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4)
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((64, 3, 32, 32), dtype=np.float32))
    y = ember.tensor(rng.integers(0, 10, 64))
    model.train()

    def step():
        loss = ember.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return step


def yolo_nano_step():
    model = ember.zoo.create_model("yolo_nano")
    optimizer = ember.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=5e-4)
    x = ember.tensor(np.random.default_rng(0).standard_normal((32, 3, 64, 64), dtype=np.float32))
    model.train()

    def step():
        outputs = model(x)
        loss = sum((o.float() ** 2).mean() for o in _tensors(outputs))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return step


def _tensors(outputs):
    """The tensors of a model's output (a tensor, or nested lists/tuples/dicts of them)."""
    if isinstance(outputs, ember.Tensor):
        yield outputs
    elif isinstance(outputs, dict):
        for value in outputs.values():
            yield from _tensors(value)
    else:
        for value in outputs:
            yield from _tensors(value)


def timed(step, threads):
    with threadpool_limits(limits=threads):
        started = time.perf_counter()
        step()
        return time.perf_counter() - started


def compare(name, step, fixed):
    for threads in {1, fixed}:  # warm-up at each size
        timed(step, threads)
    default, baseline, chosen = [], [], Counter()
    for _ in range(ROUNDS):
        choice = choose_threads(environ={})
        chosen[choice.threads] += 1
        default.append(timed(step, choice.threads))
        baseline.append(timed(step, fixed))
    default, baseline = statistics.median(default), statistics.median(baseline)
    print(json.dumps({"benchmark": f"cli threads, default vs {fixed}: {name}", "threads": fixed,
                      "ember": default * 1e3, "baseline": baseline * 1e3, "ratio": default / baseline,
                      "chosen": dict(chosen), "load": os.getloadavg()[0],
                      "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE")}))


def main():
    fixed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    compare("ResNet-8 train step, batch 64", resnet8_step(), fixed)
    compare("yolo_nano train step, batch 32", yolo_nano_step(), fixed)


if __name__ == "__main__":
    main()
