"""Cross-entropy forward + backward: ember's fused op (``loss::cross_entropy``) and its
composite ``nll_loss(log_softmax(x))``, each against PyTorch doing the same work (its
``cross_entropy``, and its own ``nll_loss(log_softmax(x))``), on (128, 10) and
(32, 1000) logits (see NOTE [ Fused cross-entropy ] in ember_loss/cross_entropy.py).
The composite is also reported against torch's ``cross_entropy``, the figure this
benchmark gave before it timed torch's composite.

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
    torch_composite = lambda x, t: torch.nn.functional.nll_loss(torch.nn.functional.log_softmax(x, 1), t)
    for n, c in SHAPES:
        logits = np.random.default_rng(0).standard_normal((n, c)).astype("float32")
        labels = np.random.default_rng(1).integers(0, c, size=n)
        ex, et = ember.tensor(logits, requires_grad=True), ember.tensor(labels)
        tx, tt = torch.tensor(logits, requires_grad=True), torch.tensor(labels)
        times = interleaved({"fused": step(ember, ember.nn.functional.cross_entropy, ex, et),
                             "composite": step(ember, composite, ex, et),
                             "torch": step(torch, torch.nn.functional.cross_entropy, tx, tt),
                             "torch composite": step(torch, torch_composite, tx, tt)},
                            rounds=15, inner=200)
        # (ember's variant, torch's variant): like for like, then the composite against
        # torch's fused op
        for variant, theirs in (("fused", "torch"), ("composite", "torch composite"), ("composite", "torch")):
            against = "" if theirs == "torch composite" or variant == "fused" else " vs torch fused"
            print(json.dumps({"benchmark": f"cross_entropy {variant} ({n}, {c}) fwd+bwd ms{against}",
                              "ember": times[variant] * 1e3, "torch": times[theirs] * 1e3,
                              "ratio": times[variant] / times[theirs]}))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
