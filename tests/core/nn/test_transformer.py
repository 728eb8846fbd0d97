"""Transformer modules against torch.nn: torch's weights loaded into ember (the state
dict converted with ``ember.tensor(t.detach().numpy())``), then outputs, input gradients
and parameter gradients compared -- post- and pre-LN, batch-first or not, ReLU, GELU and
module activations, every mask kind (float, bool, 3-d, key padding, causal by detection
and by hint), unbatched inputs, bias=False, float64; plus structure (repr, parameter
names, state-dict keys), eval mode, the causal-mask helper and torch's errors.

Dropout is 0 so training-mode runs are deterministic; torch's modules stay in training
mode (or run with ``enable_nested_tensor=False``), which keeps them off their fused
inference path (NOTE [ No fast path, no nested tensors ] in transformer.py).
"""

import warnings

import numpy as np
import pytest
import torch
from module_parity import check_module, copy_torch_state, same_error, same_structure

import ember
from ember.testing import assert_close, make_tensor

D, HEADS, FF = 8, 2, 16
S, T, N = 5, 4, 3
TOL = {"atol": 2e-5, "rtol": 1e-4}

# Both libraries warn when a bool padding mask meets a float attention mask (checked in
# test_mismatched_mask_dtypes_warn); the parity tests mix them on purpose.
pytestmark = pytest.mark.filterwarnings("ignore:Support for mismatched:UserWarning")


def _pair(name, *args, seed=0, **kwargs):
    """The same module in both libraries, torch's random weights (seeded)."""
    torch.manual_seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's enable_nested_tensor notice
        t = getattr(torch.nn, name)(*args, **kwargs)
    e = getattr(ember.nn, name)(*args, **kwargs)
    return e, t


def _seq(length, batch_first, batch=N, seed=0, dtype="float32"):
    shape = (batch, length, D) if batch_first else (length, batch, D)
    return make_tensor(shape, dtype, low=-1, high=1, seed=seed)


def _padding(batch, length, seed=0):
    """A bool key-padding mask (True = padding) that keeps the first key of every row."""
    mask = np.random.default_rng(seed).random((batch, length)) > 0.6
    mask[:, 0] = False
    return mask


def _causal(length):
    return np.triu(np.full((length, length), -np.inf, dtype=np.float32), k=1)


def _layer_kwargs(norm_first, batch_first, activation="relu", **extra):
    return dict(d_model=D, nhead=HEADS, dim_feedforward=FF, dropout=0.0, activation=activation,
                batch_first=batch_first, norm_first=norm_first, **extra)


# --- the whole model -----------------------------------------------------------------


@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_parity(norm_first, batch_first, activation):
    kwargs = _layer_kwargs(norm_first, batch_first, activation, num_encoder_layers=2, num_decoder_layers=2)
    e, t = _pair("Transformer", **kwargs)
    same_structure(e, t)
    masks = {"tgt_mask": _causal(T), "src_key_padding_mask": _padding(N, S),
             "memory_key_padding_mask": _padding(N, S), "tgt_key_padding_mask": _padding(N, T, seed=1)}
    check_module(e, t, _seq(S, batch_first), _seq(T, batch_first, seed=1), kwargs=masks, **TOL)


def _mask_cases():
    rng = np.random.default_rng(3)
    float_src = rng.uniform(-1, 1, (S, S)).astype(np.float32)
    float_src[1, 2] = -np.inf
    bool_memory = rng.random((T, S)) > 0.7
    bool_memory[:, 0] = False
    float_padding = np.where(_padding(N, S, seed=2), -np.inf, 0.0).astype(np.float32)
    bool_src_3d = rng.random((N * HEADS, S, S)) > 0.7
    bool_src_3d[..., 0] = False
    bool_causal = np.triu(np.ones((T, T), dtype=bool), k=1)
    return {
        "none": {},
        "float_src_mask": {"src_mask": float_src},
        "bool_src_mask_3d": {"src_mask": bool_src_3d},
        "bool_memory_mask": {"memory_mask": bool_memory},
        "float_key_padding": {"src_key_padding_mask": float_padding, "memory_key_padding_mask": float_padding},
        "causal_detected": {"tgt_mask": _causal(T)},
        "causal_bool_detected": {"tgt_mask": bool_causal},
        "causal_hint": {"tgt_mask": _causal(T), "tgt_is_causal": True},
        "causal_src_hint": {"src_mask": _causal(S), "src_is_causal": True},
        "causal_and_padding": {"tgt_mask": _causal(T), "tgt_key_padding_mask": _padding(N, T, seed=4)},
        "memory_causal_hint": {"memory_mask": _causal(S)[:T], "memory_is_causal": False},
        "all": {"src_mask": float_src, "tgt_mask": _causal(T), "memory_mask": bool_memory,
                "src_key_padding_mask": _padding(N, S), "tgt_key_padding_mask": _padding(N, T, seed=1),
                "memory_key_padding_mask": _padding(N, S, seed=2)},
    }


@pytest.mark.parametrize("case", list(_mask_cases()))
@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_masks(case, batch_first):
    masks = _mask_cases()[case]
    kwargs = _layer_kwargs(False, batch_first, num_encoder_layers=1, num_decoder_layers=2)
    e, t = _pair("Transformer", **kwargs, seed=1)
    check_module(e, t, _seq(S, batch_first), _seq(T, batch_first, seed=1), kwargs=masks, **TOL)


def test_transformer_float64_and_unbatched():
    e, t = _pair("Transformer", **_layer_kwargs(True, False, "gelu", num_encoder_layers=1, num_decoder_layers=1))
    check_module(e, t, make_tensor((S, D), "float64", seed=0), make_tensor((T, D), "float64", seed=1),
                 kwargs={"tgt_mask": _causal(T).astype(np.float64)}, dtype="float64")


def test_transformer_without_bias():
    e, t = _pair("Transformer", **_layer_kwargs(False, True, bias=False, num_encoder_layers=1,
                                                  num_decoder_layers=1))
    same_structure(e, t)
    assert not any("bias" in name for name in e.state_dict())
    check_module(e, t, _seq(S, True), _seq(T, True, seed=1), **TOL)


def test_transformer_defaults_match_torch():
    e, t = _pair("Transformer")
    same_structure(e, t)
    assert len(e.state_dict()) == len(t.state_dict())
    layer = e.encoder.layers[0]
    assert (layer.self_attn.num_heads, layer.linear1.out_features, layer.dropout.p) == (8, 2048, 0.1)
    assert layer.activation is ember.nn.functional.relu and not layer.norm_first
    assert (e.d_model, e.nhead, e.batch_first) == (512, 8, False)


def test_transformer_init_is_xavier_for_every_matrix():
    """torch re-initialises every 2-d parameter with xavier_uniform_: bound sqrt(6 / (fan_in + fan_out))."""
    e = ember.nn.Transformer(d_model=32, nhead=4, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=64)
    for name, p in e.named_parameters():
        values = p.detach().numpy()
        if p.dim() > 1:
            bound = np.sqrt(6 / sum(p.shape))
            assert np.abs(values).max() <= bound and np.abs(values).max() > 0.8 * bound, name
    # layers are deep copies: each has its own weights object
    assert e.encoder.layers[0].linear1.weight is not e.decoder.layers[0].linear1.weight


def test_transformer_custom_encoder_and_decoder():
    kwargs = _layer_kwargs(False, False)
    del kwargs["d_model"], kwargs["nhead"]
    results = {}
    for lib in (torch, ember):
        torch.manual_seed(0)
        encoder = lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(D, HEADS, **kwargs), 1,
                                            enable_nested_tensor=False)
        decoder = lib.nn.TransformerDecoder(lib.nn.TransformerDecoderLayer(D, HEADS, **kwargs), 1)
        results[lib] = lib.nn.Transformer(d_model=D, nhead=HEADS, custom_encoder=encoder, custom_decoder=decoder)
    e, t = results[ember], results[torch]
    same_structure(e, t)
    assert e.encoder.norm is None and "encoder.norm.weight" not in e.state_dict()
    check_module(e, t, _seq(S, False), _seq(T, False, seed=1), **TOL)


# --- the layers and stacks -------------------------------------------------------------


@pytest.mark.parametrize("activation", ["relu", "gelu", "module"])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer(norm_first, batch_first, activation):
    kwargs = _layer_kwargs(norm_first, batch_first)
    torch.manual_seed(0)
    if activation == "module":
        t = torch.nn.TransformerEncoderLayer(**{**kwargs, "activation": torch.nn.GELU()})
        e = ember.nn.TransformerEncoderLayer(**{**kwargs, "activation": ember.nn.GELU()})
        assert "(activation): GELU(approximate='none')" in repr(e)
    else:
        t = torch.nn.TransformerEncoderLayer(**{**kwargs, "activation": activation})
        e = ember.nn.TransformerEncoderLayer(**{**kwargs, "activation": activation})
    same_structure(e, t)
    assert e.activation_relu_or_gelu == t.activation_relu_or_gelu
    masks = {"src_mask": _causal(S), "src_key_padding_mask": _padding(N, S), "is_causal": True}
    check_module(e, t, _seq(S, batch_first), kwargs=masks, **TOL)
    check_module(e, t, _seq(S, batch_first, seed=2), **TOL)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer(norm_first, batch_first):
    e, t = _pair("TransformerDecoderLayer", **_layer_kwargs(norm_first, batch_first, "gelu"))
    same_structure(e, t)
    masks = {"tgt_mask": _causal(T), "tgt_is_causal": True, "memory_key_padding_mask": _padding(N, S),
             "tgt_key_padding_mask": _padding(N, T, seed=1)}
    check_module(e, t, _seq(T, batch_first), _seq(S, batch_first, seed=1), kwargs=masks, **TOL)


def test_custom_callable_activation():
    """A plain function is called as the activation (not registered as a submodule)."""
    kwargs = _layer_kwargs(False, True)
    torch.manual_seed(0)
    t = torch.nn.TransformerEncoderLayer(**{**kwargs, "activation": lambda x: torch.tanh(x) * 2})
    e = ember.nn.TransformerEncoderLayer(**{**kwargs, "activation": lambda x: ember.tanh(x) * 2})
    assert e.activation_relu_or_gelu == t.activation_relu_or_gelu == 0
    check_module(e, t, _seq(S, True), **TOL)


@pytest.mark.parametrize("with_norm", [False, True])
def test_encoder_stack(with_norm):
    results = {}
    for lib in (torch, ember):
        torch.manual_seed(0)
        layer = lib.nn.TransformerEncoderLayer(**_layer_kwargs(False, True))
        norm = lib.nn.LayerNorm(D) if with_norm else None
        results[lib] = lib.nn.TransformerEncoder(layer, 3, norm=norm, enable_nested_tensor=False)
    e, t = results[ember], results[torch]
    same_structure(e, t)
    assert (len(e.state_dict()) - len(t.state_dict()), e.num_layers) == (0, 3)
    check_module(e, t, _seq(S, True), kwargs={"mask": _causal(S), "src_key_padding_mask": _padding(N, S)}, **TOL)


@pytest.mark.parametrize("with_norm", [False, True])
def test_decoder_stack(with_norm):
    results = {}
    for lib in (torch, ember):
        torch.manual_seed(0)
        layer = lib.nn.TransformerDecoderLayer(**_layer_kwargs(True, False))
        norm = lib.nn.LayerNorm(D) if with_norm else None
        results[lib] = lib.nn.TransformerDecoder(layer, 2, norm=norm)
    e, t = results[ember], results[torch]
    same_structure(e, t)
    check_module(e, t, _seq(T, False), _seq(S, False, seed=1), kwargs={"tgt_mask": _causal(T)}, **TOL)


def test_layer_reprs_equal_torch():
    for name in ("TransformerEncoderLayer", "TransformerDecoderLayer"):
        for kwargs in ({"d_model": D, "nhead": HEADS}, _layer_kwargs(True, True, "gelu", bias=False,
                                                                     layer_norm_eps=1e-6)):
            e, t = _pair(name, **kwargs)
            assert repr(e) == repr(t)


# --- eval mode --------------------------------------------------------------------------


def _no_grad_outputs(e, t, *inputs, **masks):
    with torch.no_grad(), ember.no_grad():
        t_out = t(*[torch.from_numpy(x) for x in inputs], **{k: torch.from_numpy(v) for k, v in masks.items()})
        e_out = e(*[ember.tensor(x) for x in inputs], **{k: ember.tensor(v) for k, v in masks.items()})
    return e_out, t_out


def test_eval_mode_with_torch_fast_path():
    """torch's eval path (fused layer kernel, nested tensors) gives the same values at the
    real positions; torch zeroes the padded ones (ember does not: see the NOTE)."""
    kwargs = {**_layer_kwargs(False, True), "dropout": 0.5}
    results = {}
    for lib in (torch, ember):
        torch.manual_seed(0)
        layer = lib.nn.TransformerEncoderLayer(**kwargs)
        results[lib] = lib.nn.TransformerEncoder(layer, 2).eval()
    e, t = results[ember], results[torch]
    copy_torch_state(e, t)
    padding = np.zeros((N, S), dtype=bool)
    padding[0, 3:] = padding[2, 4:] = True  # left-aligned, as the nested path needs
    e_out, t_out = _no_grad_outputs(e, t, _seq(S, True), src_key_padding_mask=padding)
    real = ~padding
    np.testing.assert_allclose(e_out.numpy()[real], t_out.numpy()[real], **TOL)
    assert (t_out.numpy()[padding] == 0).all()
    assert e.use_nested_tensor is False and e.enable_nested_tensor is True


def test_eval_mode_turns_dropout_off():
    e, t = _pair("Transformer", **{**_layer_kwargs(False, False, num_encoder_layers=1, num_decoder_layers=1),
                                   "dropout": 0.3})
    copy_torch_state(e, t)
    e.eval()
    t.eval()
    e_out, t_out = _no_grad_outputs(e, t, _seq(S, False), _seq(T, False, seed=1), tgt_mask=_causal(T))
    assert_close(e_out, t_out, **TOL)


def test_training_mode_applies_dropout():
    e = ember.nn.Transformer(**{**_layer_kwargs(False, True, num_encoder_layers=1, num_decoder_layers=1),
                                "dropout": 0.5})
    src, tgt = ember.tensor(_seq(S, True)), ember.tensor(_seq(T, True, seed=1))
    ember.manual_seed(0)
    first = e(src, tgt).detach().numpy()
    second = e(src, tgt).detach().numpy()
    assert not np.allclose(first, second)
    e.eval()
    np.testing.assert_array_equal(e(src, tgt).detach().numpy(), e(src, tgt).detach().numpy())


# --- the causal mask and errors ---------------------------------------------------------------


@pytest.mark.parametrize("size", [0, 1, 4])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_generate_square_subsequent_mask(size, dtype):
    e = ember.nn.Transformer.generate_square_subsequent_mask(size, dtype=getattr(ember, dtype))
    t = torch.nn.Transformer.generate_square_subsequent_mask(size, dtype=getattr(torch, dtype))
    assert e.dtype == getattr(ember, dtype)
    assert_close(e, t)
    assert_close(ember.nn.Transformer.generate_square_subsequent_mask(size),
                 torch.nn.Transformer.generate_square_subsequent_mask(size))


@pytest.mark.parametrize("case", ["batch", "batch_first_batch", "features", "activation", "mask_dtype"])
def test_errors_match_torch(case):
    def call(lib):
        batch_first = case == "batch_first_batch"
        model = lib.nn.Transformer(d_model=D, nhead=HEADS, num_encoder_layers=1, num_decoder_layers=1,
                                   dim_feedforward=FF, batch_first=batch_first)
        src = lib.ones(N, S, D) if batch_first else lib.ones(S, N, D)
        tgt = lib.ones(N + 1, T, D) if batch_first else lib.ones(T, N + 1, D)
        if case == "features":
            return model(lib.ones(S, N, D + 1), lib.ones(T, N, D))
        if case == "activation":
            return lib.nn.TransformerEncoderLayer(D, HEADS, activation="tanh")
        if case == "mask_dtype":
            return model(src, lib.ones(T, N, D), src_mask=lib.ones(S, S, dtype=lib.int64))
        return model(src, tgt)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_error(call)


def test_mismatched_mask_dtypes_warn():
    for lib in (ember, torch):
        layer = lib.nn.TransformerEncoderLayer(D, HEADS, dim_feedforward=FF)
        with pytest.warns(UserWarning, match="Support for mismatched src_key_padding_mask and src_mask"):
            layer(lib.ones(S, N, D), src_mask=lib.zeros(S, S), src_key_padding_mask=lib.zeros(N, S, dtype=lib.bool))


def test_nhead_must_divide_d_model():
    for lib in (ember, torch):
        with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
            lib.nn.TransformerEncoderLayer(d_model=10, nhead=3)


def test_state_dict_round_trip_through_torch_file(tmp_path):
    """A model saved by torch loads into ember with ember.load and gives torch's outputs."""
    kwargs = _layer_kwargs(False, True, num_encoder_layers=1, num_decoder_layers=1)
    torch.manual_seed(0)
    t = torch.nn.Transformer(**kwargs)
    torch.save(t.state_dict(), tmp_path / "transformer.pt")
    e = ember.nn.Transformer(**kwargs)
    e.load_state_dict(ember.load(tmp_path / "transformer.pt"))
    e_out, t_out = _no_grad_outputs(e, t, _seq(S, True), _seq(T, True, seed=1))
    assert_close(e_out, t_out, **TOL)
