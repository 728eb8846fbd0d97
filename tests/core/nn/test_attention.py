"""Attention against torch: F.scaled_dot_product_attention (bool and float masks,
broadcasting, causal, scale, grouped-query, fully masked rows, dropout structure,
errors, gradcheck) and nn.MultiheadAttention with copied weights (every mask kind and
their combination, need_weights, average_attn_weights, batch_first, kdim/vdim,
add_bias_kv, add_zero_attn, unbatched inputs, eval mode): outputs, input gradients and
parameter gradients in float32 and float64."""

import warnings

import numpy as np
import pytest
import torch
from module_parity import check_module, same_error, same_structure

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.testing import assert_parity, make_tensor

FLOATS = ["float32", "float64"]


def sdpa(lib):
    return lib.nn.functional.scaled_dot_product_attention


def _bool_mask(shape, seed=0, masked_row=None):
    mask = np.random.default_rng(seed).random(shape) > 0.4
    mask[..., 0] = True  # keep a key in every row ...
    if masked_row is not None:
        mask[..., masked_row, :] = False  # ... except in this one
    return mask


# --- scaled_dot_product_attention -----------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("q_shape, k_shape, v_shape", [((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6)),
                                                       ((4, 8), (5, 8), (5, 6)),
                                                       ((2, 4, 8), (1, 5, 8), (1, 5, 8)),
                                                       ((2, 3, 4, 8), (2, 1, 5, 8), (2, 1, 5, 6))])
def test_sdpa(dtype, q_shape, k_shape, v_shape):
    q, k, v = make_tensor(q_shape, dtype), make_tensor(k_shape, dtype, seed=1), make_tensor(v_shape, dtype, seed=2)
    assert_parity(lambda lib, q, k, v: sdpa(lib)(q, k, v), q, k, v, atol=1e-5)
    assert_parity(lambda lib, q, k, v: sdpa(lib)(q, k, v, scale=0.3), q, k, v, atol=1e-5)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mask_shape", [(4, 5), (2, 1, 4, 5), (3, 4, 5), (1, 5), (2, 3, 4, 5)])
def test_sdpa_bool_mask(dtype, mask_shape):
    q, k, v = make_tensor((2, 3, 4, 8), dtype), make_tensor((2, 3, 5, 8), dtype, seed=1), \
        make_tensor((2, 3, 5, 6), dtype, seed=2)
    mask = _bool_mask(mask_shape)
    assert_parity(lambda lib, q, k, v, m: sdpa(lib)(q, k, v, attn_mask=m), q, k, v, mask, atol=1e-5)


@pytest.mark.parametrize("dtype", FLOATS)
def test_sdpa_float_mask_gets_a_gradient(dtype):
    q, k = make_tensor((2, 4, 8), dtype), make_tensor((2, 5, 8), dtype, seed=1)
    v, mask = make_tensor((2, 5, 6), dtype, seed=2), make_tensor((4, 5), dtype, seed=3)
    mask[1, 2] = -np.inf
    assert_parity(lambda lib, q, k, v, m: sdpa(lib)(q, k, v, attn_mask=m), q, k, v, mask, atol=1e-5)


@pytest.mark.parametrize("mask_kind", ["bool", "float"])
def test_sdpa_fully_masked_row_gives_zeros_and_zero_grads(mask_kind):
    q, k, v = make_tensor((2, 4, 8)), make_tensor((2, 5, 8), seed=1), make_tensor((2, 5, 6), seed=2)
    mask = _bool_mask((4, 5), masked_row=1)
    if mask_kind == "float":
        mask = np.where(mask, 0.0, -np.inf).astype(np.float32)
    out, _ = assert_parity(lambda lib, q, k, v, m: sdpa(lib)(q, k, v, attn_mask=m), q, k, v, mask, atol=1e-5)
    assert not np.isnan(out.detach().numpy()).any()
    np.testing.assert_array_equal(out.detach().numpy()[:, 1], 0)


@pytest.mark.parametrize("L, S", [(4, 4), (3, 5), (5, 3)])
def test_sdpa_causal(L, S):
    q, k, v = make_tensor((2, L, 8)), make_tensor((2, S, 8), seed=1), make_tensor((2, S, 6), seed=2)
    assert_parity(lambda lib, q, k, v: sdpa(lib)(q, k, v, is_causal=True), q, k, v, atol=1e-5)


def test_sdpa_grouped_query():
    q, k, v = make_tensor((2, 6, 4, 8)), make_tensor((2, 2, 5, 8), seed=1), make_tensor((2, 3, 5, 6), seed=2)
    assert_parity(lambda lib, q, k, v: sdpa(lib)(q, k, v, enable_gqa=True), q, k, v, atol=1e-5)
    for lib in (ember, torch):  # torch's message stops after "in " (ember's names the query)
        with pytest.raises(RuntimeError, match="Number of heads in key and value must divide the number of heads"):
            sdpa(lib)(lib.ones(2, 3, 4, 8), lib.ones(2, 2, 5, 8), lib.ones(2, 2, 5, 8), enable_gqa=True)


def test_sdpa_dropout_one_gives_zeros():
    q, k, v = make_tensor((2, 4, 8)), make_tensor((2, 5, 8), seed=1), make_tensor((2, 5, 6), seed=2)
    assert_parity(lambda lib, q, k, v: sdpa(lib)(q, k, v, dropout_p=1.0), q, k, v)


def test_sdpa_dropout_drops_weights_and_scales():
    """With value = identity the output is the weight matrix itself: each entry is 0 or
    the undropped weight / (1 - p)."""
    ember.manual_seed(0)
    q, k = ember.tensor(make_tensor((4, 50, 8))), ember.tensor(make_tensor((4, 60, 8), seed=1))
    v = ember.eye(60).expand(4, 60, 60)
    plain = sdpa(ember)(q, k, v).numpy()
    dropped = sdpa(ember)(q, k, v, dropout_p=0.25).numpy()
    zero = dropped == 0
    assert abs(zero.mean() - 0.25) < 0.02
    np.testing.assert_allclose(dropped[~zero], plain[~zero] / 0.75, rtol=1e-5)


@pytest.mark.parametrize("case", ["dims", "causal_and_mask", "dtypes", "mask_int", "mask_double", "mask_shape",
                                  "k_width", "v_length", "dropout", "int_inputs"])
def test_sdpa_errors(case):
    def call(lib):
        q, k, v = lib.ones(2, 4, 8), lib.ones(2, 5, 8), lib.ones(2, 5, 6)
        kwargs = {}
        if case == "dims":
            q = lib.ones(8)
        elif case == "causal_and_mask":
            kwargs = {"attn_mask": lib.ones(4, 5, dtype=lib.bool), "is_causal": True}
        elif case == "dtypes":
            k = k.double()
        elif case == "mask_int":
            kwargs = {"attn_mask": lib.ones(4, 5, dtype=lib.int64)}
        elif case == "mask_double":
            kwargs = {"attn_mask": lib.ones(4, 5, dtype=lib.float64)}
        elif case == "mask_shape":
            kwargs = {"attn_mask": lib.ones(4, 6)}
        elif case == "k_width":
            k = lib.ones(2, 5, 7)
        elif case == "v_length":
            v = lib.ones(2, 4, 6)
        elif case == "dropout":
            kwargs = {"dropout_p": 1.5}
        elif case == "int_inputs":
            q, k, v = q.long(), k.long(), v.long()
        return sdpa(lib)(q, k, v, **kwargs)

    outcome = {}
    for lib in (ember, torch):
        with pytest.raises(RuntimeError) as info:
            call(lib)
        outcome[lib] = str(info.value)
    if case in ("dims", "causal_and_mask", "dtypes", "mask_int", "mask_double", "dropout"):
        assert outcome[ember] == outcome[torch]


def test_sdpa_gradcheck():
    q = ember.tensor(make_tensor((2, 3, 4), "float64")).requires_grad_()
    k = ember.tensor(make_tensor((2, 5, 4), "float64", seed=1)).requires_grad_()
    v = ember.tensor(make_tensor((2, 5, 3), "float64", seed=2)).requires_grad_()
    float_mask = ember.tensor(make_tensor((3, 5), "float64", seed=3)).requires_grad_()
    bool_mask = ember.tensor(_bool_mask((3, 5), masked_row=2))
    f = sdpa(ember)
    assert gradcheck(f, (q, k, v))
    assert gradcheck(lambda q, k, v, m: f(q, k, v, attn_mask=m), (q, k, v, float_mask))
    assert gradcheck(lambda q, k, v: f(q, k, v, attn_mask=bool_mask), (q, k, v))
    assert gradcheck(lambda q, k, v: f(q, k, v, is_causal=True, scale=0.7), (q, k, v))
    assert gradgradcheck(lambda q, k, v: f(q, k, v, attn_mask=bool_mask), (q, k, v))


# --- MultiheadAttention ---------------------------------------------------------------

E, H, L, S, N = 8, 2, 4, 5, 3


def mha_pair(**kwargs):
    torch.manual_seed(0)
    t = torch.nn.MultiheadAttention(E, H, **kwargs)
    e = ember.nn.MultiheadAttention(E, H, **kwargs)
    return e, t


def qkv(batch_first=False, kdim=E, vdim=E, dtype="float32", batched=True):
    def shape(length, width):
        if not batched:
            return (length, width)
        return (N, length, width) if batch_first else (length, N, width)
    return (make_tensor(shape(L, E), dtype, low=-1, high=1), make_tensor(shape(S, kdim), dtype, seed=1, low=-1, high=1),
            make_tensor(shape(S, vdim), dtype, seed=2, low=-1, high=1))


def masks(kind, dtype="float32", batched=True, src_len=S):
    """key_padding_mask (N, S) and attn_mask of the given kind, as kwargs."""
    rng = np.random.default_rng(5)
    kpm_bool = rng.random((N, src_len) if batched else (src_len,)) > 0.7
    kpm_bool[..., 0] = False
    attn_bool = rng.random((L, src_len)) > 0.7
    attn_bool[:, 1] = False
    attn3_bool = rng.random((N * H if batched else H, L, src_len)) > 0.7
    attn3_bool[..., 1] = False

    def as_float(m):
        return np.where(m, -np.inf, 0.0).astype(dtype) + make_tensor(m.shape, dtype, seed=9, low=-0.5, high=0.5)

    return {
        "none": {},
        "kpm_bool": {"key_padding_mask": kpm_bool},
        "kpm_float": {"key_padding_mask": as_float(kpm_bool)},
        "attn_bool": {"attn_mask": attn_bool},
        "attn_float": {"attn_mask": as_float(attn_bool)},
        "attn3_bool": {"attn_mask": attn3_bool},
        "attn3_float": {"attn_mask": as_float(attn3_bool)},
        "both_bool": {"key_padding_mask": kpm_bool, "attn_mask": attn_bool},
        "both_float": {"key_padding_mask": as_float(kpm_bool), "attn_mask": as_float(attn3_bool)},
    }[kind]


MASK_KINDS = ["none", "kpm_bool", "kpm_float", "attn_bool", "attn_float", "attn3_bool", "attn3_float", "both_bool",
              "both_float"]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("kind", MASK_KINDS)
def test_mha_masks(kind, need_weights, dtype):
    e, t = mha_pair()
    check_module(e, t, *qkv(dtype=dtype), kwargs={**masks(kind, dtype), "need_weights": need_weights}, atol=1e-5,
                 dtype=dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("need_weights, average", [(True, True), (True, False), (False, True)])
def test_mha_self_attention(dtype, batch_first, need_weights, average):
    e, t = mha_pair(batch_first=batch_first)
    q, _, _ = qkv(batch_first, dtype=dtype)
    out, expected = check_module(e, t, q, q, q, same_inputs=(1, 2), dtype=dtype, atol=1e-5,
                                 kwargs={"need_weights": need_weights, "average_attn_weights": average,
                                         **masks("both_bool", src_len=L)})
    if need_weights:
        assert tuple(out[1].shape) == ((N, L, L) if average else (N, H, L, L))


@pytest.mark.parametrize("batch_first", [False, True])
def test_mha_key_is_value(batch_first):
    e, t = mha_pair(batch_first=batch_first)
    q, k, _ = qkv(batch_first)
    check_module(e, t, q, k, k, same_inputs=(), atol=1e-5, kwargs=masks("kpm_bool"))
    # the same key and value object (encoder-decoder attention)
    e2, t2 = mha_pair(batch_first=batch_first)
    results = {}
    for lib, m in ((ember, e2), (torch, t2)):
        if lib is ember:
            from module_parity import copy_torch_state

            copy_torch_state(e2, t2)
        qq, kk = lib.tensor(q).requires_grad_(), lib.tensor(k).requires_grad_()
        out, _ = m(qq, kk, kk)
        out.sum().backward()
        results[lib] = (out.detach().numpy(), qq.grad.numpy(), kk.grad.numpy())
    for a, b in zip(results[ember], results[torch]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_kdim_vdim(dtype, batch_first, need_weights):
    e, t = mha_pair(kdim=6, vdim=3, batch_first=batch_first)
    same_structure(e, t)
    check_module(e, t, *qkv(batch_first, kdim=6, vdim=3, dtype=dtype), dtype=dtype, atol=1e-5,
                 kwargs={**masks("both_bool"), "need_weights": need_weights})


@pytest.mark.parametrize("options", [{"bias": False}, {"add_bias_kv": True}, {"add_zero_attn": True},
                                     {"add_bias_kv": True, "add_zero_attn": True, "kdim": 6, "vdim": 6}])
@pytest.mark.parametrize("kind", ["none", "both_bool", "both_float"])
@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_options(options, kind, need_weights):
    e, t = mha_pair(**options)
    same_structure(e, t)
    width = options.get("kdim", E)
    check_module(e, t, *qkv(kdim=width, vdim=width), atol=1e-5,
                 kwargs={**masks(kind), "need_weights": need_weights})


@pytest.mark.parametrize("kind", ["none", "kpm_bool", "attn_float", "attn3_bool"])
@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_unbatched(kind, need_weights):
    e, t = mha_pair()
    check_module(e, t, *qkv(batched=False), atol=1e-5,
                 kwargs={**masks(kind, batched=False), "need_weights": need_weights})


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # NumPy on the NaN row
@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_fully_masked_row(need_weights):
    """A batch entry whose every key is padded: NaN with need_weights (plain softmax),
    zeros without (scaled_dot_product_attention), exactly as torch."""
    e, t = mha_pair()
    kpm = np.zeros((N, S), dtype=bool)
    kpm[1] = True
    out, expected = check_module(e, t, *qkv(), atol=1e-5, kwargs={"key_padding_mask": kpm,
                                                                  "need_weights": need_weights})
    has_nan = np.isnan(out[0].detach().numpy()).any()
    assert has_nan == need_weights == np.isnan(expected[0].detach().numpy()).any()


def test_mha_causal_hint():
    e, t = mha_pair()
    causal = np.triu(np.ones((L, L), dtype=bool), 1)  # True: may not attend
    q, _, _ = qkv()
    for need_weights in (True, False):
        check_module(e, t, q, q, q, same_inputs=(1, 2), atol=1e-5,
                     kwargs={"attn_mask": causal, "is_causal": True, "need_weights": need_weights})
    same_error(lambda lib: lib.nn.MultiheadAttention(E, H)(lib.ones(L, N, E), lib.ones(L, N, E),
                                                            lib.ones(L, N, E), is_causal=True))


def test_mha_eval_mode_with_dropout_matches_torch():
    e, t = mha_pair(dropout=0.5)
    e.eval()
    t.eval()
    check_module(e, t, *qkv(), atol=1e-5, kwargs=masks("both_bool"))


def test_mha_training_dropout_structure():
    """Dropout on the attention weights: every weight is 0 or the eval weight / (1 - p)."""
    e, t = mha_pair(dropout=0.5)
    from module_parity import copy_torch_state

    copy_torch_state(e, t)
    q, k, v = (ember.tensor(a) for a in qkv())
    ember.manual_seed(0)
    _, train_weights = e(q, k, v, average_attn_weights=False)
    e.eval()
    _, eval_weights = e(q, k, v, average_attn_weights=False)
    train, evaluated = train_weights.detach().numpy(), eval_weights.detach().numpy()
    zero = train == 0
    assert 0.3 < zero.mean() < 0.7
    np.testing.assert_allclose(train[~zero], evaluated[~zero] * 2, rtol=1e-5)


def test_mha_structure_and_init():
    for options in ({}, {"bias": False}, {"kdim": 3, "vdim": 5}, {"add_bias_kv": True}, {"batch_first": True}):
        same_structure(*mha_pair(**options))
    m = ember.nn.MultiheadAttention(64, 4)
    assert m.head_dim == 16 and m._qkv_same_embed_dim
    np.testing.assert_array_equal(m.in_proj_bias.detach().numpy(), 0)
    np.testing.assert_array_equal(m.out_proj.bias.detach().numpy(), 0)
    bound = np.sqrt(6 / (64 + 3 * 64))  # xavier_uniform_ over the packed (3E, E) weight
    weight = np.abs(m.in_proj_weight.detach().numpy())
    assert weight.max() <= bound and weight.max() > 0.9 * bound
    assert type(m.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
    assert isinstance(m.out_proj, ember.nn.Linear)


def test_mha_constructor_errors():
    same_error(lambda lib: lib.nn.MultiheadAttention(8, 3))
    same_error(lambda lib: lib.nn.MultiheadAttention(0, 2))
    same_error(lambda lib: lib.nn.MultiheadAttention(8, -1))


@pytest.mark.parametrize("case", ["query_4d", "key_2d", "kpm_3d", "attn_4d", "attn_2d_shape", "attn_3d_shape",
                                  "kpm_shape", "embed_dim", "key_value_shapes", "mask_int"])
def test_mha_forward_errors(case):
    def call(lib):
        m = lib.nn.MultiheadAttention(E, H)
        q, k, v = lib.ones(L, N, E), lib.ones(S, N, E), lib.ones(S, N, E)
        kwargs = {}
        if case == "query_4d":
            q = lib.ones(1, L, N, E)
        elif case == "key_2d":
            k = lib.ones(S, E)
        elif case == "kpm_3d":
            kwargs = {"key_padding_mask": lib.zeros(N, S, 1, dtype=lib.bool)}
        elif case == "attn_4d":
            kwargs = {"attn_mask": lib.zeros(1, 1, L, S, dtype=lib.bool)}
        elif case == "attn_2d_shape":
            kwargs = {"attn_mask": lib.zeros(L, S + 1, dtype=lib.bool)}
        elif case == "attn_3d_shape":
            kwargs = {"attn_mask": lib.zeros(N, L, S, dtype=lib.bool)}
        elif case == "kpm_shape":
            kwargs = {"key_padding_mask": lib.zeros(N, S + 1, dtype=lib.bool)}
        elif case == "embed_dim":
            q = lib.ones(L, N, E + 2)
        elif case == "key_value_shapes":
            v = lib.ones(S + 1, N, E)
        elif case == "mask_int":
            kwargs = {"key_padding_mask": lib.zeros(N, S, dtype=lib.int64)}
        return m(q, k, v, **kwargs)

    same_error(call)


def test_mha_mismatched_mask_types_warn_like_torch():
    for lib in (ember, torch):
        m = lib.nn.MultiheadAttention(E, H)
        x = lib.ones(L, N, E)
        with pytest.warns(UserWarning, match="Support for mismatched key_padding_mask and attn_mask is deprecated"):
            m(x, x, x, key_padding_mask=lib.zeros(N, L, dtype=lib.bool), attn_mask=lib.zeros(L, L))


def test_mha_loads_torch_state_dict_strictly():
    e, t = mha_pair(kdim=4, vdim=6, add_bias_kv=True)
    from module_parity import copy_torch_state

    copy_torch_state(e, t)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name, p in t.named_parameters():
            np.testing.assert_array_equal(dict(e.named_parameters())[name].detach().numpy(), p.detach().numpy())


@pytest.mark.parametrize("need_weights", [True, False])
def test_functional_mha_static_kv(need_weights):
    """static_k/static_v replace the projected keys and values (torch's functional form)."""
    torch.manual_seed(0)
    t = torch.nn.MultiheadAttention(E, H)
    arrays = {"q": make_tensor((L, N, E)), "k": make_tensor((S, N, E), seed=1),
              "sk": make_tensor((N * H, S + 1, E // H), seed=2), "sv": make_tensor((N * H, S + 1, E // H), seed=3)}
    results = {}
    for lib in (ember, torch):
        params = {n: lib.tensor(p.detach().numpy()).requires_grad_() for n, p in t.named_parameters()}
        x = {n: lib.tensor(a).requires_grad_() for n, a in arrays.items()}
        out, weights = lib.nn.functional.multi_head_attention_forward(
            x["q"], x["k"], x["k"], E, H, params["in_proj_weight"], params["in_proj_bias"], None, None, False, 0.0,
            params["out_proj.weight"], params["out_proj.bias"], need_weights=need_weights,
            static_k=x["sk"], static_v=x["sv"])
        out.sum().backward()
        results[lib] = [out, weights] + [x[n].grad for n in ("q", "sk", "sv")] + [params["in_proj_weight"].grad]
    for a, e in zip(results[ember], results[torch]):
        if e is None:
            assert a is None
        else:
            np.testing.assert_allclose(a.detach().numpy(), e.detach().numpy(), rtol=1e-5, atol=1e-5)
    same_error(lambda lib: lib.nn.functional.multi_head_attention_forward(
        lib.ones(L, N, E), lib.ones(S, N, E), lib.ones(S, N, E), E, H, lib.ones(3 * E, E), None, None, None, False,
        0.0, lib.ones(E, E), None, static_k=lib.ones(N, S, E // H)))
