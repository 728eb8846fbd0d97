"""``stochastic_depth``: drop a residual branch at random, per batch or per row.

PyTorch counterpart: torchvision/ops/stochastic_depth.py (torchvision 0.28).
"""

import ember
from ember import nn


def stochastic_depth(input, p, mode, training=True):
    """Zero the whole ``input`` (``mode="batch"``) or each of its rows (``"row"``) with
    probability ``p``, and scale what survives by ``1 / (1 - p)`` (Huang et al., 2016).

    Args:
        input: ``(N, ...)``, the output of a residual branch.
        p: the probability of dropping.
        mode: ``"batch"`` or ``"row"``.
        training: apply it (``False``: the input, unchanged).
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"drop probability has to be between 0 and 1, but got {p}")
    if mode not in ("batch", "row"):
        raise ValueError(f"mode has to be either 'batch' or 'row', but got {mode}")
    if not training or p == 0.0:
        return input
    survival_rate = 1.0 - p
    size = [input.shape[0]] + [1] * (input.ndim - 1) if mode == "row" else [1] * input.ndim
    noise = ember.empty(size, dtype=input.dtype, device=input.device).bernoulli_(survival_rate)
    if survival_rate > 0.0:
        noise.div_(survival_rate)
    return input * noise


class StochasticDepth(nn.Module):
    """:func:`stochastic_depth` as a module (applied in training mode only)."""

    def __init__(self, p, mode):
        super().__init__()
        self.p = p
        self.mode = mode

    def forward(self, input):
        return stochastic_depth(input, self.p, self.mode, self.training)

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p}, mode={self.mode})"
