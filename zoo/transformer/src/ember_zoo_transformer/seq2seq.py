"""An encoder-decoder Transformer for symbol sequences: embeddings, positional encoding,
``ember.nn.Transformer``, an output head, and greedy and beam-search decoding.

PyTorch counterpart: torch/nn/modules/transformer.py (v2.13) for the core, whose
parameter names this model keeps under ``transformer.*`` (so a ``torch.nn.Transformer``
state dict loads there); the embeddings and head follow the Annotated Transformer's
``src_embed``/``tgt_embed``/``generator``, written for ember.

Tokens: the source uses symbols ``0 .. num_symbols-1``; the target side adds one
begin-of-sequence token ``BOS = num_symbols`` that starts every decoder input (teacher
forcing feeds ``[BOS, y_0, ..., y_{T-2}]`` to predict ``y``). The head scores the
``num_symbols`` real symbols only, since BOS is never predicted.
"""

import math

import numpy as np

import ember
from ember import nn
from ember_zoo_transformer.positional import PositionalEncoding


class Seq2SeqTransformer(nn.Module):
    """``logits = generator(decoder(tgt_embed(tgt_in), encoder(src_embed(src))))``.

    Args:
        num_symbols: size of the symbol alphabet (the target side adds BOS).
        d_model, nhead, num_encoder_layers, num_decoder_layers, dim_feedforward, dropout,
            activation, norm_first: passed to ``ember.nn.Transformer`` (batch first).
        max_len: longest sequence the positional table covers.
    """

    def __init__(self, num_symbols=10, d_model=64, nhead=4, num_encoder_layers=2, num_decoder_layers=2,
                 dim_feedforward=128, dropout=0.0, activation="relu", norm_first=False, max_len=64):
        super().__init__()
        self.num_symbols = num_symbols
        self.bos = num_symbols
        self.d_model = d_model
        self.src_embed = nn.Embedding(num_symbols, d_model)
        self.tgt_embed = nn.Embedding(num_symbols + 1, d_model)
        self.positional = PositionalEncoding(d_model, max_len, dropout)
        self.transformer = nn.Transformer(d_model=d_model, nhead=nhead, num_encoder_layers=num_encoder_layers,
                                          num_decoder_layers=num_decoder_layers, dim_feedforward=dim_feedforward,
                                          dropout=dropout, activation=activation, batch_first=True,
                                          norm_first=norm_first)
        self.generator = nn.Linear(d_model, num_symbols)

    def _embed(self, embedding, tokens):
        # Scaled by sqrt(d_model) as in the paper, so the embedding is not drowned by the
        # positional table.
        return self.positional(embedding(tokens) * math.sqrt(self.d_model))

    def encode(self, src):
        """``(N, S)`` symbols -> memory ``(N, S, d_model)``."""
        return self.transformer.encoder(self._embed(self.src_embed, src))

    def decode(self, tgt_in, memory):
        """Decoder inputs ``(N, T)`` (starting with BOS) and memory -> logits
        ``(N, T, num_symbols)``."""
        length = tgt_in.shape[1]
        mask = nn.Transformer.generate_square_subsequent_mask(length)
        hidden = self.transformer.decoder(self._embed(self.tgt_embed, tgt_in), memory,
                                          tgt_mask=mask, tgt_is_causal=True)
        return self.generator(hidden)

    def forward(self, src, tgt_in):
        """Teacher forcing: logits for every position of ``tgt_in``."""
        return self.decode(tgt_in, self.encode(src))

    def shift_right(self, tgt):
        """``[BOS, y_0, ..., y_{T-2}]``: the decoder input that predicts ``tgt``."""
        bos = ember.full((tgt.shape[0], 1), self.bos, dtype=tgt.dtype, device=tgt.device)
        return ember.cat([bos, tgt[:, :-1]], dim=1)

    @ember.no_grad()
    def greedy_decode(self, src, max_len=None):
        """The most likely symbol at each step: ``(N, S)`` -> ``(N, max_len)``
        (default S)."""
        max_len = src.shape[1] if max_len is None else max_len
        memory = self.encode(src)
        tokens = ember.full((src.shape[0], 1), self.bos, dtype=ember.int64,
                            device=src.device)
        for _ in range(max_len):
            next_symbol = self.decode(tokens, memory)[:, -1].argmax(-1)
            tokens = ember.cat([tokens, next_symbol.unsqueeze(1)], dim=1)
        return tokens[:, 1:]

    @ember.no_grad()
    def beam_search(self, src, beam_size=4, max_len=None):
        """The ``beam_size`` best partial sequences (by summed log-probability) are kept
        and extended at each step; returns ``(sequences (N, max_len), scores (N,))`` of the
        best complete one. Sequences have a fixed length (the tasks have no end token)."""
        max_len = src.shape[1] if max_len is None else max_len
        batch = src.shape[0]
        memory = self.encode(src)
        # Every beam of a sample shares its memory: (N * beam, S, d).
        memory = memory.repeat_interleave(beam_size, dim=0)
        tokens = np.full((batch * beam_size, 1), self.bos, dtype=np.int64)
        scores = np.full((batch, beam_size), -np.inf)
        scores[:, 0] = 0.0  # one live beam at the start: the others are copies of it
        for _ in range(max_len):
            logits = self.decode(ember.tensor(tokens), memory)[:, -1]
            log_probs = logits.log_softmax(-1).numpy().astype(np.float64).reshape(batch, beam_size, -1)
            candidates = (scores[:, :, None] + log_probs).reshape(batch, -1)
            best = np.argsort(-candidates, axis=1, kind="stable")[:, :beam_size]
            scores = np.take_along_axis(candidates, best, axis=1)
            parent, symbol = np.divmod(best, self.num_symbols)
            rows = (np.arange(batch)[:, None] * beam_size + parent).reshape(-1)
            tokens = np.concatenate([tokens[rows], symbol.reshape(-1, 1)], axis=1)
        sequences = tokens[:, 1:].reshape(batch, beam_size, max_len)[:, 0]
        return ember.tensor(np.ascontiguousarray(sequences)), ember.tensor(scores[:, 0])

    @ember.no_grad()
    def sequence_log_prob(self, src, tgt):
        """Summed log-probability of ``tgt`` given ``src``: ``(N,)``."""
        log_probs = self(src, self.shift_right(tgt)).log_softmax(-1)
        return log_probs.gather(-1, tgt.unsqueeze(-1)).squeeze(-1).sum(-1)


def transformer_seq2seq_tiny(num_symbols=10, **overrides):
    """Post-LN encoder-decoder, d_model 64, 4 heads, 2+2 layers, feed-forward 128 (about 150K parameters)."""
    return Seq2SeqTransformer(num_symbols=num_symbols, **overrides)


def transformer_seq2seq_small(num_symbols=10, **overrides):
    """Post-LN encoder-decoder, d_model 128, 4 heads, 3+3 layers, feed-forward 512."""
    options = dict(d_model=128, nhead=4, num_encoder_layers=3, num_decoder_layers=3, dim_feedforward=512)
    options.update(overrides)
    return Seq2SeqTransformer(num_symbols=num_symbols, **options)
