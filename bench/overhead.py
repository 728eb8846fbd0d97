"""Per-op overhead: ``x = x * 1.0001 + 0.001`` 500 times on an 8-element tensor that
requires grad, then backward; time per op (1,000 ops recorded and differentiated).

PyTorch counterpart: the same loop on torch tensors, measured in the same process.
Run through bench/run.py, which pins the thread count before NumPy is imported.
"""

import json
import sys

STEPS = 500


def workload(lib):
    def run():
        x = lib.ones(8, requires_grad=True)
        y = x
        for _ in range(STEPS):
            y = y * 1.0001 + 0.001
        y.sum().backward()
    return run


def forward_only(lib):
    def run():
        x = lib.ones(8, requires_grad=True)
        y = x
        for _ in range(STEPS):
            y = y * 1.0001 + 0.001
        return y
    return run


def main(threads):
    from common import interleaved, pin_threads

    pin_threads(threads)
    import torch

    import ember

    torch.set_num_threads(threads)
    workloads = {"ember": workload(ember), "torch": workload(torch),
                 "ember forward": forward_only(ember), "torch forward": forward_only(torch)}
    for fn in workloads.values():
        fn()  # warm-up: plugin discovery, caches
    medians = interleaved(workloads, rounds=15, inner=3)
    per_op = {name: seconds / (2 * STEPS) * 1e6 for name, seconds in medians.items()}
    print(json.dumps({"benchmark": "per-op overhead (us per op, forward+backward)", "threads": threads,
                      "ember": per_op["ember"], "torch": per_op["torch"],
                      "ratio": per_op["ember"] / per_op["torch"],
                      "forward ratio": per_op["ember forward"] / per_op["torch forward"]}))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
