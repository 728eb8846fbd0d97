"""Sinusoidal positional encoding ("Attention Is All You Need", section 3.5).

PyTorch counterpart: none in torch (``nn.Transformer`` has no embeddings); the
``PositionalEncoding`` of PyTorch's word-language-model example and of the Annotated
Transformer, written here from the paper's formula.
"""

import math

import numpy as np

import ember
from ember import nn


def sinusoidal_table(max_len, d_model):
    """``(max_len, d_model)``: ``PE[p, 2i] = sin(p / 10000^(2i/d))``, ``PE[p, 2i+1] = cos(...)``."""
    positions = np.arange(max_len, dtype=np.float64)[:, None]
    frequencies = np.exp(np.arange(0, d_model, 2, dtype=np.float64) * (-math.log(10000.0) / d_model))
    table = np.zeros((max_len, d_model), dtype=np.float64)
    table[:, 0::2] = np.sin(positions * frequencies)
    table[:, 1::2] = np.cos(positions * frequencies)[:, :d_model // 2]
    return table.astype(np.float32)


class PositionalEncoding(nn.Module):
    """Adds the sinusoidal table to ``(N, T, d_model)`` inputs (batch first), then dropout.

    The table is a non-persistent buffer: it is not learned, so it stays out of the
    state dict (a checkpoint holds only what training changes).
    """

    def __init__(self, d_model, max_len=512, dropout=0.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("pe", ember.tensor(sinusoidal_table(max_len, d_model)), persistent=False)

    def forward(self, x):
        length = x.shape[1]
        if length > self.pe.shape[0]:
            raise ValueError(f"sequence of length {length} is longer than the positional table ({self.pe.shape[0]})")
        return self.dropout(x + self.pe[:length])
