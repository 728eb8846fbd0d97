"""A PyTorch-style program: a bidirectional LSTM classifier over variable-length token
sequences (packed with pack_padded_sequence, unsorted), trained with Adam.
Task: is the sequence's first token larger than its last? Prints the losses as JSON.
tolerance: 1e-4
"""

import json

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence

torch.manual_seed(0)
VOCAB, BATCH, STEPS = 12, 16, 25


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 8)
        self.rnn = nn.LSTM(8, 16, num_layers=2, batch_first=True, bidirectional=True)
        self.head = nn.Linear(32, 2)

    def forward(self, tokens, lengths):
        packed = pack_padded_sequence(self.embed(tokens), lengths, batch_first=True, enforce_sorted=False)
        _, (h, _) = self.rnn(packed)
        return self.head(torch.cat([h[-2], h[-1]], dim=1))


def batch():
    lengths = torch.randint(2, 9, (BATCH,))
    sequences = [torch.randint(0, VOCAB, (int(n),)) for n in lengths]
    labels = torch.tensor([int(s[0] > s[-1]) for s in sequences])
    return pad_sequence(sequences, batch_first=True), lengths, labels


model = Classifier()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
losses = []
for _ in range(STEPS):
    tokens, lengths, labels = batch()
    loss = nn.functional.cross_entropy(model(tokens, lengths), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
with torch.no_grad():
    tokens, lengths, labels = batch()
    accuracy = (model(tokens, lengths).argmax(1) == labels).float().mean().item()
print(json.dumps({"losses": losses, "accuracy": accuracy}))
