"""The Transformer of "Attention Is All You Need": encoder and decoder layers, their
stacks, and the encoder-decoder model.

PyTorch counterpart: torch/nn/modules/transformer.py (v2.13). Same constructor
arguments, attribute and parameter names (``encoder.layers.0.self_attn.in_proj_weight``,
``linear1``, ``norm1``, ``decoder.layers.0.multihead_attn``, ``norm3``, ``encoder.norm``,
...), so a PyTorch state dict loads and gives the same outputs.

ember leaves out PyTorch's inference fast paths (``torch._transformer_encoder_layer_fwd``
and the nested-tensor route of ``TransformerEncoder``): see
NOTE [ No fast path, no nested tensors ].

# NOTE [ No fast path, no nested tensors ]
# In eval mode, without autograd, PyTorch may run an encoder layer as one fused kernel,
# and ``TransformerEncoder(enable_nested_tensor=True)`` packs the sequences of a padded
# batch into a nested tensor and unpacks them with zeros at the padded positions.
# ember always takes the plain route of the layer's ``forward`` (the one PyTorch takes
# in training), so the outputs at real positions are the same, while the outputs at
# padded positions are whatever the layers compute there (PyTorch's fast path gives 0).
# ``enable_nested_tensor`` and ``mask_check`` are accepted for compatibility and
# recorded; ``use_nested_tensor`` is always False.

# NOTE [ Masks in the Transformer ]
# Attention masks follow nn.MultiheadAttention: a bool True (or a float -inf) marks a
# pair or a key that may *not* be attended to; a float mask is added to the scores.
# Layers turn bool masks into float ones up front (``_canonical_mask``), so the stacks
# can compare a mask with ``generate_square_subsequent_mask`` and pass ``is_causal``
# down: a hint that lets attention build the causal mask itself.
"""

import copy

from ember.native.attention import _canonical_mask
from ember.nn import functional as F
from ember.nn import init
from ember.nn.modules.activation import MultiheadAttention
from ember.nn.modules.container import ModuleList
from ember.nn.modules.dropout import Dropout
from ember.nn.modules.linear import Linear
from ember.nn.modules.module import Module

__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
           "TransformerDecoderLayer"]


def _layer_norm(d_model, eps, bias, factory):
    """``ember.nn.LayerNorm`` comes from the ember-norm plugin, found through the catalogue
    (the error names the distribution when it is missing)."""
    from ember import nn

    return nn.LayerNorm(d_model, eps=eps, bias=bias, **factory)


def _get_activation_fn(activation):
    """The functional form named by ``activation`` ("relu" or "gelu")."""
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _activation_kind(activation):
    """1 for ReLU, 2 for GELU, 0 otherwise (PyTorch's ``activation_relu_or_gelu``).

    Module activations are recognised by class name: ReLU and GELU live in the
    ember-activation plugin, which the core does not import."""
    name = type(activation).__name__
    if activation is F.relu or name == "ReLU":
        return 1
    if activation is F.gelu or name == "GELU":
        return 2
    return 0


def _get_clones(module, n):
    """``n`` independent deep copies of ``module`` (each with its own parameters)."""
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_seq_len(src, batch_first):
    """The sequence length of ``src``: ``(S, E)``, ``(S, N, E)`` or ``(N, S, E)``."""
    if src.dim() == 2:
        return src.shape[0]
    return src.shape[1 if batch_first else 0]


def _generate_square_subsequent_mask(sz, device=None, dtype=None):
    """``(sz, sz)`` float mask: -inf above the diagonal (the future), 0 elsewhere."""
    from ember.native.factory import arange, zeros

    rows = arange(sz, device=device).unsqueeze(1)
    cols = arange(sz, device=device).unsqueeze(0)
    return zeros((sz, sz), device=device, dtype=dtype).masked_fill(cols > rows,
                                                                   float("-inf"))


def _detect_is_causal_mask(mask, is_causal=None, size=None):
    """``is_causal`` when given; otherwise whether ``mask`` equals the causal mask of
    ``size`` (or of its own length) -- the hint of NOTE [ Masks in the Transformer ]."""
    if is_causal is not None or mask is None:
        return is_causal is True
    sz = size if size is not None else mask.shape[-2]
    causal = _generate_square_subsequent_mask(sz, device=mask.device, dtype=mask.dtype)
    if tuple(mask.shape) != tuple(causal.shape):
        return False
    return bool((mask == causal).all())


class Transformer(Module):
    """An encoder-decoder Transformer: ``decoder(tgt, encoder(src))``.

    Args:
        d_model: width of the inputs and of every layer (default 512).
        nhead: attention heads per layer (default 8).
        num_encoder_layers, num_decoder_layers: stack depths (default 6 each).
        dim_feedforward: width of the feed-forward hidden layer (default 2048).
        dropout: dropout probability (default 0.1).
        activation: "relu" (default), "gelu" or a unary callable.
        custom_encoder, custom_decoder: modules used instead of the default stacks.
        layer_norm_eps: eps of every LayerNorm (default 1e-5).
        batch_first: inputs and outputs are ``(N, S, E)`` instead of ``(S, N, E)``.
        norm_first: LayerNorm before attention and feed-forward (pre-LN) instead of after.
        bias: biases in the Linear and LayerNorm layers.

    Both stacks end in a LayerNorm (``encoder.norm``, ``decoder.norm``), as in PyTorch.

    >>> import ember
    >>> model = ember.nn.Transformer(d_model=16, nhead=2, num_encoder_layers=1,
    ...                              num_decoder_layers=1, dim_feedforward=32)
    >>> src, tgt = ember.randn(5, 3, 16), ember.randn(4, 3, 16)
    >>> model(src, tgt).shape
    ember.Size([4, 3, 16])
    """

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation=F.relu, custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        layer_args = dict(d_model=d_model, nhead=nhead, dim_feedforward=dim_feedforward, dropout=dropout,
                          activation=activation, layer_norm_eps=layer_norm_eps, batch_first=batch_first,
                          norm_first=norm_first, bias=bias, **factory)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            encoder_layer = TransformerEncoderLayer(**layer_args)
            encoder_norm = _layer_norm(d_model, layer_norm_eps, bias, factory)
            self.encoder = TransformerEncoder(encoder_layer, num_encoder_layers, encoder_norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            decoder_layer = TransformerDecoderLayer(**layer_args)
            decoder_norm = _layer_norm(d_model, layer_norm_eps, bias, factory)
            self.decoder = TransformerDecoder(decoder_layer, num_decoder_layers, decoder_norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        """``src``: ``(S, N, E)``, ``tgt``: ``(T, N, E)`` (``(N, S, E)``, ``(N, T, E)`` when
        batch_first, or unbatched ``(S, E)``, ``(T, E)``); returns ``tgt``'s shape.

        Masks: ``src_mask`` ``(S, S)``, ``tgt_mask`` ``(T, T)``, ``memory_mask`` ``(T, S)``
        (or 3-d with ``N * nhead`` first); ``*_key_padding_mask`` ``(N, S)`` / ``(N, T)``.
        ``src_is_causal``/``tgt_is_causal`` default to detecting the causal mask.
        """
        batch_dim = 0 if self.batch_first else 1
        if src.dim() == 3 and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """The causal mask: ``(sz, sz)`` with -inf above the diagonal and 0 elsewhere.

        >>> import ember
        >>> ember.nn.Transformer.generate_square_subsequent_mask(3)
        tensor([[0., -inf, -inf],
                [0., 0., -inf],
                [0., 0., 0.]])
        """
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self):
        # Every matrix, attention projections included, gets Xavier-uniform weights.
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)


class TransformerEncoder(Module):
    """A stack of ``num_layers`` copies of ``encoder_layer``, then ``norm`` if given.

    Args:
        encoder_layer: the layer to copy (each copy has its own parameters).
        num_layers: how many layers.
        norm: an optional final module (usually a LayerNorm).
        enable_nested_tensor, mask_check: accepted for PyTorch compatibility; ember has no
            nested-tensor path (NOTE [ No fast path, no nested tensors ]).

    >>> import ember
    >>> layer = ember.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16)
    >>> ember.nn.TransformerEncoder(layer, num_layers=2)(ember.randn(5, 3, 8)).shape
    ember.Size([5, 3, 8])
    """

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = False
        self.mask_check = mask_check

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        """Run ``src`` through every layer with the same masks; ``is_causal=None`` detects
        a causal ``mask``."""
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               mask, "mask", src.dtype)
        mask = _canonical_mask(mask, "mask", None, "", src.dtype)
        batch_first = getattr(getattr(self.layers[0], "self_attn", None), "batch_first",
                              False)
        is_causal = _detect_is_causal_mask(mask, is_causal, _get_seq_len(src, batch_first))
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, is_causal=is_causal,
                           src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoder(Module):
    """A stack of ``num_layers`` copies of ``decoder_layer``, then ``norm`` if given.

    >>> import ember
    >>> layer = ember.nn.TransformerDecoderLayer(d_model=8, nhead=2, dim_feedforward=16)
    >>> decoder = ember.nn.TransformerDecoder(layer, num_layers=2)
    >>> decoder(ember.randn(4, 3, 8), ember.randn(5, 3, 8)).shape
    ember.Size([4, 3, 8])
    """

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None,
                tgt_is_causal=None, memory_is_causal=False):
        """Run ``tgt`` through every layer, each attending to ``memory``;
        ``tgt_is_causal=None`` detects a causal ``tgt_mask``."""
        batch_first = getattr(getattr(self.layers[0], "self_attn", None), "batch_first",
                              False)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal,
                                               _get_seq_len(tgt, batch_first))
        output = tgt
        for layer in self.layers:
            output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                           tgt_key_padding_mask=tgt_key_padding_mask,
                           memory_key_padding_mask=memory_key_padding_mask,
                           tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward network, each in a residual branch with a
    LayerNorm: after the sum (post-LN, default) or on the branch's input (``norm_first``).

    post-LN: ``x = norm1(x + sa(x)); x = norm2(x + ff(x))``
    pre-LN:  ``x = x + sa(norm1(x)); x = x + ff(norm2(x))``
    where ``ff(x) = linear2(dropout(activation(linear1(x))))``.

    Args: as ``Transformer`` (``d_model``, ``nhead``, ``dim_feedforward``, ``dropout``,
    ``activation``, ``layer_norm_eps``, ``batch_first``, ``norm_first``, ``bias``).

    >>> import ember
    >>> layer = ember.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, batch_first=True)
    >>> layer(ember.randn(3, 5, 8)).shape
    ember.Size([3, 5, 8])
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            **factory)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = _layer_norm(d_model, layer_norm_eps, bias, factory)
        self.norm2 = _layer_norm(d_model, layer_norm_eps, bias, factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        self.activation_relu_or_gelu = _activation_kind(activation)
        self.activation = activation  # a Module activation becomes a submodule, as in PyTorch

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               src_mask, "src_mask", src.dtype)
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerDecoderLayer(Module):
    """Self-attention over the target, attention to the encoder's ``memory``
    (``multihead_attn``), then a feed-forward network; each a residual branch with a
    LayerNorm (``norm1``-``norm3``), after the sum or, with ``norm_first``, before the branch.

    Args: as ``TransformerEncoderLayer``.

    >>> import ember
    >>> layer = ember.nn.TransformerDecoderLayer(d_model=8, nhead=2, dim_feedforward=16)
    >>> layer(ember.randn(4, 3, 8), ember.randn(5, 3, 8)).shape
    ember.Size([4, 3, 8])
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias,
                                            **factory)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first,
                                                 bias=bias, **factory)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = _layer_norm(d_model, layer_norm_eps, bias, factory)
        self.norm2 = _layer_norm(d_model, layer_norm_eps, bias, factory)
        self.norm3 = _layer_norm(d_model, layer_norm_eps, bias, factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        self.activation = activation

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None,
                tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask,
                                   tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask,
                                    memory_key_padding_mask, memory_is_causal)
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                           memory_is_causal))
        return self.norm3(x + self._ff_block(x))

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           is_causal=is_causal, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, memory, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, memory, memory, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, is_causal=is_causal,
                                need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)
