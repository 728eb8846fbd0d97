"""The LSTM's fused kernels: one cell step (``aten::_thnn_fused_lstm_cell``) and one
direction of a layer over a padded sequence (``aten::_lstm_layer``), each with a
backward op.

PyTorch counterpart: aten/src/ATen/native/RNN.cpp (``_thnn_fused_lstm_cell`` and its
backward, the CUDA cell PyTorch fuses) and the oneDNN LSTM PyTorch runs on the CPU,
which loops over time inside one kernel (v2.13). See NOTE [ Fused LSTM cell ],
NOTE [ Fused LSTM layer ] and NOTE [ LSTM kernels in place ].
"""

from ember.dispatcher import NONE, Op
from ember.native.pointwise.unary import quiet

# NOTE [ Fused LSTM cell ]
# Written with ember ops, an LSTM step is a dozen small ops (add, chunk, three sigmoids,
# two tanhs, three products, a sum), each paying dispatch and an autograd node, and
# their backward twice as many: on a char-level LM step that overhead made ember 1.9x
# slower than torch. As PyTorch does on CUDA (``_thnn_fused_lstm_cell``), the pointwise
# part is one op: its kernel adds the two gate products, activates all four gates in
# one pass and returns h', c' and the activated gates (the "workspace" its backward
# reads). The backward is one op too, with the textbook formulas:
#     dc = grad_c' + grad_h' * o * (1 - tanh(c')^2)
#     d(pre-activation) of i, f, g, o = dc*g * i(1-i), dc*c * f(1-f), dc*i * (1-g^2), grad_h'*tanh(c') * o(1-o)
#     grad_c = dc * f
# Where ember differs from torch: the backward ops have no derivative of their own, so a
# second derivative through an LSTM (create_graph=True, then backward again) raises an
# error naming this; RNN and GRU layers, written with ember ops, have one.

# NOTE [ LSTM kernels in place ]
# Inside the time loop every NumPy call costs a few microseconds whatever its size (a
# step's gates are only B x 4H), and a fresh array per result costs an allocation, so
# the kernels are written as few in-place ufunc calls on preallocated buffers (``out=``):
#   * activation: all four gates in one pass of ``exp``. With s = -1 for i, f, o and
#     s = -2 for g, a = 1 / (1 + exp(s * x)) is sigmoid(x) for i, f, o and
#     sigmoid(2x) for g, and tanh(x) = 2 * sigmoid(2x) - 1. exp is about twice as fast
#     as tanh in NumPy; exp(+large) = inf gives exactly 0 and 1 at the ends (its overflow
#     warning is silenced, ``quiet``). Against the tanh form the values differ by a few
#     units in the last place (1e-15 in float64, absolute).
#   * cell: c' = f * c + i * g and h' = o * tanh(c') go straight into the layer's output
#     buffers; tanh(c') is kept for the backward, which would otherwise recompute it.
#   * backward: the derivative of every activation at its output is one pass over the
#     whole B x 4H row (a(1 - a)), patched to 1 - g^2 on the g block; the four upstream
#     factors (dc*g, dc*c, dc*i, grad_h'*tanh(c')) are written into the gate-gradient
#     rows and multiplied by it in one more pass.


def _gate_scale(xp, hidden, dtype):
    """Per gate column: -1 for the sigmoid gates i, f, o; -2 for g (NOTE [ LSTM kernels in place ])."""
    scale = xp.full(4 * hidden, -1, dtype=dtype)
    scale[2 * hidden:3 * hidden] = -2
    return scale


def _gates(a, hidden):
    """The i, f, g, o blocks (views) of a ``(..., 4H)`` array."""
    return a[..., :hidden], a[..., hidden:2 * hidden], a[..., 2 * hidden:3 * hidden], a[..., 3 * hidden:]


def _activate(xp, gates, scale, hidden):
    """Pre-activations -> sigmoid(i, f, o) and tanh(g), in place."""
    gates *= scale
    xp.exp(gates, out=gates)
    gates += 1
    xp.divide(1, gates, out=gates)  # the same values as reciprocal, which NumPy runs slower
    g = gates[..., 2 * hidden:3 * hidden]
    g *= 2
    g -= 1


def _cell_update(xp, gates, cx, cy, tanh_cy, hy, scratch):
    """Write ``c' = f * c + i * g``, ``tanh(c')`` and ``h' = o * tanh(c')`` into the given buffers."""
    i, f, g, o = _gates(gates, cx.shape[-1])
    xp.multiply(f, cx, out=cy)
    xp.multiply(i, g, out=scratch)
    cy += scratch
    xp.tanh(cy, out=tanh_cy)
    xp.multiply(o, tanh_cy, out=hy)


def _gate_gradients(xp, grad_hy, grad_cy, cx, tanh_cy, gates, out, dc, derivative):
    """Write the pre-activation gradient into ``out`` and dL/dc' (all paths) into ``dc``;
    ``derivative`` is a scratch array shaped like ``gates``."""
    hidden = cx.shape[-1]
    i, f, g, o = _gates(gates, hidden)
    grad_i, grad_f, grad_g, grad_o = _gates(out, hidden)
    xp.subtract(1, gates, out=derivative)
    derivative *= gates  # a(1 - a): sigmoid's derivative at its output a
    derivative_g = derivative[..., 2 * hidden:3 * hidden]
    xp.multiply(g, g, out=derivative_g)
    xp.subtract(1, derivative_g, out=derivative_g)  # 1 - g^2: tanh's
    xp.multiply(tanh_cy, tanh_cy, out=dc)
    xp.subtract(1, dc, out=dc)
    dc *= o
    dc *= grad_hy
    dc += grad_cy
    xp.multiply(dc, g, out=grad_i)
    xp.multiply(dc, cx, out=grad_f)
    xp.multiply(dc, i, out=grad_g)
    xp.multiply(grad_hy, tanh_cy, out=grad_o)
    out *= derivative


def _no_double_backward(ctx, *grads):
    raise RuntimeError(f"ember's fused LSTM kernels ({ctx.op.qualname}) have no second derivative: "
                       "differentiating an LSTM's gradient again (create_graph=True) is not supported in ember, "
                       "unlike PyTorch on CPU. RNN and GRU layers do support it.")


# --- one step -----------------------------------------------------------------------


@quiet
def _fused_lstm_cell_kernel(xp, input_gates, hidden_gates, cx):
    hidden = cx.shape[-1]
    gates = input_gates + hidden_gates
    _activate(xp, gates, _gate_scale(xp, hidden, gates.dtype), hidden)
    cy = xp.empty(gates.shape[:-1] + (hidden,), dtype=gates.dtype)
    hy, tanh_cy, scratch = xp.empty_like(cy), xp.empty_like(cy), xp.empty_like(cy)
    _cell_update(xp, gates, cx, cy, tanh_cy, hy, scratch)
    return hy, cy, gates


def _fused_lstm_cell_backward(ctx, grad_hy, grad_cy, grad_workspace):
    _, _, cx = ctx.saved_inputs
    _, cy, workspace = ctx.saved_outputs
    grad_gates, grad_cx = FUSED_LSTM_CELL_BACKWARD(grad_hy, grad_cy, cx, cy, workspace)
    return grad_gates, grad_gates, grad_cx


def _fused_lstm_cell_backward_kernel(xp, grad_hy, grad_cy, cx, cy, workspace):
    grad_hy = xp.zeros_like(cy) if grad_hy is None else grad_hy
    grad_cy = xp.zeros_like(cy) if grad_cy is None else grad_cy
    grad_gates, derivative = xp.empty_like(workspace), xp.empty_like(workspace)
    dc = xp.empty_like(cy)
    _gate_gradients(xp, grad_hy, grad_cy, cx, xp.tanh(cy), workspace, grad_gates, dc, derivative)
    dc *= workspace[..., cy.shape[-1]:2 * cy.shape[-1]]  # grad of c = dc * f
    return grad_gates, dc


FUSED_LSTM_CELL = Op("aten::_thnn_fused_lstm_cell", _fused_lstm_cell_kernel, _fused_lstm_cell_backward,
                     promote=NONE, save="both", num_outputs=3)
FUSED_LSTM_CELL_BACKWARD = Op("aten::_thnn_fused_lstm_cell_backward", _fused_lstm_cell_backward_kernel,
                              _no_double_backward, promote=NONE, num_outputs=2)

# NOTE [ Fused LSTM layer ]
# Even with a fused cell, each step's backward multiplies its gate gradient by h_{t-1}
# to get its share of dL/dW_hh: T small (4H x B) @ (B x H) products. PyTorch's CPU LSTM
# (oneDNN) keeps every step's gate gradient and forms dW_hh = dG^T @ H_prev as one
# (4H x T*B) @ (T*B x H) product, which BLAS runs several times faster. ember's layer op
# does the same. Before the op, the caller computes every step's input term
# x W_ih^T + (b_ih + b_hh) as one product (``linear``, whose backward gives dx, dW_ih and
# both biases as one product or sum each over all steps). The kernel loops over time in
# NumPy: per step one h @ W_hh^T product written into that step's row of the
# workspace, the activation and the cell update in place (NOTE [ LSTM kernels in
# place ]), no tensor or autograd node per step; it keeps h, c, tanh(c) and the
# activated gates of every step. Its backward loops back in time for the gate gradients
# and dh = dG @ W_hh only, and ends with the one big product for dW_hh. It serves padded
# inputs without projection (the common case); packed inputs and ``proj_size`` run step
# by step with the fused cell.


def _time_order(steps, reverse):
    return range(steps - 1, -1, -1) if reverse else range(steps)


@quiet
def _lstm_layer_kernel(xp, input_gates, h0, c0, w_hh, reverse=False):
    steps, hidden = input_gates.shape[0], c0.shape[-1]
    outputs = xp.empty((steps,) + c0.shape, dtype=input_gates.dtype)
    cells, tanh_cells = xp.empty_like(outputs), xp.empty_like(outputs)
    workspace = xp.empty_like(input_gates)
    scratch = xp.empty_like(c0)
    scale = _gate_scale(xp, hidden, input_gates.dtype)
    w_hh_t = w_hh.T
    h, c = h0, c0
    for t in _time_order(steps, reverse):
        gates = workspace[t]
        xp.matmul(h, w_hh_t, out=gates)
        gates += input_gates[t]
        _activate(xp, gates, scale, hidden)
        _cell_update(xp, gates, c, cells[t], tanh_cells[t], outputs[t], scratch)
        h, c = outputs[t], cells[t]
    return outputs, h.copy(), c.copy(), cells, tanh_cells, workspace


def _lstm_layer_backward(ctx, grad_output, grad_hn, grad_cn, grad_cells, grad_tanh_cells, grad_workspace):
    _, h0, c0, w_hh = ctx.saved_inputs
    outputs, _, _, cells, tanh_cells, workspace = ctx.saved_outputs
    return LSTM_LAYER_BACKWARD(grad_output, grad_hn, grad_cn, h0, c0, w_hh, outputs, cells, tanh_cells, workspace,
                               reverse=ctx.attrs.get("reverse", False))


def _lstm_layer_backward_kernel(xp, grad_output, grad_hn, grad_cn, h0, c0, w_hh, outputs, cells, tanh_cells,
                                workspace, reverse=False):
    steps = workspace.shape[0]
    grad_h = xp.zeros_like(h0) if grad_hn is None else grad_hn.copy()
    grad_c = xp.zeros_like(c0) if grad_cn is None else grad_cn.copy()
    dc = xp.empty_like(c0)
    grad_gates, derivative = xp.empty_like(workspace), xp.empty_like(workspace[0])
    order = _time_order(steps, reverse)
    for n in range(steps - 1, -1, -1):
        t = order[n]
        if grad_output is not None:
            grad_h += grad_output[t]
        c_prev = cells[order[n - 1]] if n else c0
        _gate_gradients(xp, grad_h, grad_c, c_prev, tanh_cells[t], workspace[t], grad_gates[t], dc, derivative)
        hidden = c0.shape[-1]
        xp.multiply(dc, workspace[t][..., hidden:2 * hidden], out=grad_c)
        xp.matmul(grad_gates[t], w_hh, out=grad_h)
    # h_{t-1} for every step, in the order of ``grad_gates``: one product gives dW_hh.
    h_prev = xp.empty_like(outputs)
    if steps:
        first, earlier, later = (-1, slice(None, -1), slice(1, None)) if reverse else (0, slice(1, None),
                                                                                       slice(None, -1))
        h_prev[first] = h0
        h_prev[earlier] = outputs[later]
    rows = grad_gates.reshape(-1, grad_gates.shape[-1])
    grad_w_hh = rows.T @ h_prev.reshape(-1, h_prev.shape[-1])
    return grad_gates, grad_h, grad_c, grad_w_hh


LSTM_LAYER = Op("aten::_lstm_layer", _lstm_layer_kernel, _lstm_layer_backward, promote=NONE, save="both",
                num_outputs=6)
LSTM_LAYER_BACKWARD = Op("aten::_lstm_layer_backward", _lstm_layer_backward_kernel, _no_double_backward,
                         promote=NONE, num_outputs=4)


def lstm_layer(input_gates, h0, c0, w_hh, reverse=False):
    """One direction of an LSTM layer over a padded sequence: ``input_gates`` ``(T, B, 4H)``
    holds ``x W_ih^T + b_ih + b_hh`` for every step. Returns ``(output (T, B, H), h_n, c_n)``."""
    output, h_n, c_n, _, _, _ = LSTM_LAYER(input_gates, h0, c0, w_hh, reverse=reverse)
    return output, h_n, c_n
