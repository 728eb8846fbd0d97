"""Cross-entropy forward + backward: ember's fused op (``loss::cross_entropy``) against
the composite ``nll_loss(log_softmax(x))`` and against PyTorch, on (128, 10) and
(32, 1000) logits (see NOTE [ Fused cross-entropy ] in ember_loss/cross_entropy.py).

Run through bench/run.py, or alone: ``python bench/loss_cross_entropy.py 1``.
"""

import json
import sys

SHAPES = [(128, 10), (32, 1000)]


def step(lib, loss_fn, x, t):
    def run():
        x.grad = None
        loss_fn(x, t).backward()
    return run


def main(threads):
    from common import interleaved, pin_threads

    pin_threads(threads)
    import numpy as np
    import torch

    import ember
    from ember_loss.nll import nll_loss

    composite = lambda x, t: nll_loss(x.log_softmax(1), t)
    for n, c in SHAPES:
        logits = np.random.default_rng(0).standard_normal((n, c)).astype("float32")
        labels = np.random.default_rng(1).integers(0, c, size=n)
        ex, et = ember.tensor(logits, requires_grad=True), ember.tensor(labels)
        tx, tt = torch.tensor(logits, requires_grad=True), torch.tensor(labels)
        times = interleaved({"fused": step(ember, ember.nn.functional.cross_entropy, ex, et),
                             "composite": step(ember, composite, ex, et),
                             "torch": step(torch, torch.nn.functional.cross_entropy, tx, tt)},
                            rounds=15, inner=200)
        for variant in ("fused", "composite"):
            print(json.dumps({"benchmark": f"cross_entropy {variant} ({n}, {c}) fwd+bwd ms",
                              "ember": times[variant] * 1e3, "torch": times["torch"] * 1e3,
                              "ratio": times[variant] / times["torch"]}))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
