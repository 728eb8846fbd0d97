"""The LSTM's fused kernels: one cell step (``aten::_thnn_fused_lstm_cell``) and one
direction of a layer over a padded sequence (``aten::_lstm_layer``), each with a
backward op.

PyTorch counterpart: aten/src/ATen/native/RNN.cpp (``_thnn_fused_lstm_cell`` and its
backward, the CUDA cell PyTorch fuses) and the oneDNN LSTM PyTorch runs on the CPU,
which loops over time inside one kernel (v2.13). See NOTE [ Fused LSTM cell ] and
NOTE [ Fused LSTM layer ].
"""

from ember.dispatcher import NONE, Op

# NOTE [ Fused LSTM cell ]
# Written with ember ops, an LSTM step is a dozen small ops (add, chunk, three sigmoids,
# two tanhs, three products, a sum), each paying dispatch and an autograd node, and
# their backward twice as many: on a char-level LM step that overhead made ember 1.9x
# slower than torch. As PyTorch does on CUDA (``_thnn_fused_lstm_cell``), the pointwise
# part is one op: its kernel adds the two gate products, activates all four gates in
# one pass (sigmoid(x) = tanh(x / 2) / 2 + 1/2, so a single tanh covers i, f, g, o) and
# returns h', c' and the activated gates (the "workspace" its backward reads). The
# backward is one op too, with the textbook formulas:
#     dc = grad_c' + grad_h' * o * (1 - tanh(c')^2)
#     d(pre-activation) of i, f, g, o = dc*g * i(1-i), dc*c * f(1-f), dc*i * (1-g^2), grad_h'*tanh(c') * o(1-o)
#     grad_c = dc * f
# Where ember differs from torch: the backward ops have no derivative of their own, so a
# second derivative through an LSTM (create_graph=True, then backward again) raises an
# error naming this; RNN and GRU layers, written with ember ops, have one.


def _activation_scale(xp, hidden, dtype):
    """Per gate column: multiply by 1/2 before and after the tanh (i, f, o), or by 1 (g)."""
    scale = xp.full(4 * hidden, 0.5, dtype=dtype)
    scale[2 * hidden:3 * hidden] = 1
    return scale


def _cell_forward(xp, gates, cx, scale):
    """Activate the summed pre-activation ``gates`` in place; returns ``h', c'``."""
    hidden = cx.shape[-1]
    gates *= scale
    xp.tanh(gates, out=gates)
    gates *= scale
    gates[..., :2 * hidden] += 0.5
    gates[..., 3 * hidden:] += 0.5
    i, f, g, o = (gates[..., k * hidden:(k + 1) * hidden] for k in range(4))
    cy = f * cx
    cy += i * g
    hy = xp.tanh(cy)
    hy *= o
    return hy, cy


def _cell_backward(xp, grad_hy, grad_cy, cx, cy, gates, out):
    """Write the pre-activation gradient into ``out``; returns the gradient of ``cx``."""
    hidden = cx.shape[-1]
    i, f, g, o = (gates[..., k * hidden:(k + 1) * hidden] for k in range(4))
    grad_c = xp.zeros_like(cy) if grad_cy is None else grad_cy.copy()
    if grad_hy is None:
        out[..., 3 * hidden:] = 0
    else:
        tanh_cy = xp.tanh(cy)
        out[..., 3 * hidden:] = grad_hy * tanh_cy * o * (1 - o)
        grad_c += grad_hy * o * (1 - tanh_cy * tanh_cy)
    out[..., :hidden] = grad_c * g * i * (1 - i)
    out[..., hidden:2 * hidden] = grad_c * cx * f * (1 - f)
    out[..., 2 * hidden:3 * hidden] = grad_c * i * (1 - g * g)
    return grad_c * f


def _no_double_backward(ctx, *grads):
    raise RuntimeError(f"ember's fused LSTM kernels ({ctx.op.qualname}) have no second derivative: "
                       "differentiating an LSTM's gradient again (create_graph=True) is not supported in ember, "
                       "unlike PyTorch on CPU. RNN and GRU layers do support it.")


# --- one step -----------------------------------------------------------------------


def _fused_lstm_cell_kernel(xp, input_gates, hidden_gates, cx):
    gates = input_gates + hidden_gates
    hy, cy = _cell_forward(xp, gates, cx, _activation_scale(xp, cx.shape[-1], gates.dtype))
    return hy, cy, gates


def _fused_lstm_cell_backward(ctx, grad_hy, grad_cy, grad_workspace):
    _, _, cx = ctx.saved_inputs
    _, cy, workspace = ctx.saved_outputs
    grad_gates, grad_cx = FUSED_LSTM_CELL_BACKWARD(grad_hy, grad_cy, cx, cy, workspace)
    return grad_gates, grad_gates, grad_cx


def _fused_lstm_cell_backward_kernel(xp, grad_hy, grad_cy, cx, cy, workspace):
    grad_gates = xp.empty_like(workspace)
    grad_cx = _cell_backward(xp, grad_hy, grad_cy, cx, cy, workspace, grad_gates)
    return grad_gates, grad_cx


FUSED_LSTM_CELL = Op("aten::_thnn_fused_lstm_cell", _fused_lstm_cell_kernel, _fused_lstm_cell_backward,
                     promote=NONE, save="both", num_outputs=3)
FUSED_LSTM_CELL_BACKWARD = Op("aten::_thnn_fused_lstm_cell_backward", _fused_lstm_cell_backward_kernel,
                              _no_double_backward, promote=NONE, num_outputs=2)

# NOTE [ Fused LSTM layer ]
# Even with a fused cell, each step's backward multiplies its gate gradient by h_{t-1}
# to get its share of dL/dW_hh: T small (4H x B) @ (B x H) products. PyTorch's CPU LSTM
# (oneDNN) keeps every step's gate gradient and forms dW_hh = dG^T @ H_prev as one
# (4H x T*B) @ (T*B x H) product, which BLAS runs several times faster. ember's layer op
# does the same: its kernel loops over time in NumPy (one h @ W_hh^T product and the
# cell per step, no tensor or autograd node per step), storing h, c and the activated
# gates of every step; its backward loops back in time for dG and dh and ends with the
# one big product. It serves padded inputs without projection (the common case); packed
# inputs and ``proj_size`` run step by step with the fused cell.


def _lstm_layer_kernel(xp, input_gates, h0, c0, w_hh, reverse=False):
    steps, batch, hidden = input_gates.shape[0], h0.shape[0], c0.shape[-1]
    outputs = xp.empty((steps, batch, hidden), dtype=input_gates.dtype)
    cells = xp.empty_like(outputs)
    workspace = xp.empty_like(input_gates)
    scale = _activation_scale(xp, hidden, input_gates.dtype)
    h, c = h0, c0
    for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
        gates = workspace[t]
        xp.matmul(h, w_hh.T, out=gates)
        gates += input_gates[t]
        h, c = _cell_forward(xp, gates, c, scale)
        outputs[t], cells[t] = h, c
    return outputs, h.copy(), c.copy(), cells, workspace


def _lstm_layer_backward(ctx, grad_output, grad_hn, grad_cn, grad_cells, grad_workspace):
    _, h0, c0, w_hh = ctx.saved_inputs
    outputs, _, _, cells, workspace = ctx.saved_outputs
    return LSTM_LAYER_BACKWARD(grad_output, grad_hn, grad_cn, h0, c0, w_hh, outputs, cells, workspace,
                               reverse=ctx.attrs.get("reverse", False))


def _lstm_layer_backward_kernel(xp, grad_output, grad_hn, grad_cn, h0, c0, w_hh, outputs, cells, workspace,
                                reverse=False):
    steps = workspace.shape[0]
    grad_h = xp.zeros_like(h0) if grad_hn is None else grad_hn
    grad_c = grad_cn
    grad_gates = xp.empty_like(workspace)
    forward_order = list(range(steps - 1, -1, -1) if reverse else range(steps))
    previous = dict(zip(forward_order[1:], forward_order[:-1]))  # the step each one follows
    for t in reversed(forward_order):
        if grad_output is not None:
            grad_h = grad_h + grad_output[t]
        c_prev = cells[previous[t]] if t in previous else c0
        grad_c = _cell_backward(xp, grad_h, grad_c, c_prev, cells[t], workspace[t], grad_gates[t])
        grad_h = grad_gates[t] @ w_hh
    # h_{t-1} for every step, in the order of ``grad_gates``: one product gives dW_hh.
    if reverse:
        h_prev = xp.concatenate([outputs[1:], h0[None]])
    else:
        h_prev = xp.concatenate([h0[None], outputs[:-1]])
    rows = grad_gates.reshape(-1, grad_gates.shape[-1])
    grad_w_hh = rows.T @ h_prev.reshape(-1, h_prev.shape[-1])
    return grad_gates, grad_h, grad_c if grad_c is not None else xp.zeros_like(c0), grad_w_hh


LSTM_LAYER = Op("aten::_lstm_layer", _lstm_layer_kernel, _lstm_layer_backward, promote=NONE, save="both",
                num_outputs=5)
LSTM_LAYER_BACKWARD = Op("aten::_lstm_layer_backward", _lstm_layer_backward_kernel, _no_double_backward,
                         promote=NONE, num_outputs=4)


def lstm_layer(input_gates, h0, c0, w_hh, reverse=False):
    """One direction of an LSTM layer over a padded sequence: ``input_gates`` ``(T, B, 4H)``
    holds ``x W_ih^T + b_ih + b_hh`` for every step. Returns ``(output (T, B, H), h_n, c_n)``."""
    output, h_n, c_n, _, _ = LSTM_LAYER(input_gates, h0, c0, w_hh, reverse=reverse)
    return output, h_n, c_n
