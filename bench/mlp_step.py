"""One training step of an MLP 784-512-512-10 (ReLU, cross-entropy, SGD with momentum
0.9, batch 128, or ``--batch N``), ember against torch on the same data and initial
weights.

PyTorch counterpart: torch.nn.Linear/ReLU/CrossEntropyLoss with torch.optim.SGD,
written here with the same raw-tensor operations on both sides so the comparison is
of the frameworks' op and autograd costs. Two variants, reported on two lines: the
layers as ``h @ W.t() + b``, and as ``nn.functional.linear(h, W, b)`` (one fused op
in ember, ``addmm`` in torch). ``--device cuda`` runs both sides on the GPU.
"""

from common import assert_losses_agree, interleaved, libraries, momentum_sgd, report_ms
from overhead import _wait, parse_args

SIZES = (784, 512, 512, 10)
BATCH = 128


def _matmul_layer(lib, h, weight, bias):
    return h @ weight.t() + bias


def _functional_layer(lib, h, weight, bias):
    return lib.nn.functional.linear(h, weight, bias)


def make_step(lib, weights, x_np, y_np, layer=_matmul_layer, device="cpu"):
    params = [lib.tensor(w, device=device).requires_grad_() for w in weights]
    velocities = [lib.zeros_like(p) for p in params]
    x, y = lib.tensor(x_np, device=device), lib.tensor(y_np, device=device)

    def step():
        h = x
        for i in range(0, len(params) - 2, 2):
            h = layer(lib, h, params[i], params[i + 1]).relu()
        logits = layer(lib, h, params[-2], params[-1])
        loss = -logits.log_softmax(1).gather(1, y.unsqueeze(1)).mean()
        loss.backward()
        momentum_sgd(lib, params, velocities)
        _wait(lib, device)
        return loss
    return step


def main(threads, device="cpu", batch=BATCH):
    np, torch, ember = libraries(threads)
    rng = np.random.default_rng(0)
    weights = []
    for fan_in, fan_out in zip(SIZES, SIZES[1:]):
        bound = 1 / np.sqrt(fan_in)
        weights += [rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32),
                    rng.uniform(-bound, bound, fan_out).astype(np.float32)]
    x = rng.standard_normal((batch, SIZES[0])).astype(np.float32)
    y = rng.integers(0, SIZES[-1], batch)
    variants = [("MLP 784-512-512-10 train step (ms)", _matmul_layer),
                ("MLP train step, F.linear layers (ms)", _functional_layer)]
    for title, layer in variants:
        steps = {"ember": make_step(ember, weights, x, y, layer, device),
                 "torch": make_step(torch, weights, x, y, layer, device)}
        assert_losses_agree(steps, 1e-4, rounds=1)
        report_ms(title, threads, interleaved(steps, rounds=15, inner=3 if batch > 8 else 20),
                  **({"device": device} if device != "cpu" else {}), batch=batch)


if __name__ == "__main__":
    import argparse

    batch_parser = argparse.ArgumentParser(add_help=False)
    batch_parser.add_argument("--batch", type=int, default=BATCH)
    known, rest = batch_parser.parse_known_args()
    args = parse_args(rest)
    main(args.threads, args.device, known.batch)
