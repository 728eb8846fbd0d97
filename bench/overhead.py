"""Per-op overhead: ``x = x * 1.0001 + 0.001`` 500 times on an 8-element tensor that
requires grad, then backward; time per op (1,000 ops recorded and differentiated).

PyTorch counterpart: the same loop on torch tensors, measured in the same process.
Run through bench/run.py, which pins the thread count before NumPy is imported;
``python bench/overhead.py 1 --device cuda`` runs both sides on the GPU (waiting for
the device at the end of each run, so the time includes the kernels).
"""

import argparse
import json

STEPS = 500


def _chain(lib, device):
    """The timed ops: ``STEPS`` multiply-adds on an 8-element tensor that requires grad."""
    y = lib.ones(8, requires_grad=True, device=device)
    for _ in range(STEPS):
        y = y * 1.0001 + 0.001
    return y


def workload(lib, device="cpu"):
    def run():
        _chain(lib, device).sum().backward()
        _wait(lib, device)
    return run


def forward_only(lib, device="cpu"):
    def run():
        y = _chain(lib, device)
        _wait(lib, device)
        return y
    return run


def _wait(lib, device):
    if device != "cpu":  # GPU kernels run asynchronously: time them to the end
        lib.cuda.synchronize()


def main(threads, device="cpu"):
    from common import interleaved, pin_threads

    pin_threads(threads)
    import torch

    import ember

    torch.set_num_threads(threads)
    workloads = {"ember": workload(ember, device), "torch": workload(torch, device),
                 "ember forward": forward_only(ember, device), "torch forward": forward_only(torch, device)}
    for fn in workloads.values():
        fn()  # warm-up: plugin discovery, caches
    medians = interleaved(workloads, rounds=15, inner=3)
    per_op = {name: seconds / (2 * STEPS) * 1e6 for name, seconds in medians.items()}
    print(json.dumps({"benchmark": "per-op overhead (us per op, forward+backward)", "threads": threads,
                      **({"device": device} if device != "cpu" else {}),
                      "ember": per_op["ember"], "torch": per_op["torch"],
                      "ratio": per_op["ember"] / per_op["torch"],
                      "forward ratio": per_op["ember forward"] / per_op["torch forward"]}))


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("threads", nargs="?", type=int, default=1)
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda (ember and torch on the same GPU)")
    return parser.parse_args(argv)


if __name__ == "__main__":
    args = parse_args()
    main(args.threads, args.device)
