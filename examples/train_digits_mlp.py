"""Train a two-layer MLP on the embedded 8x8 digits with ember's core alone, then
report held-out accuracy.

PyTorch counterpart: the classic MNIST example (pytorch/examples mnist/main.py),
written here with raw tensors, autograd and a hand-written SGD step on purpose: it shows
what the core does underneath ember.nn and ember.optim (``ember train resnet8_cifar
--data digits`` is the same job with the zoo, the nn modules and an optimizer).

    python examples/train_digits_mlp.py [--epochs 30] [--seed 0]
"""

import argparse
import math
import time

import numpy as np

import ember


def load_digits():
    """(images, labels): float32 in [0, 1] of shape (1797, 64), int64 labels; the
    dataset ships inside ember-data (ember_data/datasets/data/digits.csv.gz)."""
    from ember_data.datasets.digits import load_digits as load

    return load()


def split(images, labels, seed, held_out=0.2):
    order = np.random.default_rng(seed).permutation(len(labels))
    n_test = int(len(labels) * held_out)
    test, train = order[:n_test], order[n_test:]
    return (images[train], labels[train]), (images[test], labels[test])


def init_linear(fan_in, fan_out, generator):
    # PyTorch's nn.Linear default: uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)) for both.
    bound = 1 / math.sqrt(fan_in)
    weight = (ember.rand(fan_out, fan_in, generator=generator) * 2 - 1) * bound
    bias = (ember.rand(fan_out, generator=generator) * 2 - 1) * bound
    return weight.requires_grad_(), bias.requires_grad_()


def forward(params, x):
    w1, b1, w2, b2 = params
    hidden = (x @ w1.t() + b1).relu()
    return hidden @ w2.t() + b2


def cross_entropy(logits, target):
    log_probs = logits.log_softmax(dim=1)
    return -log_probs.gather(1, target.unsqueeze(1)).mean()


def sgd_step(params, velocities, lr, momentum):
    with ember.no_grad():
        for p, v in zip(params, velocities):
            v.mul_(momentum).add_(p.grad)
            p.sub_(v, alpha=lr)
            p.grad = None


def accuracy(params, images, labels):
    with ember.no_grad():
        predicted = forward(params, ember.from_numpy(images)).argmax(dim=1)
    return float((predicted == ember.from_numpy(labels)).float().mean())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    images, labels = load_digits()
    (x_train, y_train), (x_test, y_test) = split(images, labels, args.seed)
    generator = ember.Generator().manual_seed(args.seed)
    params = [*init_linear(64, args.hidden, generator), *init_linear(args.hidden, 10, generator)]
    velocities = [ember.zeros_like(p) for p in params]
    rng = np.random.default_rng(args.seed)
    print(f"digits: {len(y_train)} train / {len(y_test)} held-out images, MLP 64-{args.hidden}-10")
    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        order = rng.permutation(len(y_train))
        total = 0.0
        for i in range(0, len(order), args.batch_size):
            batch = order[i:i + args.batch_size]
            x, y = ember.from_numpy(x_train[batch]), ember.from_numpy(y_train[batch])
            loss = cross_entropy(forward(params, x), y)
            loss.backward()
            sgd_step(params, velocities, args.lr, momentum=0.9)
            total += loss.item() * len(batch)
        if epoch == 1 or epoch % 5 == 0 or epoch == args.epochs:
            print(f"epoch {epoch:3d}  loss {total / len(y_train):.4f}  "
                  f"held-out accuracy {accuracy(params, x_test, y_test):.4f}")
    test_accuracy = accuracy(params, x_test, y_test)
    print(f"final held-out accuracy {test_accuracy:.4f} in {time.perf_counter() - start:.1f} s")
    return test_accuracy


if __name__ == "__main__":
    main()
