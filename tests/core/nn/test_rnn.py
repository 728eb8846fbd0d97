"""nn.RNN / LSTM / GRU and the cells against torch on the same weights: every option,
padded and packed inputs, float32 and float64, gradients of inputs, states and weights."""

import itertools
import warnings

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_close

TORCH_NN = {"RNN": torch.nn.RNN, "LSTM": torch.nn.LSTM, "GRU": torch.nn.GRU}


def _pair(kind, *args, dtype="float32", **kwargs):
    """The same layer in both libraries; torch's random weights loaded into ember."""
    torch_layer = TORCH_NN[kind](*args, **kwargs)
    ember_layer = getattr(ember.nn, kind)(*args, **kwargs)
    if dtype == "float64":
        torch_layer.double()
        ember_layer.double()
    state = {k: ember.tensor(v.detach().numpy()) for k, v in torch_layer.state_dict().items()}
    result = ember_layer.load_state_dict(state)
    assert not result.missing_keys and not result.unexpected_keys
    return ember_layer, torch_layer


def _tensors(array):
    t = torch.tensor(array, requires_grad=True)
    e = ember.tensor(array, requires_grad=True)
    return e, t


def _flatten(out):
    if hasattr(out, "batch_sizes"):  # a PackedSequence: its data
        return [out.data]
    if isinstance(out, (tuple, list)):
        return [x for o in out for x in _flatten(o)]
    return [out]


def _compare_run(ember_layer, torch_layer, e_args, t_args, tol, seed=0, leaves=None):
    """Forward in both, compare outputs; backward the same random cotangents, compare
    the gradients of the parameters and of the leaf inputs (``leaves``: (ember, torch)
    lists, by default the tensor arguments)."""
    e_out, t_out = ember_layer(*e_args), torch_layer(*t_args)
    e_flat, t_flat = _flatten(e_out), _flatten(t_out)
    assert len(e_flat) == len(t_flat)
    for i, (a, b) in enumerate(zip(e_flat, t_flat)):
        assert_close(a, b, rtol=tol, atol=tol, msg=f"output {i}: ")
    rng = np.random.default_rng(seed)
    cotangents = [rng.standard_normal(tuple(b.shape)).astype(str(b.dtype).split(".")[-1]) for b in t_flat]
    torch.autograd.backward(t_flat, [torch.from_numpy(c) for c in cotangents])
    ember.autograd.backward(e_flat, [ember.tensor(c) for c in cotangents])
    e_leaves, t_leaves = leaves or (_flatten(e_args), _flatten(t_args))
    for i, (a, b) in enumerate(zip(e_leaves, t_leaves)):
        if isinstance(b, torch.Tensor) and b.requires_grad:
            assert b.is_leaf
            assert_close(a.grad, b.grad, rtol=tol, atol=tol, msg=f"grad of input {i}: ")
    t_params = dict(torch_layer.named_parameters())
    for name, p in ember_layer.named_parameters():
        assert_close(p.grad, t_params[name].grad, rtol=tol, atol=tol, msg=f"grad of {name}: ")
    return e_out, t_out


OPTIONS = list(itertools.product(["RNN", "LSTM", "GRU"], [1, 2], [False, True], [False, True], [True, False]))


@pytest.mark.parametrize("kind,num_layers,bidirectional,batch_first,bias", OPTIONS)
def test_padded_matches_torch(kind, num_layers, bidirectional, batch_first, bias):
    ember_layer, torch_layer = _pair(kind, 3, 5, num_layers=num_layers, bidirectional=bidirectional,
                                     batch_first=batch_first, bias=bias)
    rng = np.random.default_rng(1)
    shape = (2, 4, 3) if batch_first else (4, 2, 3)
    e_x, t_x = _tensors(rng.standard_normal(shape).astype(np.float32))
    _compare_run(ember_layer, torch_layer, (e_x,), (t_x,), 1e-5)


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_given_initial_state_float64(kind, bidirectional):
    ember_layer, torch_layer = _pair(kind, 3, 4, num_layers=2, bidirectional=bidirectional, dtype="float64")
    rng = np.random.default_rng(2)
    layers = 2 * (2 if bidirectional else 1)
    e_x, t_x = _tensors(rng.standard_normal((5, 3, 3)))
    e_h, t_h = _tensors(rng.standard_normal((layers, 3, 4)))
    if kind == "LSTM":
        e_c, t_c = _tensors(rng.standard_normal((layers, 3, 4)))
        e_args, t_args = (e_x, (e_h, e_c)), (t_x, (t_h, t_c))
    else:
        e_args, t_args = (e_x, e_h), (t_x, t_h)
    _compare_run(ember_layer, torch_layer, e_args, t_args, 1e-10)


@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("num_layers", [1, 2])
def test_lstm_projection(bidirectional, num_layers):
    ember_layer, torch_layer = _pair("LSTM", 3, 6, num_layers=num_layers, proj_size=2, bidirectional=bidirectional)
    assert [n for n, _ in ember_layer.named_parameters()] == [n for n, _ in torch_layer.named_parameters()]
    rng = np.random.default_rng(3)
    layers = num_layers * (2 if bidirectional else 1)
    e_x, t_x = _tensors(rng.standard_normal((4, 2, 3)).astype(np.float32))
    e_h, t_h = _tensors(rng.standard_normal((layers, 2, 2)).astype(np.float32))
    e_c, t_c = _tensors(rng.standard_normal((layers, 2, 6)).astype(np.float32))
    _compare_run(ember_layer, torch_layer, (e_x, (e_h, e_c)), (t_x, (t_h, t_c)), 1e-5)
    _compare_run(ember_layer, torch_layer, (e_x.detach(),), (t_x.detach(),), 1e-5)


def _pack(lib, x, lengths, enforce_sorted, batch_first):
    return lib.nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_packed_matches_torch(kind, bidirectional, enforce_sorted, dtype):
    ember_layer, torch_layer = _pair(kind, 3, 4, num_layers=2, bidirectional=bidirectional, batch_first=True,
                                     dtype=dtype)
    lengths = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    rng = np.random.default_rng(4)
    e_x, t_x = _tensors(rng.standard_normal((4, 5, 3)).astype(dtype))
    layers = 2 * (2 if bidirectional else 1)
    e_h, t_h = _tensors(rng.standard_normal((layers, 4, 4)).astype(dtype))
    e_packed = _pack(ember, e_x, lengths, enforce_sorted, True)
    t_packed = _pack(torch, t_x, lengths, enforce_sorted, True)
    if kind == "LSTM":
        e_c, t_c = _tensors(rng.standard_normal((layers, 4, 4)).astype(dtype))
        e_args, t_args = (e_packed, (e_h, e_c)), (t_packed, (t_h, t_c))
    else:
        e_args, t_args = (e_packed, e_h), (t_packed, t_h)
    tol = 1e-5 if dtype == "float32" else 1e-10
    leaves = ([e_x, *_flatten(e_args[1])], [t_x, *_flatten(t_args[1])])
    (e_out, _), (t_out, _) = _compare_run(ember_layer, torch_layer, e_args, t_args, tol, leaves=leaves)
    assert e_out.batch_sizes.tolist() == t_out.batch_sizes.tolist()
    e_pad, e_len = ember.nn.utils.rnn.pad_packed_sequence(e_out, batch_first=True)
    t_pad, t_len = torch.nn.utils.rnn.pad_packed_sequence(t_out, batch_first=True)
    assert_close(e_pad, t_pad, rtol=tol, atol=tol)
    assert e_len.tolist() == t_len.tolist()


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_unbatched_input(kind, batch_first):
    ember_layer, torch_layer = _pair(kind, 3, 4, num_layers=2, batch_first=batch_first)
    rng = np.random.default_rng(5)
    e_x, t_x = _tensors(rng.standard_normal((6, 3)).astype(np.float32))
    e_h, t_h = _tensors(rng.standard_normal((2, 4)).astype(np.float32))
    if kind == "LSTM":
        e_c, t_c = _tensors(rng.standard_normal((2, 4)).astype(np.float32))
        e_args, t_args = (e_x, (e_h, e_c)), (t_x, (t_h, t_c))
    else:
        e_args, t_args = (e_x, e_h), (t_x, t_h)
    (e_out, _), _ = _compare_run(ember_layer, torch_layer, e_args, t_args, 1e-5)
    assert e_out.shape == (6, 4)


def test_dropout_between_layers_is_training_only():
    ember_layer = ember.nn.LSTM(3, 4, num_layers=3, dropout=0.5)
    x = ember.randn(5, 2, 3)
    ember_layer.eval()
    first, second = ember_layer(x)[0], ember_layer(x)[0]
    assert ember.equal(first, second)
    ember_layer.train()
    outputs = [ember_layer(x)[0] for _ in range(3)]
    assert not all(ember.equal(outputs[0], o) for o in outputs[1:])
    with ember.no_grad():
        ember_layer.dropout = 0.0
        assert ember.allclose(ember_layer(x)[0], first)


def test_dropout_warning_and_parameter_layout_like_torch():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ember.nn.GRU(2, 3, dropout=0.2)
    assert "non-zero dropout expects num_layers greater than 1" in str(caught[0].message)
    for kind in ("RNN", "LSTM", "GRU"):
        e = getattr(ember.nn, kind)(3, 5, num_layers=2, bidirectional=True)
        t = TORCH_NN[kind](3, 5, num_layers=2, bidirectional=True)
        assert [(n, tuple(p.shape)) for n, p in e.named_parameters()] == \
            [(n, tuple(p.shape)) for n, p in t.named_parameters()]
        assert e._flat_weights_names == t._flat_weights_names
        assert repr(e) == repr(t)
    assert repr(ember.nn.RNN(2, 3, 1, "relu", dropout=0.0, batch_first=True)) == \
        repr(torch.nn.RNN(2, 3, 1, "relu", dropout=0.0, batch_first=True))


def test_initialisation_range():
    layer = ember.nn.LSTM(3, 16)
    bound = 1 / 4
    for p in layer.parameters():
        assert float(p.abs().max()) <= bound
        assert float(p.abs().max()) > bound / 2


@pytest.mark.parametrize("make,message", [
    (lambda nn: nn.RNN(3, 4, nonlinearity="sigmoid"), "Unknown nonlinearity 'sigmoid'"),
    (lambda nn: nn.GRU(3, 4, proj_size=2), "proj_size argument is only supported for LSTM"),
    (lambda nn: nn.LSTM(3, 4, proj_size=4), "proj_size has to be smaller than hidden_size"),
    (lambda nn: nn.LSTM(3, 4, dropout=1.5), "dropout should be a number in range [0, 1]"),
    (lambda nn: nn.LSTM(3, 0), "hidden_size must be greater than zero"),
    (lambda nn: nn.LSTM(3, 4, num_layers=0), "num_layers must be greater than zero"),
    (lambda nn: nn.LSTM(3.0, 4), "input_size should be of type int, got: float"),
    (lambda nn: nn.LSTM(3, 4, bias=1), "bias should be of type bool, got: int"),
])
def test_constructor_errors_like_torch(make, message):
    for lib in (torch, ember):
        with pytest.raises((ValueError, TypeError), match=message.replace("[", r"\[").replace("]", r"\]")):
            make(lib.nn)


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_forward_errors_like_torch(kind):
    ember_layer, torch_layer = _pair(kind, 3, 4)
    cases = [((np.zeros((2, 2, 3, 3), np.float32),), (ValueError, "Expected input to be 2D or 3D")),
             ((np.zeros((2, 2, 5), np.float32),), (RuntimeError, "input.size\\(-1\\) must be equal to input_size")),
             ((np.zeros((2, 2, 3), np.float64),), (ValueError, "does not match weight dtype"))]
    for arrays, (error, message) in cases:
        for lib, layer in ((torch, torch_layer), (ember, ember_layer)):
            with pytest.raises(error, match=message):
                layer(*[lib.tensor(a) for a in arrays])
    bad_h = np.zeros((1, 3, 4), np.float32)
    hidden = {"LSTM": lambda lib: (lib.tensor(bad_h), lib.tensor(bad_h))}.get(kind, lambda lib: lib.tensor(bad_h))
    name = "hidden\\[0\\] size" if kind == "LSTM" else "hidden size"
    for lib, layer in ((torch, torch_layer), (ember, ember_layer)):
        with pytest.raises(RuntimeError, match=f"Expected {name} \\(1, 2, 4\\), got \\[1, 3, 4\\]"):
            layer(lib.zeros(5, 2, 3), hidden(lib))


def test_state_dict_from_torch_gives_identical_outputs():
    torch_layer = torch.nn.LSTM(4, 8, num_layers=2, bidirectional=True, proj_size=3, batch_first=True)
    ember_layer = ember.nn.LSTM(4, 8, num_layers=2, bidirectional=True, proj_size=3, batch_first=True)
    ember_layer.load_state_dict({k: ember.tensor(v.numpy()) for k, v in torch_layer.state_dict().items()})
    x = np.random.default_rng(6).standard_normal((2, 7, 4)).astype(np.float32)
    with torch.no_grad():
        t_out, (t_h, t_c) = torch_layer(torch.from_numpy(x))
    e_out, (e_h, e_c) = ember_layer(ember.tensor(x))
    for a, b in ((e_out, t_out), (e_h, t_h), (e_c, t_c)):
        assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_gradcheck_every_layer_kind():
    rng = np.random.default_rng(7)
    for kind in ("RNN", "LSTM", "GRU"):
        extra = {"proj_size": 2} if kind == "LSTM" else {}
        layer = getattr(ember.nn, kind)(2, 3, num_layers=2, bidirectional=True, **extra).double()
        x = ember.tensor(rng.standard_normal((3, 2, 2)), requires_grad=True)
        packed_lengths = [3, 1]

        def padded(x):
            return layer(x)[0]

        def packed(x):
            return layer(ember.nn.utils.rnn.pack_padded_sequence(x, packed_lengths))[0].data

        assert ember.autograd.gradcheck(padded, (x,))
        assert ember.autograd.gradcheck(packed, (x,))


# --- cells --------------------------------------------------------------------------

CELLS = [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}), ("LSTMCell", {}), ("GRUCell", {}),
         ("GRUCell", {"bias": False})]


@pytest.mark.parametrize("name,kwargs", CELLS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batched", [True, False])
def test_cells_match_torch(name, kwargs, dtype, batched):
    torch_cell = getattr(torch.nn, name)(3, 4, **kwargs)
    ember_cell = getattr(ember.nn, name)(3, 4, **kwargs)
    if dtype == "float64":
        torch_cell.double()
        ember_cell.double()
    ember_cell.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in torch_cell.state_dict().items()})
    assert repr(ember_cell) == repr(torch_cell)
    rng = np.random.default_rng(8)
    lead = (2,) if batched else ()
    e_x, t_x = _tensors(rng.standard_normal(lead + (3,)).astype(dtype))
    e_h, t_h = _tensors(rng.standard_normal(lead + (4,)).astype(dtype))
    tol = 1e-5 if dtype == "float32" else 1e-10
    if name == "LSTMCell":
        e_c, t_c = _tensors(rng.standard_normal(lead + (4,)).astype(dtype))
        _compare_run(ember_cell, torch_cell, (e_x, (e_h, e_c)), (t_x, (t_h, t_c)), tol)
    else:
        _compare_run(ember_cell, torch_cell, (e_x, e_h), (t_x, t_h), tol)
    _compare_run(ember_cell, torch_cell, (e_x.detach(),), (t_x.detach(),), tol)


def test_cell_errors_like_torch():
    for lib in (torch, ember):
        cell = lib.nn.GRUCell(3, 4)
        with pytest.raises(ValueError, match="GRUCell: Expected input to be 1D or 2D, got 3D instead"):
            cell(lib.zeros(1, 2, 3))
        with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 5 expected 3"):
            cell(lib.zeros(2, 5))
        with pytest.raises(RuntimeError, match="Input batch size 2 doesn't match hidden0 batch size 3"):
            cell(lib.zeros(2, 3), lib.zeros(3, 4))


@pytest.mark.parametrize("bidirectional", [False, True])
def test_lstm_gradients_through_final_state_only(bidirectional):
    # Only h_n and c_n reach the loss: the output's gradient is None in the fused layer's backward.
    ember_layer, torch_layer = _pair("LSTM", 3, 4, num_layers=2, bidirectional=bidirectional, dtype="float64")
    x = np.random.default_rng(9).standard_normal((5, 2, 3))
    e_x, t_x = _tensors(x)
    _, (e_h, e_c) = ember_layer(e_x)
    _, (t_h, t_c) = torch_layer(t_x)
    (e_h.sum() + 2 * e_c.sum()).backward()
    (t_h.sum() + 2 * t_c.sum()).backward()
    assert_close(e_x.grad, t_x.grad, rtol=1e-10, atol=1e-10)
    t_params = dict(torch_layer.named_parameters())
    for name, p in ember_layer.named_parameters():
        assert_close(p.grad, t_params[name].grad, rtol=1e-10, atol=1e-10, msg=name)


def test_lstm_second_derivative_is_refused_with_a_clear_error():
    # ember's documented difference (NOTE [ Fused LSTM cell ]): no double backward through the LSTM.
    for layer in (ember.nn.LSTM(2, 3), ember.nn.LSTMCell(2, 3)):
        x = ember.randn(4, 2, requires_grad=True) if isinstance(layer, ember.nn.LSTMCell) else \
            ember.randn(4, 1, 2, requires_grad=True)
        out = layer(x)[0]
        (grad,) = ember.autograd.grad(out.sum(), x, create_graph=True)
        with pytest.raises(RuntimeError, match="no second derivative"):
            grad.sum().backward()


def test_gru_and_rnn_second_derivative_match_torch():
    for kind in ("RNN", "GRU"):
        ember_layer, torch_layer = _pair(kind, 2, 3, dtype="float64")
        e_x, t_x = _tensors(np.random.default_rng(10).standard_normal((3, 2, 2)))
        grads = []
        for lib, layer, x in ((ember, ember_layer, e_x), (torch, torch_layer, t_x)):
            (g,) = lib.autograd.grad((layer(x)[0] ** 2).sum(), x, create_graph=True)
            (gg,) = lib.autograd.grad((g ** 2).sum(), x)
            grads.append(gg)
        assert_close(grads[0], grads[1], rtol=1e-9, atol=1e-10)


# --- the fused LSTM kernels (NOTE [ LSTM kernels in place ]) --------------------------


@pytest.mark.parametrize("bidirectional", [False, True])
def test_lstm_layer_float64_within_1e12_of_torch(bidirectional):
    # Longer sequences and wider layers than above: the in-place kernels (one exp pass
    # for the gates, tanh as 2 * sigmoid(2x) - 1) keep torch's values to ~1e-14.
    ember_layer, torch_layer = _pair("LSTM", 8, 24, num_layers=2, bidirectional=bidirectional, batch_first=True,
                                     dtype="float64")
    rng = np.random.default_rng(11)
    e_x, t_x = _tensors(rng.standard_normal((3, 40, 8)))
    layers = 2 * (2 if bidirectional else 1)
    e_h, t_h = _tensors(rng.standard_normal((layers, 3, 24)))
    e_c, t_c = _tensors(rng.standard_normal((layers, 3, 24)))
    _compare_run(ember_layer, torch_layer, (e_x, (e_h, e_c)), (t_x, (t_h, t_c)), 1e-12)


def _saturating_pair(dtype):
    """An LSTM pair whose biases are -1000, 0 or +1000 per gate unit: exp overflows to inf
    inside the kernels for the saturated units while the others stay in range."""
    ember_layer, torch_layer = _pair("LSTM", 3, 4, num_layers=2, dtype=dtype)
    rng = np.random.default_rng(12)
    with torch.no_grad():
        for name, p in torch_layer.named_parameters():
            if name.startswith("bias_ih"):
                p.copy_(torch.from_numpy(rng.choice([-1000.0, 0.0, 1000.0], size=tuple(p.shape))))
    ember_layer.load_state_dict({k: ember.tensor(v.numpy()) for k, v in torch_layer.state_dict().items()})
    return ember_layer, torch_layer


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lstm_saturated_gates_match_torch_without_warnings(dtype):
    # Saturated gates must come out as exact 0/1 (and -1/1 for tanh) silently, as in
    # torch, through the layer op (padded) and the cell op (packed).
    tol = 1e-5 if dtype == "float32" else 1e-10
    x = np.random.default_rng(13).standard_normal((5, 2, 3)).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        e_x, t_x = _tensors(x)
        _compare_run(*_saturating_pair(dtype), (e_x,), (t_x,), tol)
        e_x, t_x = _tensors(x)
        e_packed, t_packed = (_pack(lib, v, [5, 5], True, False) for lib, v in ((ember, e_x), (torch, t_x)))
        _compare_run(*_saturating_pair(dtype), (e_packed,), (t_packed,), tol, leaves=([e_x], [t_x]))


def test_lstm_layer_op_and_cell_op_agree_in_float64():
    # The same layer run through the layer op (padded) and step by step through the
    # cell op (packed, every length equal): the two kernels agree to rounding.
    layer = ember.nn.LSTM(5, 7, num_layers=2, bidirectional=True).double()
    x = ember.tensor(np.random.default_rng(13).standard_normal((9, 3, 5)), requires_grad=True)
    padded_out, (padded_h, padded_c) = layer(x)
    grads_padded = ember.autograd.grad((padded_out ** 2).sum() + padded_c.sum(), [x, *layer.parameters()])
    packed = ember.nn.utils.rnn.pack_padded_sequence(x, [9, 9, 9])
    packed_out, (packed_h, packed_c) = layer(packed)
    unpacked, _ = ember.nn.utils.rnn.pad_packed_sequence(packed_out)
    grads_packed = ember.autograd.grad((unpacked ** 2).sum() + packed_c.sum(), [x, *layer.parameters()])
    pairs = [(padded_out, unpacked), (padded_h, packed_h), (padded_c, packed_c), *zip(grads_padded, grads_packed)]
    for a, b in pairs:
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-12)
