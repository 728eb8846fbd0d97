"""Attention: ``scaled_dot_product_attention`` and the multi-head attention forward of
``nn.MultiheadAttention``.

PyTorch counterpart: aten/src/ATen/native/transformers/attention.cpp
(``_scaled_dot_product_attention_math``, ``_safe_softmax``) and torch/nn/functional.py
(``scaled_dot_product_attention``, ``multi_head_attention_forward``,
``_in_projection_packed``, ``_canonical_mask``) (v2.13).

Only the "math" path exists in ember: products, a mask, a softmax and an optional
dropout, built from ember ops, so every gradient (and double backward) comes from
their formulas. ``_safe_softmax`` is the one op of its own, see
NOTE [ Fully masked rows ].
"""

import math

from ember.amp.state import autocast_state, composite_inputs, suspended
from ember.autograd.forward_grad import AUTO_ELEMENT_WISE
from ember.dispatcher import NONE, Op
from ember.native.softmax import _softmax_backward
from ember.opmath import is_reduced

# NOTE [ Fully masked rows ]
# A query whose every key is masked out has only -inf scores. A plain softmax gives
# NaN there (0 / 0). PyTorch's scaled_dot_product_attention returns zeros for such a
# row instead, and zero gradients, through `_safe_softmax`; the need_weights path of
# multi_head_attention_forward still uses the plain softmax, so it gives NaN (ember
# keeps both behaviours, as PyTorch does). The kernel below shifts an all -inf row by
# 0 rather than by its max (-inf - -inf is NaN), so its exponentials are all 0 and it
# divides by 1 instead of 0. The backward is softmax's, y * (g - sum(g * y)), which is
# 0 on those rows because y is.


def _safe_softmax_kernel(xp, a, dim):
    if a.size == 0:
        return a.copy()
    shift = xp.amax(a, axis=dim, keepdims=True)
    shift[shift == -xp.inf] = 0
    e = a - shift
    xp.exp(e, out=e)
    total = xp.sum(e, axis=dim, keepdims=True)
    total[total == 0] = 1
    e /= total
    return e


SAFE_SOFTMAX = Op("aten::_safe_softmax", _safe_softmax_kernel, _softmax_backward, promote=NONE, save="outputs",
                   opmath=True, jvp=AUTO_ELEMENT_WISE)


def _type_name(dtype):
    from ember.dtypes import C_TYPE_NAMES

    return C_TYPE_NAMES.get(dtype.name, dtype.name)


def _check_sdpa(query, key, value, attn_mask, dropout_p, is_causal):
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                           f"{query.ndim} key.dim: {key.ndim} and value.dim: {value.ndim} instead.")
    if not query.dtype is key.dtype is value.dtype:
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{_type_name(query.dtype)} key.dtype: {_type_name(key.dtype)} and value.dtype: "
                           f"{_type_name(value.dtype)} instead.")
    if not query.dtype.is_floating_point:
        raise RuntimeError(f"expected scalar type Float but found {_legacy(query.dtype)}")
    if attn_mask is not None:
        if is_causal:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                               "is_causal=True")
        if attn_mask.dtype.name != "bool" and attn_mask.dtype is not query.dtype:
            raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                               f"attn_mask.dtype: {_type_name(attn_mask.dtype)} and  query.dtype: "
                               f"{_type_name(query.dtype)} instead.")
    if dropout_p < 0.0 or dropout_p > 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")


def _legacy(dtype):
    from ember.native.factory import _legacy_name

    return _legacy_name(dtype)


def _causal_mask(query, key):
    """``mask[i, j] = j <= i``: the lower triangle of an (L, S) grid, top-left aligned."""
    from ember.native.factory import arange

    rows = arange(query.shape[-2], device=query.device).unsqueeze(1)
    cols = arange(key.shape[-2], device=query.device).unsqueeze(0)
    return cols <= rows


def _repeat_kv_heads(query, key, value):
    """Grouped-query attention: each key/value head serves a group of query heads."""
    heads_q, heads_k, heads_v = query.shape[-3], key.shape[-3], value.shape[-3]
    if heads_q % heads_k or heads_q % heads_v:
        raise RuntimeError("Number of heads in key and value must divide the number of heads in query")
    if heads_k != heads_q:
        key = key.repeat_interleave(heads_q // heads_k, dim=-3)
    if heads_v != heads_q:
        value = value.repeat_interleave(heads_q // heads_v, dim=-3)
    return key, value


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """``softmax(Q K^T * scale + mask) V``, with an optional dropout on the weights.

    Args:
        query: ``(..., L, E)``; key: ``(..., S, E)``; value: ``(..., S, Ev)``; the
            leading dims broadcast.
        attn_mask: broadcastable to ``(..., L, S)``; a bool mask marks with True the
            keys that *take part* (False is masked out), a float mask is added to the
            scores (use -inf to mask out).
        dropout_p: dropout probability on the attention weights (applied whenever > 0,
            whatever the module's mode).
        is_causal: mask out keys after the query position (no ``attn_mask`` then).
        scale: the factor on the scores; ``1 / sqrt(E)`` by default.
        enable_gqa: let key and value have fewer heads (dim -3) than query.

    Returns:
        ``(..., L, Ev)``. A query with every key masked out gives zeros (see
        NOTE [ Fully masked rows ]).

    >>> import ember
    >>> q = k = v = ember.ones(1, 2, 4)
    >>> ember.nn.functional.scaled_dot_product_attention(q, k, v).shape
    ember.Size([1, 2, 4])
    """
    if autocast_state.enabled:  # on autocast's lower-precision list: cast, nothing inside
        inputs = composite_inputs("scaled_dot_product_attention", query, key, value, attn_mask)
        with suspended():
            return scaled_dot_product_attention(*inputs, dropout_p, is_causal, scale, enable_gqa)
    _check_sdpa(query, key, value, attn_mask, dropout_p, is_causal)
    dtype = query.dtype
    if is_reduced(dtype):  # in float32, rounded once, as torch (NOTE [ opmath ])
        if attn_mask is not None and attn_mask.dtype is dtype:
            attn_mask = attn_mask.float()
        query, key, value = query.float(), key.float(), value.float()
        out = scaled_dot_product_attention(query, key, value, attn_mask, dropout_p,
                                           is_causal, scale, enable_gqa)
        return out.to(dtype)
    if is_causal:
        attn_mask = _causal_mask(query, key)
    if enable_gqa:
        key, value = _repeat_kv_heads(query, key, value)
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    scores = (query * scale).matmul(key.mT)
    if attn_mask is not None:
        if attn_mask.dtype.name == "bool":
            scores = scores.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            scores = scores + attn_mask
    weights = SAFE_SOFTMAX(scores, dim=-1)
    if dropout_p > 0.0:
        from ember.native.dropout import dropout

        weights = dropout(weights, dropout_p)
    return weights.matmul(value)


# --- multi-head attention ------------------------------------------------------------


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Is the input batched (3-d) or not (2-d)? PyTorch's AssertionErrors otherwise."""
    if query.ndim not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.ndim}-D query "
                             "tensor")
    batched = query.ndim == 3
    kind = "batched (3-D)" if batched else "unbatched (2-D)"
    if key.ndim != query.ndim or value.ndim != query.ndim:
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be {query.ndim}-D but found "
                             f"{key.ndim}-D and {value.ndim}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.ndim != query.ndim - 1:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or "
                             f"{query.ndim - 1}-D but found {key_padding_mask.ndim}-D tensor instead")
    if attn_mask is not None:
        if attn_mask.ndim not in (2, 3):
            raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                                 f"{attn_mask.ndim}-D tensor instead")
        if not batched and attn_mask.ndim == 3:
            expected = (num_heads, query.shape[0], key.shape[0])
            if tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
    return batched


def _canonical_mask(mask, name, other, other_name, target_dtype):
    """A bool mask (True = masked out) becomes a float mask of 0 and -inf."""
    if mask is None:
        return None
    if mask.dtype.name != "bool" and not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {name} are supported")
    if other is not None and other.dtype is not mask.dtype:
        import warnings

        warnings.warn(f"Support for mismatched {name} and {other_name} is deprecated. Use same type for both "
                      "instead.", stacklevel=3)
    if mask.dtype.name == "bool":
        from ember.native.factory import zeros

        mask = zeros(tuple(mask.shape), dtype=target_dtype, device=mask.device).masked_fill(mask, float("-inf"))
    return mask


def _in_projection_packed(query, key, value, weight, bias):
    """q, k, v projected by the packed ``(3E, E)`` weight; one product when they are
    the same tensor (self-attention), two when only key and value are."""
    from ember.native.linear import linear

    embed_dim = query.shape[-1]
    if key is value and query is key:
        projected = linear(query, weight, bias).unflatten(-1, (3, embed_dim))
        return projected.unbind(-2)
    if key is value:
        w_q, w_kv = weight.split([embed_dim, 2 * embed_dim])
        b_q, b_kv = (None, None) if bias is None else bias.split([embed_dim,
                                                                  2 * embed_dim])
        k, v = linear(key, w_kv, b_kv).unflatten(-1, (2, embed_dim)).unbind(-2)
        return linear(query, w_q, b_q), k, v
    w_q, w_k, w_v = weight.chunk(3)
    b_q, b_k, b_v = (None, None, None) if bias is None else bias.chunk(3)
    return linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)


def _in_projection_separate(query, key, value, w_q, w_k, w_v, bias):
    from ember.native.linear import linear

    b_q, b_k, b_v = (None, None, None) if bias is None else bias.chunk(3)
    return linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)


def _append_column(mask):
    """Pad the last dim of a float mask with one 0 (a key that is never masked)."""
    from ember.native.shape.shape import cat

    return cat([mask, mask.new_zeros(tuple(mask.shape[:-1]) + (1,))], dim=-1)


def _check_attn_mask(attn_mask, tgt_len, src_len, batch_heads):
    if attn_mask.ndim == 2:
        if tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                               f"{(tgt_len, src_len)}.")
        return attn_mask.unsqueeze(0)
    if tuple(attn_mask.shape) != (batch_heads, tgt_len, src_len):
        raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                           f"{(batch_heads, tgt_len, src_len)}.")
    return attn_mask


def _heads_first(projected, static, name, batch_heads, head_dim):
    """(S, N, E) -> (N * H, S, head_dim), or the given static tensor after its checks."""
    if static is None:
        return projected.reshape(projected.shape[0], batch_heads, head_dim).transpose(0, 1)
    if static.shape[0] != batch_heads:
        raise AssertionError(f"expecting {name}.size(0) of {batch_heads}, but got {static.shape[0]}")
    if static.shape[2] != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {static.shape[2]}")
    return static


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """The forward of ``nn.MultiheadAttention`` on sequence-first inputs.

    Args:
        query: ``(L, N, E)`` or unbatched ``(L, E)``; key, value: ``(S, N, Ek/Ev)``.
        key_padding_mask: ``(N, S)``; True (or -inf) marks keys to ignore.
        attn_mask: ``(L, S)`` or ``(N * num_heads, L, S)``; True (or -inf) marks
            pairs that may not attend (the opposite of scaled_dot_product_attention's
            bool convention, as in PyTorch).
        need_weights: also return the attention weights (computed with a plain
            softmax: a fully masked row gives NaN, as in PyTorch).
        average_attn_weights: average the returned weights over the heads.
        is_causal: a hint that ``attn_mask`` is the causal mask (it must be given).
        static_k, static_v: ``(N * num_heads, S, head_dim)`` keys/values used as they
            are instead of the projected ``key``/``value``.

    Returns:
        ``(output, weights)``: ``(L, N, E)`` and ``(N, L, S)`` (or ``(N, H, L, S)``
        unaveraged; None when ``need_weights`` is False).
    """
    from ember.native.linear import linear

    # -- shapes and masks --
    batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, batch, embed_dim = query.shape
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", attn_mask,
                                       "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use "
                           "the Transformer module method "
                           "`generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # scaled_dot_product_attention builds the causal mask itself
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype)
        if key_padding_mask is not None:
            is_causal = False  # the merged mask is no longer causal
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, "
                             f"but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads "
                             f"{num_heads}")
    # -- in-projection --
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not "
                                 f"match value's {value.shape[:2]}")
        q, k, v = _in_projection_separate(query, key, value, q_proj_weight, k_proj_weight,
                                          v_proj_weight, in_proj_bias)
    else:
        if key.shape != value.shape:
            raise AssertionError(f"key shape {key.shape} does not match value shape "
                                 f"{value.shape}")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    batch_heads = batch * num_heads
    if attn_mask is not None:
        if attn_mask.ndim not in (2, 3):
            raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")
        attn_mask = _check_attn_mask(attn_mask, tgt_len, key.shape[0], batch_heads)

    # -- extra keys: bias_k, bias_v --
    if (bias_k is None) != (bias_v is None):
        raise AssertionError("bias_k is set but bias_v is None" if bias_v is None else
                             "bias_v is set but bias_k is None")
    if bias_k is not None:  # one learned key/value appended to every sequence
        from ember.native.shape.shape import cat

        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")

        k = cat([k, bias_k.expand(1, batch, embed_dim)])
        v = cat([v, bias_v.expand(1, batch, embed_dim)])
        attn_mask = None if attn_mask is None else _append_column(attn_mask)
        key_padding_mask = (None if key_padding_mask is None
                            else _append_column(key_padding_mask))

    # -- heads become batch entries --
    # (L, N, E) -> (N * H, L, head_dim): heads become batch entries.
    q = q.reshape(tgt_len, batch_heads, head_dim).transpose(0, 1)
    k = _heads_first(k, static_k, "static_k", batch_heads, head_dim)
    v = _heads_first(v, static_v, "static_v", batch_heads, head_dim)
    if add_zero_attn:  # one all-zero key/value appended to every sequence
        from ember.native.shape.shape import cat

        k = cat([k, k.new_zeros((batch_heads, 1, head_dim))], dim=1)
        v = cat([v, v.new_zeros((batch_heads, 1, head_dim))], dim=1)
        attn_mask = None if attn_mask is None else _append_column(attn_mask)
        key_padding_mask = (None if key_padding_mask is None
                            else _append_column(key_padding_mask))
    src_len = k.shape[1]

    # -- key padding --
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != batch:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {batch}, but "
                                 f"got {key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but "
                                 f"got {key_padding_mask.shape[1]}")
        padding = key_padding_mask.reshape(batch, 1, 1, src_len).expand(batch, num_heads, 1,
                                                                         src_len)
        padding = padding.reshape(batch_heads, 1, src_len)
        attn_mask = padding if attn_mask is None else attn_mask + padding
    if not training:
        dropout_p = 0.0

    # -- attention, with its weights --
    if need_weights:
        scores = (q * math.sqrt(1.0 / head_dim)).matmul(k.transpose(-2, -1))
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = scores.softmax(dim=-1)
        if dropout_p > 0.0:
            from ember.native.dropout import dropout

            weights = dropout(weights, dropout_p)
        output = weights.matmul(v).transpose(0, 1).reshape(tgt_len * batch, embed_dim)
        output = linear(output, out_proj_weight, out_proj_bias).reshape(tgt_len, batch,
                                                                        -1)
        weights = weights.reshape(batch, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not batched:
            output, weights = output.squeeze(1), weights.squeeze(0)
        return output, weights

    # -- attention, fused --
    if attn_mask is not None:
        attn_mask = attn_mask.unsqueeze(0) if attn_mask.shape[0] == 1 else \
            attn_mask.reshape(batch, num_heads, -1, src_len)
    q = q.reshape(batch, num_heads, tgt_len, head_dim)
    k = k.reshape(batch, num_heads, src_len, head_dim)
    v = v.reshape(batch, num_heads, src_len, head_dim)
    output = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    output = output.permute(2, 0, 1, 3).reshape(batch * tgt_len, embed_dim)
    output = linear(output, out_proj_weight, out_proj_bias).reshape(tgt_len, batch, -1)
    if not batched:
        output = output.squeeze(1)
    return output, None
