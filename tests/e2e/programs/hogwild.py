"""A PyTorch-style program: Hogwild training (the official mnist_hogwild example's
shape) on a regression: model.share_memory(), then worker processes that each run SGD
on the same weights. The workers run one after the other, so the numbers are
deterministic and show that each saw the previous one's updates; then two run at the
same time. Prints the losses and the final weights as JSON.
tolerance: 1e-5
"""

import json

import torch
import torch.multiprocessing as mp
import torch.nn as nn


def train(rank, model, steps, results):
    torch.manual_seed(rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for _ in range(steps):
        x = torch.randn(16, 4)
        loss = nn.functional.mse_loss(model(x), x.sum(1, keepdim=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    results.put((rank, loss.item()))


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    model.share_memory()
    results = mp.Queue()
    sequential = []
    for rank in range(2):
        p = mp.Process(target=train, args=(rank, model, 20, results))
        p.start()
        sequential.append(results.get())
        p.join()
    weights = model.weight.detach().flatten().tolist()
    together = [mp.Process(target=train, args=(rank, model, 20, results)) for rank in (2, 3)]
    for p in together:
        p.start()
    finished = sorted(results.get() for _ in together)
    for p in together:
        p.join()
    with torch.no_grad():
        x = torch.randn(64, 4)
        final = nn.functional.mse_loss(model(x), x.sum(1, keepdim=True)).item()
    print(json.dumps({"sequential_losses": sequential, "weights_after_two_workers": weights,
                      "parallel_workers_finished": [rank for rank, _ in finished],
                      "converged": final < 0.05}))
