"""``MultiheadAttention``: attention with several heads over learned projections.

PyTorch counterpart: torch/nn/modules/activation.py (v2.13), where PyTorch keeps it
next to the activation functions; those live in the ember-activation plugin, so this
file holds only ``MultiheadAttention``. ember leaves out the inference fast path
(``torch._native_multi_head_attention``): every call takes the same route, whose
results the fast path matches.
"""

from ember.native.attention import _canonical_mask, multi_head_attention_forward
from ember.nn import init
from ember.nn.modules.linear import NonDynamicallyQuantizableLinear
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter
from ember.plugins.forwarding import forwarder


def _empty(*shape, device=None, dtype=None):
    from ember.native.factory import empty

    return empty(*shape, device=device, dtype=dtype)


class MultiheadAttention(Module):
    """``MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O`` with
    ``head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)``.

    Args:
        embed_dim: model width E (split evenly across the heads).
        num_heads: number of heads; must divide ``embed_dim``.
        dropout: dropout probability on the attention weights (training only).
        bias: biases on the input and output projections.
        add_bias_kv: learn one extra key and value appended to every sequence.
        add_zero_attn: append an all-zero key and value to every sequence.
        kdim, vdim: widths of key and value (default E); when either differs from E,
            the projections are the separate ``q_proj_weight``, ``k_proj_weight``,
            ``v_proj_weight`` instead of the packed ``in_proj_weight``.
        batch_first: inputs and outputs are ``(N, L, E)`` instead of ``(L, N, E)``.

    Forward: ``(query, key, value, key_padding_mask=None, need_weights=True,
    attn_mask=None, average_attn_weights=True, is_causal=False)`` returns
    ``(output, weights)``; see ``ember.nn.functional.multi_head_attention_forward``
    for the masks (a bool True marks what may *not* be attended to).

    >>> import ember
    >>> m = ember.nn.MultiheadAttention(8, 2, batch_first=True)
    >>> x = ember.randn(3, 5, 8)
    >>> out, weights = m(x, x, x)
    >>> out.shape, weights.shape
    (ember.Size([3, 5, 8]), ember.Size([3, 5, 5]))
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        assert self.head_dim * num_heads == embed_dim, "embed_dim must be divisible by num_heads"

        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(_empty(3 * embed_dim, embed_dim, **factory))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(_empty(embed_dim, embed_dim, **factory))
            self.k_proj_weight = Parameter(_empty(embed_dim, self.kdim, **factory))
            self.v_proj_weight = Parameter(_empty(embed_dim, self.vdim, **factory))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_empty(3 * embed_dim, **factory))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **factory)
        if add_bias_kv:
            self.bias_k = Parameter(_empty(1, 1, embed_dim, **factory))
            self.bias_v = Parameter(_empty(1, 1, embed_dim, **factory))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        batched = query.dim() == 3
        key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", attn_mask,
                                           "attn_mask", query.dtype)
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype)
        if self.batch_first and batched:
            query, key, value = _to_sequence_first(query, key, value)
        separate = not self._qkv_same_embed_dim
        output, weights = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias,
            training=self.training, key_padding_mask=key_padding_mask,
            need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=separate, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and batched:
            output = output.transpose(1, 0)
        return output, weights


def _to_sequence_first(query, key, value):
    """(N, L, E) -> (L, N, E), keeping ``query is key is value`` identities, which
    select the packed projection's single-product path."""
    if key is value:
        if query is key:
            query = key = value = query.transpose(1, 0)
        else:
            query, key = query.transpose(1, 0), key.transpose(1, 0)
            value = key
    else:
        query, key, value = query.transpose(1, 0), key.transpose(1, 0), value.transpose(1, 0)
    return query, key, value


# torch.nn.modules.activation also holds ReLU, GELU, Softmax, ...: in ember they come
# from ember-activation, found through ember.nn's module catalogue.
__getattr__, __dir__ = forwarder(__name__)  # NOTE [ Forwarding modules ]
