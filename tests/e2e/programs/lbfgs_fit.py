"""A PyTorch-style program: fit a cubic polynomial to sin(x) with LBFGS and the
strong-Wolfe line search (the tutorials' polynomial fit). Prints the losses and the
coefficients as JSON.
tolerance: 1e-6
"""

import json
import math

import torch

torch.manual_seed(0)
x = torch.linspace(-math.pi, math.pi, 200, dtype=torch.float64)
y = torch.sin(x)
coefficients = torch.randn(4, dtype=torch.float64, requires_grad=True)
optimizer = torch.optim.LBFGS([coefficients], lr=1, max_iter=20, history_size=10, line_search_fn="strong_wolfe")


def closure():
    optimizer.zero_grad()
    a, b, c, d = coefficients
    loss = ((a + b * x + c * x ** 2 + d * x ** 3 - y) ** 2).mean()
    loss.backward()
    return loss


losses = [optimizer.step(closure).item() for _ in range(3)]
print(json.dumps({"losses": losses, "coefficients": coefficients.tolist()}))
