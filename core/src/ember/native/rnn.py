"""The recurrent cells and the layer loop behind ``nn.RNN``, ``nn.LSTM`` and ``nn.GRU``.

PyTorch counterpart: aten/src/ATen/native/RNN.cpp (the cells ``SimpleCell``,
``LSTMCell``, ``GRUCell``, the ``FullLayer`` / ``FullBidirectionalLayer`` loops over
time, packed sequences and the stacking of layers) (v2.13).

Everything here is a composite of ember ops (``linear``, ``sigmoid``, ``tanh``, ``mul``,
``cat``), so autograd, double backward and gradcheck come for free. See NOTE [ The
recurrent loop ] for how padded and packed inputs share one loop.
"""

from ember.native.fused_lstm import FUSED_LSTM_CELL, lstm_layer
from ember.native.linear import linear
from ember.native.pointwise.unary import relu, sigmoid, tanh
from ember.native.shape.shape import cat, stack

# NOTE [ The recurrent loop ]
# As PyTorch does on CPU, the input-to-hidden product of a whole layer is one matmul
# over every time step (``linear(x, W_ih, b_ih)``); only the hidden-to-hidden product
# runs once per step. A padded input (T, B, F) is cut into its T steps with one
# ``unbind``; a packed input (sum of batch_sizes, F) with one ``split`` by
# ``batch_sizes``. At step t only the first ``batch_sizes[t]`` sequences are alive
# (they are sorted longest first), so:
#   * forward in time, the state shrinks: the rows of sequences that just ended are
#     set aside and are their final state;
#   * backward in time, the state grows: a sequence that starts (at its last element)
#     joins with its initial state.
# A padded input is the packed case with every batch size equal, where nothing is
# set aside or joined.


def rnn_tanh_step(input_gates, state, w_hh, b_hh, w_hr=None):
    """One Elman step: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)``; the input term is
    already computed (``input_gates``). ``state`` is ``(h,)``."""
    return (tanh(linear(state[0], w_hh, b_hh) + input_gates),)


def rnn_relu_step(input_gates, state, w_hh, b_hh, w_hr=None):
    """``rnn_tanh_step`` with ``relu`` as the nonlinearity."""
    return (relu(linear(state[0], w_hh, b_hh) + input_gates),)


def lstm_step(input_gates, state, w_hh, b_hh, w_hr=None):
    """One LSTM step on ``state = (h, c)``; gates in PyTorch's order i, f, g, o::

        i, f, o = sigmoid(.), g = tanh(.)   of  x W_ih^T + b_ih + h W_hh^T + b_hh
        c' = f * c + i * g
        h' = o * tanh(c')          (then h' W_hr^T with a projection, ``proj_size > 0``)

    The pointwise part after the two products is one fused op (NOTE [ Fused LSTM cell ]).
    """
    h, c = state
    h, c, _ = FUSED_LSTM_CELL(input_gates, linear(h, w_hh, b_hh), c)
    if w_hr is not None:
        h = linear(h, w_hr, None)
    return h, c


def gru_step(input_gates, state, w_hh, b_hh, w_hr=None):
    """One GRU step; gates in PyTorch's order r, z, n::

        r = sigmoid(x_r + h_r),  z = sigmoid(x_z + h_z)   (x_* = x W_i*^T + b_i*, h_* = h W_h*^T + b_h*)
        n = tanh(x_n + r * h_n)
        h' = (h - n) * z + n       (= (1 - z) * n + z * h, in PyTorch's order of operations)
    """
    h = state[0]
    x_r, x_z, x_n = input_gates.chunk(3, 1)
    h_r, h_z, h_n = linear(h, w_hh, b_hh).chunk(3, 1)
    r = sigmoid(x_r + h_r)
    z = sigmoid(x_z + h_z)
    n = tanh(x_n + r * h_n)
    return ((h - n) * z + n,)


STEPS = {"RNN_TANH": rnn_tanh_step, "RNN_RELU": rnn_relu_step, "LSTM": lstm_step, "GRU": gru_step}


def _direction(step, steps_in, state, weights, batch_sizes, reverse):
    """Run ``step`` over the per-time input gates ``steps_in``; returns the outputs per
    time step (in time order) and the final state (NOTE [ The recurrent loop ])."""
    w_hh, b_hh, w_hr = weights
    outputs = [None] * len(steps_in)
    if batch_sizes is None:  # padded: every sequence is alive at every step
        order = range(len(steps_in) - 1, -1, -1) if reverse else range(len(steps_in))
        for t in order:
            state = step(steps_in[t], state, w_hh, b_hh, w_hr)
            outputs[t] = state[0]
        return outputs, state
    if reverse:
        initial = state
        alive = batch_sizes[-1]
        state = tuple(s[:alive] for s in initial)
        for t in range(len(steps_in) - 1, -1, -1):
            size = batch_sizes[t]
            if size > alive:  # sequences whose last element is at step t join here
                state = tuple(cat([s, s0[alive:size]]) for s, s0 in zip(state, initial))
                alive = size
            state = step(steps_in[t], state, w_hh, b_hh, w_hr)
            outputs[t] = state[0]
        return outputs, state
    ended = []  # final states of finished sequences, later ones (lower rows) last
    alive = batch_sizes[0]
    for t, size in enumerate(batch_sizes):
        if size < alive:
            ended.append(tuple(s[size:] for s in state))
            state = tuple(s[:size] for s in state)
            alive = size
        state = step(steps_in[t], state, w_hh, b_hh, w_hr)
        outputs[t] = state[0]
    if ended:
        state = tuple(cat([s, *reversed(parts)]) for s, *parts in zip(state, *ended))
    return outputs, state


def rnn_layers(mode, input, hidden, layer_weights, batch_sizes=None, dropout=0.0, training=False,
               num_directions=1):
    """Run a stack of recurrent layers.

    Args:
        mode: ``"RNN_TANH"``, ``"RNN_RELU"``, ``"LSTM"`` or ``"GRU"``.
        input: ``(T, B, F)`` time-major, or packed data ``(sum(batch_sizes), F)``.
        hidden: a tuple of states, each ``(num_layers * num_directions, B, H)``
            (``(h0,)``, or ``(h0, c0)`` for the LSTM).
        layer_weights: per layer and direction, ``(w_ih, w_hh, b_ih, b_hh, w_hr)``
            (biases and ``w_hr`` may be None).
        batch_sizes: a list of Python ints for packed data, else None.
        dropout: probability of dropping each layer's output except the last (in training).

    Returns:
        ``(output, final_states)``: the output in the input's layout, with
        ``num_directions * H_out`` features, and a tuple of tensors like ``hidden``.
    """
    from ember.native.dropout import dropout as dropout_fn

    step = STEPS[mode]
    num_layers = len(layer_weights) // num_directions
    finals = [[] for _ in hidden]
    layer_input = input
    for layer in range(num_layers):
        directions = []
        for direction in range(num_directions):
            index = layer * num_directions + direction
            w_ih, w_hh, b_ih, b_hh, w_hr = layer_weights[index]
            state = tuple(h[index] for h in hidden)
            if mode == "LSTM" and batch_sizes is None and w_hr is None:  # NOTE [ Fused LSTM layer ]
                # Both biases in the one product's bias: one (4H,) sum instead of a pass
                # over every step's gates forward and a reduction over them backward.
                gates = linear(layer_input, w_ih, None if b_ih is None else b_ih + b_hh)
                output, *state = lstm_layer(gates, *state, w_hh, reverse=direction == 1)
                directions.append(output)
            else:
                gates = linear(layer_input, w_ih, b_ih)  # every step's input term in one product
                steps_in = gates.unbind(0) if batch_sizes is None else gates.split(batch_sizes)
                outputs, state = _direction(step, steps_in, state, (w_hh, b_hh, w_hr), batch_sizes,
                                            direction == 1)
                directions.append(stack(outputs) if batch_sizes is None else cat(outputs))
            for kept, s in zip(finals, state):
                kept.append(s)
        layer_input = directions[0] if num_directions == 1 else cat(directions, -1)
        if dropout and training and layer < num_layers - 1:
            layer_input = dropout_fn(layer_input, dropout, True)
    return layer_input, tuple(stack(kept) for kept in finals)
