"""A small decoder-only (GPT-style) language model built from ember's core Transformer
layers, with sampling (``generate``: temperature, top-k).

PyTorch counterpart: torch/nn/modules/transformer.py (v2.13): the blocks are
``nn.TransformerEncoderLayer`` (pre-LN, GELU, batch first) run with a causal mask inside
``nn.TransformerEncoder`` (final LayerNorm), so the same stack built with torch.nn
loads this model's ``transformer.*`` weights. The sizes follow minGPT's ``gpt-nano``
(3 layers, 3 heads, d = 48); the token and learned position embeddings (``wte``,
``wpe``) and the untied head (``lm_head``) are ember's own.
"""

import ember
from ember import nn


class GPT(nn.Module):
    """``logits = lm_head(transformer(wte(idx) + wpe(positions), causal))``.

    Args:
        vocab_size: number of tokens.
        block_size: longest context (the learned position table's length).
        n_layer, n_head, n_embd: depth, heads and width.
        dropout: dropout in the embeddings and the blocks.
    """

    def __init__(self, vocab_size, block_size, n_layer=3, n_head=3, n_embd=48, dropout=0.0):
        super().__init__()
        self.vocab_size, self.block_size = vocab_size, block_size
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.drop = nn.Dropout(dropout)
        layer = nn.TransformerEncoderLayer(n_embd, n_head, dim_feedforward=4 * n_embd, dropout=dropout,
                                           activation="gelu", batch_first=True, norm_first=True)
        self.transformer = nn.TransformerEncoder(layer, n_layer, norm=nn.LayerNorm(n_embd),
                                                 enable_nested_tensor=False)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.apply(_init_weights)

    def forward(self, idx):
        """``(N, T)`` token ids -> ``(N, T, vocab_size)`` next-token logits."""
        length = idx.shape[1]
        if length > self.block_size:
            raise ValueError(f"cannot run a sequence of length {length}: the block size "
                             f"is {self.block_size}")
        positions = ember.arange(length, device=idx.device)
        x = self.drop(self.wte(idx) + self.wpe(positions))
        mask = nn.Transformer.generate_square_subsequent_mask(length, device=idx.device)
        return self.lm_head(self.transformer(x, mask=mask, is_causal=True))

    @ember.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None, do_sample=True,
                 generator=None):
        """Extend ``idx`` ``(N, T)`` by ``max_new_tokens`` tokens, one at a time, feeding
        the last ``block_size`` tokens back in. Each token is drawn from
        ``softmax(logits / temperature)`` restricted to the ``top_k`` most likely tokens
        (or is the most likely one when ``do_sample`` is False)."""
        if temperature <= 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        for _ in range(max_new_tokens):
            context = idx if idx.shape[1] <= self.block_size else idx[:, -self.block_size:]
            logits = self(context)[:, -1] / temperature
            if top_k is not None:
                kth = logits.topk(min(top_k, logits.shape[-1]), dim=-1)[0][:, -1:]
                logits = logits.masked_fill(logits < kth, float("-inf"))
            if do_sample:
                next_token = _sample(logits.softmax(-1), generator)
            else:
                next_token = logits.argmax(-1, keepdim=True)
            idx = ember.cat([idx, next_token], dim=1)
        return idx


def _sample(probs, generator=None):
    """One index per row drawn from ``probs`` ``(N, V)`` (inverse CDF of a uniform draw)."""
    uniform = ember.rand(probs.shape[0], 1, generator=generator)
    cumulative = probs.cumsum(-1)
    index = (cumulative < uniform * cumulative[:, -1:]).sum(-1, keepdim=True)
    return index.clamp(max=probs.shape[-1] - 1)


def _init_weights(module):
    # GPT-2's initialisation: N(0, 0.02) for the linear and embedding weights, zero biases.
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if getattr(module, "bias", None) is not None:
            nn.init.zeros_(module.bias)


def gpt_nano(vocab_size=10, block_size=64, **overrides):
    """minGPT's gpt-nano: 3 pre-LN layers, 3 heads, d = 48 (about 86K parameters plus embeddings)."""
    return GPT(vocab_size, block_size, **overrides)


def gpt_micro(vocab_size=10, block_size=128, **overrides):
    """minGPT's gpt-micro: 4 pre-LN layers, 4 heads, d = 128."""
    options = dict(n_layer=4, n_head=4, n_embd=128)
    options.update(overrides)
    return GPT(vocab_size, block_size, **options)
