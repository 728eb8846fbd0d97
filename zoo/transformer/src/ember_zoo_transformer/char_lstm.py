"""A character-level LSTM language model (char-rnn), with sampling.

PyTorch counterpart: torch/nn/modules/rnn.py (v2.13): the body is ``nn.LSTM`` with
``batch_first=True``, so a ``torch.nn.LSTM`` of the same sizes loads this model's
``lstm.*`` weights; the embedding (``encoder``) and the output layer (``decoder``) are
those of PyTorch's word_language_model example. It sits in this distribution because it
shares the ``language-model`` task and the ``pydoc-text`` data with the GPT models.
"""

import ember
from ember import nn
from ember_zoo_transformer.gpt import _sample


class CharLSTM(nn.Module):
    """``logits = decoder(lstm(encoder(idx)))``.

    Args:
        vocab_size: number of characters.
        block_size: the training window (recorded only: an LSTM has no context limit).
        n_embd: width of the character embedding.
        hidden_size: LSTM state size.
        num_layers: stacked LSTM layers.
        dropout: dropout on the embedding, between LSTM layers and before the decoder.
    """

    def __init__(self, vocab_size, block_size=None, n_embd=64, hidden_size=256, num_layers=2, dropout=0.0):
        super().__init__()
        self.vocab_size, self.block_size = vocab_size, block_size
        self.encoder = nn.Embedding(vocab_size, n_embd)
        self.drop = nn.Dropout(dropout)
        self.lstm = nn.LSTM(n_embd, hidden_size, num_layers, dropout=dropout if num_layers > 1 else 0.0,
                            batch_first=True)
        self.decoder = nn.Linear(hidden_size, vocab_size)

    def forward(self, idx, state=None, return_state=False):
        """``(N, T)`` character ids -> ``(N, T, vocab_size)`` next-character logits (and
        the final ``(h, c)`` with ``return_state=True``, to continue from it)."""
        output, state = self.lstm(self.drop(self.encoder(idx)), state)
        logits = self.decoder(self.drop(output))
        return (logits, state) if return_state else logits

    @ember.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None, do_sample=True, generator=None):
        """Extend ``idx`` ``(N, T)`` by ``max_new_tokens`` characters: the prompt runs once,
        then each new character is fed back with the carried LSTM state. Sampling as
        ``GPT.generate`` (temperature, top-k, or greedy with ``do_sample=False``)."""
        if temperature <= 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        logits, state = self(idx, return_state=True)
        for _ in range(max_new_tokens):
            last = logits[:, -1] / temperature
            if top_k is not None:
                kth = last.topk(min(top_k, last.shape[-1]), dim=-1)[0][:, -1:]
                last = last.masked_fill(last < kth, float("-inf"))
            next_token = _sample(last.softmax(-1), generator) if do_sample else last.argmax(-1, keepdim=True)
            idx = ember.cat([idx, next_token], dim=1)
            logits, state = self(next_token, state, return_state=True)
        return idx


def char_lstm(**overrides):
    """2 layers of 256, embedding 64 (about 0.9 M parameters for pydoc-text's vocabulary)."""
    options = {"vocab_size": 128, "n_embd": 64, "hidden_size": 256, "num_layers": 2}
    options.update(overrides)
    return CharLSTM(**options)


def char_lstm_small(**overrides):
    """1 layer of 128, embedding 32: the quick one."""
    options = {"vocab_size": 128, "n_embd": 32, "hidden_size": 128, "num_layers": 1}
    options.update(overrides)
    return CharLSTM(**options)
