"""A PyTorch-style program: an MLP regression trained under CPU autocast (float16
products, float32 loss) with a GradScaler and gradient clipping after unscale_.
Prints the losses and the scale as JSON.
tolerance: 2e-2
"""

import json

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 10)
x = torch.randn(64, 8)
target = x[:, :1] * 2 - x[:, 1:2]
losses = []
for _ in range(30):
    with torch.autocast("cpu", dtype=torch.float16):
        out = model(x)
        loss = nn.functional.mse_loss(out, target)
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    losses.append(loss.item())
print(json.dumps({"losses": losses, "dtype": str(out.dtype).split(".")[-1], "scale": scaler.get_scale()}))
