"""A PyTorch-style program: functorch's per-sample-gradients and model-ensembling
tutorials in small. A CNN's gradients per example through vmap(grad(...)) are checked
against one backward per example, and an ensemble of MLPs runs on one batch through
stack_module_state + vmap. Prints the gradient norms and the ensemble's outputs as JSON.
tolerance: 1e-4
"""

import json

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, stack_module_state, vmap

torch.manual_seed(0)


class SimpleCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.fc1 = nn.Linear(16 * 2 * 2, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)


model = SimpleCNN()
data = torch.randn(16, 1, 8, 8)
targets = torch.randint(10, (16,))
params = {k: v.detach() for k, v in model.named_parameters()}
buffers = {k: v.detach() for k, v in model.named_buffers()}


def compute_loss(params, buffers, sample, target):
    predictions = functional_call(model, (params, buffers), (sample.unsqueeze(0),))
    return F.nll_loss(predictions, target.unsqueeze(0))


per_sample = vmap(grad(compute_loss), in_dims=(None, None, 0, 0))(params, buffers, data, targets)
worst = 0.0
for i in range(4):  # one backward per example agrees
    model.zero_grad()
    F.nll_loss(model(data[i:i + 1]), targets[i:i + 1]).backward()
    for name, p in model.named_parameters():
        worst = max(worst, (per_sample[name][i] - p.grad).abs().max().item())
assert worst < 1e-5, worst

models = [nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 3)) for _ in range(5)]
stacked, stacked_buffers = stack_module_state(models)


def run(p, b, x):
    return functional_call(models[0], (p, b), (x,))


minibatch = torch.randn(4, 8)
ensemble = vmap(run, in_dims=(0, 0, None))(stacked, stacked_buffers, minibatch)
print(json.dumps({"grad_norms": [v.flatten(1).norm(dim=1).tolist() for v in per_sample.values()],
                  "ensemble": ensemble.tolist(), "loop_agrees": worst < 1e-5}))
