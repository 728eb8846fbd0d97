"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` and their single-step ``RNNCell``,
``LSTMCell``, ``GRUCell``.

PyTorch counterpart: torch/nn/modules/rnn.py (v2.13). The parameters have PyTorch's
names, shapes, order and initialisation (``weight_ih_l0``, ``weight_hh_l0_reverse``,
``bias_ih_l1``, ``weight_hr_l0`` for the LSTM projection), so PyTorch state dicts load
and give the same outputs. The gate math is in ember/native/rnn.py, built from ember
ops. ember leaves out cuDNN's flat weight buffer: ``flatten_parameters()`` is a no-op
and ``_flat_weights`` is read from the parameters on every call.
"""

import math
import numbers
import warnings

from ember.native import rnn as _rnn
from ember.nn import init
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter
from ember.nn.utils.rnn import PackedSequence


def _empty(*shape, device=None, dtype=None):
    from ember.native.factory import empty

    return empty(*shape, device=device, dtype=dtype)


def _zeros(*shape, like):
    from ember.native.factory import zeros

    return zeros(*shape, dtype=like.dtype, device=like.device)


def _permute(tensor, permutation):
    """Reorder the batch dim (dim 1) of a hidden state: PyTorch's ``apply_permutation``."""
    return tensor.index_select(1, permutation)


_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


class RNNBase(Module):
    """What ``RNN``, ``LSTM`` and ``GRU`` share: arguments, parameters, checks and the
    packed/padded/unbatched/batch_first handling of the forward.

    Args:
        mode: ``"RNN_TANH"``, ``"RNN_RELU"``, ``"LSTM"`` or ``"GRU"``.
        input_size: features of the input ``x``.
        hidden_size: features of the hidden state ``h``.
        num_layers: recurrent layers stacked (each reads the previous one's output).
        bias: learn ``b_ih`` and ``b_hh``.
        batch_first: input and output are ``(batch, seq, feature)`` (the hidden state
            stays ``(layers * directions, batch, hidden)``, as in PyTorch).
        dropout: dropout on the output of every layer but the last, in training.
        bidirectional: also run each layer backwards in time; outputs are concatenated.
        proj_size: (LSTM only) project ``h`` to ``proj_size`` features with ``weight_hr``.
    """

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        _check_arguments(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout, proj_size)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
            for direction in range(num_directions):
                suffix = "_reverse" if direction == 1 else ""
                shapes = {"weight_ih": (gate_size, layer_input_size), "weight_hh": (gate_size, real_hidden_size)}
                if bias:
                    shapes.update(bias_ih=(gate_size,), bias_hh=(gate_size,))
                if proj_size > 0:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                names = []
                for kind, shape in shapes.items():
                    name = f"{kind}_l{layer}{suffix}"
                    setattr(self, name, Parameter(_empty(*shape, device=device, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        """The parameters per layer and direction, in PyTorch's order."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self):
        """No-op: PyTorch packs the weights into one buffer for cuDNN; ember has none."""

    def reset_parameters(self):
        """Every weight and bias ~ U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), in
        registration order (PyTorch's)."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    # --- checks --------------------------------------------------------------------
    def check_input(self, input, batch_sizes):
        weight_dtype = self._flat_weights[0].dtype
        if input.dtype != weight_dtype and not _autocast_enabled():
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight_dtype}). "
                             f"Convert input: input.to({weight_dtype}), or convert model: model.to({input.dtype})")
        expected_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_dim:
            raise RuntimeError(f"input must have {expected_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != expected_hidden_size:
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        return hx if permutation is None else _permute(hx, permutation)

    # --- forward -------------------------------------------------------------------
    def _initial_state(self, input, max_batch_size):
        """Zero initial state(s) when the caller passes no ``hx``."""
        num_directions = 2 if self.bidirectional else 1
        return _zeros(self.num_layers * num_directions, max_batch_size, self.hidden_size, like=input)

    def _unpack_input(self, input, hx):
        """Common front of every forward: returns ``(data, batch_sizes, sorted_indices,
        unsorted_indices, is_batched, hx)`` with ``data`` time-major or packed and ``hx``
        (None or given) reordered and batched like ``data``."""
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            if hx is not None:
                hx = self.permute_hidden(hx, sorted_indices)
            return data, batch_sizes, sorted_indices, unsorted_indices, True, hx
        name = "RNN" if self.mode.startswith("RNN") else self.mode
        if input.dim() not in (2, 3):
            tail = " tensor" if self.mode != "LSTM" else ""
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D{tail} instead")
        is_batched = input.dim() == 3
        if not is_batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
            if hx is not None:
                hx = self._batch_hidden(hx, unbatched=True)
        elif hx is not None:
            self._batch_hidden(hx, unbatched=False)
        return input, None, None, None, is_batched, hx

    def _batch_hidden(self, hx, unbatched):
        want = 2 if unbatched else 3
        if hx.dim() != want:
            kind = "unbatched 2-D" if unbatched else "batched 3-D"
            raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got {hx.dim()}-D tensor")
        return hx.unsqueeze(1) if unbatched else hx

    def _run(self, data, hidden, batch_sizes):
        """The recurrence proper, on time-major or packed ``data``."""
        if batch_sizes is None and self.batch_first:
            data = data.transpose(0, 1)
        sizes = None if batch_sizes is None else batch_sizes.tolist()
        weights = [tuple(getattr(self, f"{kind}_l{layer}{suffix}", None)
                         for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr"))
                   for layer in range(self.num_layers)
                   for suffix in (("", "_reverse") if self.bidirectional else ("",))]
        output, final = _rnn.rnn_layers(self.mode, data, hidden, weights, sizes, self.dropout, self.training,
                                        2 if self.bidirectional else 1)
        if batch_sizes is None and self.batch_first:
            output = output.transpose(0, 1)
        return output, final

    def forward(self, input, hx=None):
        data, batch_sizes, sorted_indices, unsorted_indices, is_batched, hx = self._unpack_input(input, hx)
        if hx is None:
            hx = self._initial_state(data, self._max_batch_size(data, batch_sizes))
        self.check_forward_args(data, hx, batch_sizes)
        output, (hidden,) = self._run(data, (hx,), batch_sizes)
        return self._pack_output(input, output, hidden, batch_sizes, sorted_indices, unsorted_indices, is_batched)

    def _max_batch_size(self, data, batch_sizes):
        if batch_sizes is not None:
            return int(batch_sizes[0])
        return data.size(0) if self.batch_first else data.size(1)

    def _pack_output(self, input, output, hidden, batch_sizes, sorted_indices, unsorted_indices, is_batched):
        if isinstance(input, PackedSequence):
            return (PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices),
                    self.permute_hidden(hidden, unsorted_indices))
        if not is_batched:
            output = output.squeeze(0 if self.batch_first else 1)
            hidden = tuple(h.squeeze(1) for h in hidden) if isinstance(hidden, tuple) else hidden.squeeze(1)
        return output, hidden

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


def _autocast_enabled():
    try:
        from ember.amp.autocast_mode import is_autocast_enabled
    except ImportError:
        return False
    return is_autocast_enabled()


def _check_arguments(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout, proj_size):
    """PyTorch's constructor checks, with its messages."""
    if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
        raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                         "element being zeroed")
    if dropout > 0 and num_layers == 1:
        warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                      f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                      stacklevel=4)
    for name, value in (("bias", bias), ("batch_first", batch_first)):
        if not isinstance(value, bool):
            raise TypeError(f"{name} should be of type bool, got: {type(value).__name__}")
    for name, value in (("input_size", input_size), ("hidden_size", hidden_size)):
        if not isinstance(value, int):
            raise TypeError(f"{name} should be of type int, got: {type(value).__name__}")
        if value <= 0:
            raise ValueError(f"{name} must be greater than zero")
    if num_layers <= 0:
        raise ValueError("num_layers must be greater than zero")
    if proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable projections")
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")
    if mode not in _GATES:
        raise ValueError("Unrecognized RNN mode: " + mode)


class RNN(RNNBase):
    """A multi-layer Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)``
    (``nonlinearity="relu"`` for ReLU).

    Arguments as ``RNNBase`` plus ``nonlinearity`` (4th positional argument, as in
    PyTorch). ``forward(input, hx=None)`` returns ``(output, h_n)``; ``input`` is
    ``(L, N, H_in)`` (``(N, L, H_in)`` with ``batch_first``), ``(L, H_in)`` unbatched, or
    a ``PackedSequence``.

    >>> import ember
    >>> rnn = ember.nn.RNN(10, 20, 2)
    >>> output, hn = rnn(ember.randn(5, 3, 10), ember.randn(2, 3, 20))
    >>> output.shape, hn.shape
    (ember.Size([5, 3, 20]), ember.Size([2, 3, 20]))
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            nonlinearity = kwargs.pop("nonlinearity", "tanh")
        modes = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}
        if nonlinearity not in modes:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(modes[nonlinearity], *args, **kwargs)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """A multi-layer LSTM (gates i, f, g, o; see ``ember.native.rnn.lstm_step``).

    Arguments as ``RNNBase``, including ``proj_size``. ``forward(input, hx=None)``
    returns ``(output, (h_n, c_n))``; ``hx`` is ``(h_0, c_0)``.

    >>> import ember
    >>> lstm = ember.nn.LSTM(10, 20, 2)
    >>> output, (hn, cn) = lstm(ember.randn(5, 3, 10))
    >>> output.shape, hn.shape, cn.shape
    (ember.Size([5, 3, 20]), ember.Size([2, 3, 20]), ember.Size([2, 3, 20]))
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        return (self.num_layers * (2 if self.bidirectional else 1), mini_batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _permute(hx[0], permutation), _permute(hx[1], permutation)

    def _initial_state(self, input, max_batch_size):
        num_directions = 2 if self.bidirectional else 1
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (_zeros(self.num_layers * num_directions, max_batch_size, real_hidden_size, like=input),
                _zeros(self.num_layers * num_directions, max_batch_size, self.hidden_size, like=input))

    def _batch_hidden(self, hx, unbatched):
        want = 2 if unbatched else 3
        if hx[0].dim() != want or hx[1].dim() != want:
            kind = "unbatched 2-D" if unbatched else "batched 3-D"
            raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got "
                               f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
        return (hx[0].unsqueeze(1), hx[1].unsqueeze(1)) if unbatched else hx

    def forward(self, input, hx=None):
        data, batch_sizes, sorted_indices, unsorted_indices, is_batched, hx = self._unpack_input(input, hx)
        if hx is None:
            hx = self._initial_state(data, self._max_batch_size(data, batch_sizes))
        self.check_forward_args(data, hx, batch_sizes)
        output, hidden = self._run(data, tuple(hx), batch_sizes)
        return self._pack_output(input, output, hidden, batch_sizes, sorted_indices, unsorted_indices, is_batched)


class GRU(RNNBase):
    """A multi-layer GRU (gates r, z, n; see ``ember.native.rnn.gru_step``).

    Arguments and ``forward`` as ``RNN`` (without ``nonlinearity``).

    >>> import ember
    >>> gru = ember.nn.GRU(10, 20, 2, batch_first=True)
    >>> output, hn = gru(ember.randn(3, 5, 10))
    >>> output.shape, hn.shape
    (ember.Size([3, 5, 20]), ember.Size([2, 3, 20]))
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


# --- cells --------------------------------------------------------------------------


class RNNCellBase(Module):
    """The parameters of a single-step cell: ``weight_ih`` ``(chunks * hidden, input)``,
    ``weight_hh`` ``(chunks * hidden, hidden)``, ``bias_ih``, ``bias_hh``."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(_empty(num_chunks * hidden_size, input_size, device=device, dtype=dtype))
        self.weight_hh = Parameter(_empty(num_chunks * hidden_size, hidden_size, device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(_empty(num_chunks * hidden_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(_empty(num_chunks * hidden_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _check_step(self, input, hidden):
        """ATen's cell checks (``check_rnn_cell_forward_input`` / ``_hidden``)."""
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected {self.input_size}")
        for i, h in enumerate(hidden):
            if input.size(0) != h.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{i} batch size "
                                   f"{h.size(0)}")
            if h.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {h.size(1)}, expected "
                                   f"{self.hidden_size}")

    def _step(self, step, input, hidden):
        """One step: batch an unbatched input, run ``step``, unbatch the result."""
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hidden is None:
            zeros = _zeros(input.size(0), self.hidden_size, like=input)
            hidden = (zeros,) * self._num_states
        else:
            hidden = tuple(h if is_batched else h.unsqueeze(0) for h in hidden)
        self._check_step(input, hidden)
        from ember.native.linear import linear

        out = step(linear(input, self.weight_ih, self.bias_ih), hidden, self.weight_hh, self.bias_hh)
        if not is_batched:
            out = tuple(h.squeeze(0) for h in out)
        return out


class RNNCell(RNNCellBase):
    """One Elman step: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or ReLU).

    >>> import ember
    >>> cell = ember.nn.RNNCell(10, 20)
    >>> cell(ember.randn(3, 10)).shape
    ember.Size([3, 20])
    """

    _num_states = 1

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"RNNCell: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        steps = {"tanh": _rnn.rnn_tanh_step, "relu": _rnn.rnn_relu_step}
        if self.nonlinearity not in steps:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return self._step(steps[self.nonlinearity], input, None if hx is None else (hx,))[0]


class LSTMCell(RNNCellBase):
    """One LSTM step; ``forward(input, (h, c))`` returns ``(h', c')``.

    >>> import ember
    >>> cell = ember.nn.LSTMCell(10, 20)
    >>> h, c = cell(ember.randn(3, 10))
    >>> h.shape, c.shape
    (ember.Size([3, 20]), ember.Size([3, 20]))
    """

    _num_states = 2

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        if hx is not None:
            for index, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{index}] to be 1D or 2D, got {value.dim()}D instead")
        return self._step(_rnn.lstm_step, input, None if hx is None else tuple(hx))


class GRUCell(RNNCellBase):
    """One GRU step.

    >>> import ember
    >>> cell = ember.nn.GRUCell(10, 20)
    >>> cell(ember.randn(3, 10)).shape
    ember.Size([3, 20])
    """

    _num_states = 1

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"GRUCell: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        return self._step(_rnn.gru_step, input, None if hx is None else (hx,))[0]
