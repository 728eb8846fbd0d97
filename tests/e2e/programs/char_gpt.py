"""A PyTorch-style program: a tiny character-level GPT (minGPT-like: token and position
embeddings, a causal TransformerEncoder, a linear head) trained on random windows
drawn by RandomSampler(replacement=True) from a DataLoader, then sampled with
torch.multinomial. Prints the losses and the sample's ids as JSON.
tolerance: 1e-4
"""

import json

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset, RandomSampler

torch.manual_seed(0)
TEXT = "the quick brown fox jumps over the lazy dog; " * 20
CHARS = sorted(set(TEXT))
BLOCK, EMBED = 16, 32


class Windows(Dataset):
    def __init__(self, text):
        self.ids = torch.tensor([CHARS.index(c) for c in text])

    def __len__(self):
        return len(self.ids) - BLOCK

    def __getitem__(self, i):
        return self.ids[i:i + BLOCK], self.ids[i + 1:i + BLOCK + 1]


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(len(CHARS), EMBED)
        self.pos = nn.Embedding(BLOCK, EMBED)
        layer = nn.TransformerEncoderLayer(EMBED, 4, 64, dropout=0.0, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(EMBED, len(CHARS))

    def forward(self, idx):
        t = idx.shape[1]
        mask = nn.Transformer.generate_square_subsequent_mask(t)
        x = self.tok(idx) + self.pos(torch.arange(t))
        return self.head(self.blocks(x, mask=mask, is_causal=True))


data = Windows(TEXT)
sampler = RandomSampler(data, replacement=True, num_samples=10 ** 10)  # drawn lazily, as in torch
loader = DataLoader(data, batch_size=8, sampler=sampler)
model = GPT()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
losses = []
for step, (x, y) in enumerate(loader):
    logits = model(x)
    loss = nn.functional.cross_entropy(logits.reshape(-1, len(CHARS)), y.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
    if step == 19:
        break
model.eval()
idx = torch.tensor([[CHARS.index("t")]])
with torch.no_grad():
    for _ in range(10):
        probs = model(idx[:, -BLOCK:])[:, -1].softmax(-1)
        idx = torch.cat([idx, torch.multinomial(probs, 1)], dim=1)
print(json.dumps({"losses": losses, "sample": idx[0].tolist()}))
