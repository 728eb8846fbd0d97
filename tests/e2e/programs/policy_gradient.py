"""A PyTorch-style program: REINFORCE with a Categorical policy on a fixed toy
environment (a corridor of 5 cells, reward at the right end), then one step of a
Gaussian policy's loss (Normal.rsample, log_prob, entropy, kl_divergence). Prints the
returns, losses, sampled actions and parameters as JSON.
tolerance: 1e-5
"""

import json

import torch
import torch.nn as nn
from torch.distributions import Categorical, Normal, kl_divergence

torch.manual_seed(0)
CELLS, STEPS = 5, 8


def one_hot(position):
    state = torch.zeros(CELLS)
    state[position] = 1.0
    return state


policy = nn.Sequential(nn.Linear(CELLS, 16), nn.Tanh(), nn.Linear(16, 2))
optimizer = torch.optim.Adam(policy.parameters(), lr=0.05)
returns, losses, actions_seen = [], [], []
for _ in range(12):
    position, log_probs, rewards, entropies = 0, [], [], []
    for _ in range(STEPS):
        dist = Categorical(logits=policy(one_hot(position)))
        action = dist.sample()
        actions_seen.append(int(action))
        log_probs.append(dist.log_prob(action))
        entropies.append(dist.entropy())
        position = max(0, min(CELLS - 1, position + (1 if action.item() == 1 else -1)))
        rewards.append(1.0 if position == CELLS - 1 else 0.0)
    discounted, running = [], 0.0
    for reward in reversed(rewards):
        running = reward + 0.9 * running
        discounted.insert(0, running)
    discounted = torch.tensor(discounted)
    baseline = discounted.mean()
    loss = -(torch.stack(log_probs) * (discounted - baseline)).sum() - 0.01 * torch.stack(entropies).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    returns.append(float(discounted[0]))
    losses.append(loss.item())

# A Gaussian policy: mean from a linear layer, a learned log-std, a reparameterised action.
mean_head = nn.Linear(3, 2)
log_std = nn.Parameter(torch.full((2,), -0.5))
states = torch.randn(4, 3)
gaussian = Normal(mean_head(states), log_std.exp())
sampled = gaussian.rsample()
reference = Normal(torch.zeros(2), torch.ones(2))
gaussian_loss = (-gaussian.log_prob(sampled).sum(-1).mean() + kl_divergence(gaussian, reference).sum(-1).mean()
                 - 0.1 * gaussian.entropy().sum(-1).mean() + (sampled ** 2).mean())
gaussian_loss.backward()

print(json.dumps({
    "returns": returns, "losses": losses, "actions": actions_seen,
    "first_layer": policy[0].weight.detach().reshape(-1).tolist()[:8],
    "gaussian_loss": gaussian_loss.item(), "sampled": sampled.detach().reshape(-1).tolist(),
    "log_std_grad": log_std.grad.tolist(), "mean_head_grad": mean_head.weight.grad.reshape(-1).tolist(),
}))
