"""Forward-mode AD at the dispatcher: where a tensor keeps its tangents, and how an op's
forward-derivative rule makes its outputs' tangents.

PyTorch counterpart: torch/csrc/autograd/forward_grad.h (``ForwardGrad``,
``ForwardADLevel``), the forward-derivative blocks that
tools/autograd/gen_variable_type.py writes into VariableType from the ``result:``
lines of tools/autograd/derivatives.yaml, and its ``auto_element_wise`` /
``auto_linear`` shorthands (v2.13). The public API is ember/autograd/forward_ad.py.

# NOTE [ Forward grads at the dispatcher ]
# A dual tensor is an ordinary tensor whose ``_fw_grads`` maps a live dual level to
# its tangent (PyTorch's ForwardGrad). While a level is open, ``Op.__call__`` runs
# through the modes (NOTE [ Modes at the dispatcher ]); after the op has run,
# ``after_op`` looks, level by level, for inputs with a tangent, and if one has, calls
# the op's ``jvp`` rule, declared on the op beside its backward (``Op(...,
# jvp=...)``), and gives each floating output the tangent it returns. A rule is
# ``jvp(ctx, *tangents)``: one tangent per input (None where an input has none) and
# ``ctx`` with the inputs, outputs and attributes under the names a backward formula
# reads (``saved_inputs``, ``saved_outputs``, ``attrs``). Two shorthands cover most
# ops, as in derivatives.yaml:
#   * AUTO_ELEMENT_WISE: an elementwise op's Jacobian is diagonal, so its backward
#     formula applied to the tangent is its jvp (PyTorch's shorthand is for one input;
#     ember sums one such term per input with a tangent: mul, div, pow, where, clamp);
#   * AUTO_LINEAR: a linear op (views, shape ops, sums, add, cat, ...) applied to the
#     tangents (zeros for inputs without one) is its jvp, and a view op's result is
#     then a view of its input's tangent, as PyTorch keeps it (an op declared
#     ``view=True`` is AUTO_LINEAR unless it says otherwise);
# and two of ember's own, where derivatives.yaml spells the formula out each time:
#   * MULTILINEAR: an op linear in each tensor input separately (mul, mm, bmm,
#     einsum): the sum over inputs with a tangent of the op with that input replaced
#     by it;
#   * REDUCTION: an op that reduces slices (amax, var, norm, prod, logsumexp,
#     max.dim): each output element depends on its own slice only, so its backward
#     formula at ``grad = 1`` is, slice by slice, the gradient of that element; times
#     the tangent and summed over the reduced dims (``dims``/``dim``, ``keepdim``
#     attributes), it is the jvp;
#   * Decomposition(fn): the op's composite ``fn`` run on the dual inputs themselves.
# A differentiable op (one with a backward) without a rule raises PyTorch's
# NotImplementedError; an op without a backward (argmax, comparisons) gives no
# tangent. The rule runs with its own level hidden (``state.visible``), so the primals
# it reads are seen without that tangent, while the tangents of outer levels flow
# through the rule's ops: that is how a jvp of a jvp (``jacfwd(jacfwd(f))``) gets its
# second order. A level's tangents are dropped when it exits: every lookup is by the
# live level object, and a dead level's entries are never found again (and are pruned
# when next written).
"""

from ember.autograd.grad_mode import no_grad
from ember.dtypes import is_differentiable_array

AUTO_ELEMENT_WISE = "auto_element_wise"
AUTO_LINEAR = "auto_linear"
MULTILINEAR = "multilinear"
REDUCTION = "reduction"


class Decomposition:
    """A rule that runs ``fn(*inputs, **attrs)``, a composite of ops that have rules, on
    the dual inputs and reads its tangent (PyTorch's torch/_decomp/
    decompositions_for_jvp.py does this for the norms)."""

    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn


class Level:
    """One dual level: its index (0 for the first), whether it is still open, and whether
    ``enter_dual_level`` opened it (``public``) or a function transform."""

    __slots__ = ("index", "alive", "public")

    def __init__(self, index, public=False):
        self.index = index
        self.alive = True
        self.public = public

    def __repr__(self):
        return f"<dual level {self.index}{'' if self.alive else ', exited'}>"


class ForwardState:
    """The open levels, innermost last; ``visible``: how many of them ops see (a rule runs
    with its own level and the ones inside it hidden, a custom Function's forward with
    all of them hidden)."""

    __slots__ = ("levels", "visible")

    def __init__(self):
        self.levels = []
        self.visible = 0


state = ForwardState()


# --- the tangents a tensor carries ---------------------------------------------------
def tangent_of(tensor, level):
    """``tensor``'s tangent at ``level``, or None."""
    grads = tensor._fw_grads
    return None if grads is None else grads.get(level)


def set_tangent(tensor, level, tangent):
    """Give ``tensor`` ``tangent`` at ``level`` (None removes it); dead levels are pruned."""
    grads = {lv: t for lv, t in (tensor._fw_grads or {}).items() if lv.alive and lv is not level}
    if tangent is not None:
        grads[level] = tangent
    tensor._fw_grads = grads or None


def keep_tangents(source, detached):
    """``detached`` (``source.detach()``) with ``source``'s tangents: the function
    transforms detach to leave reverse mode's graph, not an enclosing forward mode."""
    if source._fw_grads is not None:
        detached._fw_grads = {lv: t for lv, t in source._fw_grads.items() if lv.alive} or None
    return detached


def check_tangent(tensor, tangent, level):
    """PyTorch's checks on a tangent given to ``tensor`` (make_dual, a custom Function's jvp)."""
    if tangent.shape != tensor.shape:
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the given "
                           f"forward gradient is of size {list(tangent.shape)}.")
    if not (tangent.is_floating_point() or tangent.is_complex()):  # torch's internal assert, its last sentence
        raise RuntimeError("Expected both tensor and its forward grad to be floating point or complex")
    if tangent_of(tangent, level) is not None:
        raise RuntimeError("Setting a forward grad that itself has a forward gradient at the same level "
                           f"{level.index} is not supported.")


def in_layout_of(tensor, tangent):
    """``tangent`` itself when it is laid out as ``tensor`` (same strides), else a copy
    that is (PyTorch keeps a tangent as it is only when their layouts match)."""
    if tangent._data.strides == tensor._data.strides and tangent.dtype == tensor.dtype or tensor.numel() <= 1:
        return tangent
    from ember.native.factory import empty_strided

    with no_grad():
        out = empty_strided(tuple(tensor.shape), tuple(tensor.stride()), dtype=tangent.dtype,
                            device=tangent.device)
    return out.copy_(tangent) if tangent.requires_grad else _raw_copy(out, tangent)


def _raw_copy(out, source):
    out._data[...] = source._data
    return out


# --- an op's outputs get their tangents --------------------------------------------
class JvpContext:
    """What a forward-derivative rule reads, named as a backward formula's ``ctx``."""

    __slots__ = ("op", "saved_inputs", "saved_outputs", "attrs", "input_meta", "needs_input_grad", "num_outputs")

    def __init__(self, op, inputs, outputs, attrs, tangents):
        from ember.tensor import Tensor

        self.op = op
        self.saved_inputs = inputs
        self.saved_outputs = outputs
        self.attrs = attrs
        self.input_meta = tuple((x._data.shape, x._data.dtype) if isinstance(x, Tensor) else None for x in inputs)
        self.needs_input_grad = tuple(t is not None for t in tangents)
        self.num_outputs = len(outputs)

    def saved_outputs_from(self, start):
        return self.saved_outputs[start:]


def after_op(op, inputs, attrs, result):
    """Give ``result`` (one tensor, or a tuple) the tangents of every visible level."""
    from ember.tensor import Tensor

    visible = state.visible
    if not visible:
        return
    outputs = (result,) if op.num_outputs == 1 else tuple(result)
    for position in range(visible - 1, -1, -1):
        level = state.levels[position]
        tangents = [tangent_of(x, level) if isinstance(x, Tensor) else None for x in inputs]
        if all(t is None for t in tangents) or op.backward is None:
            continue
        if op.jvp is None:
            raise not_supported(op.name)
        state.visible = position  # this level and those inside it hidden while the rule runs
        try:
            out_tangents = run_rule(op, JvpContext(op, inputs, outputs, attrs, tangents), tangents, level)
        finally:
            state.visible = visible
        attach(outputs, out_tangents, level)
    for out in outputs:  # the node's saved copies of its outputs carry the tangents too
        if out._fw_grads is not None:
            _saved_output_tangents(out)


def _saved_output_tangents(out):
    saved = getattr(out._grad_fn, "_saved", None)
    if isinstance(saved, tuple) and len(saved) == 3:
        for record in saved[2]:
            if record.output_nr == out._output_nr:
                record.fw_grads = out._fw_grads


def run_rule(op, ctx, tangents, level):
    """The rule's output tangents, one per output (None: no tangent)."""
    rule = op.jvp
    if rule is AUTO_ELEMENT_WISE:
        result = element_wise(op, ctx, tangents)
    elif rule is AUTO_LINEAR:
        result = op(*linear_arguments(ctx.saved_inputs, tangents), **ctx.attrs)
    elif rule is REDUCTION:
        result = reduction(op, ctx, tangents[0])
    elif rule is MULTILINEAR:
        result = multilinear(op, ctx, tangents)
    elif isinstance(rule, Decomposition):
        state.visible = level.index + 1  # the composite runs with this level seen
        outputs = rule.fn(*ctx.saved_inputs, **ctx.attrs)
        outputs = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
        result = tuple(tangent_of(o, level) for o in outputs)
    else:
        result = rule(ctx, *tangents)
    return result if isinstance(result, (tuple, list)) else (result,)


def element_wise(op, ctx, tangents):
    """``sum_i backward_i(tangent_i)`` for an elementwise op (AUTO_ELEMENT_WISE): with
    respect to each input its Jacobian is diagonal, so the backward formula (which does
    not reduce a broadcast input's gradient: the engine does) is the jvp."""
    total = None
    for i, t in enumerate(tangents):
        if t is None:
            continue
        ctx.needs_input_grad = tuple(j == i for j in range(len(tangents)))
        term = op.backward(ctx, t)[i]
        if term is not None:
            total = term if total is None else total + term
    return total


def reduction(op, ctx, tangent):
    """``sum over the reduced dims of (d output / d input) * tangent`` (REDUCTION)."""
    from ember.native.factory import ones_like

    output = ctx.saved_outputs[0]
    ctx.needs_input_grad = (True,) + (False,) * (len(ctx.saved_inputs) - 1)
    rest = (None,) * (len(ctx.saved_outputs) - 1)
    slope = op.backward(ctx, ones_like(output), *rest)[0]
    if slope is None:  # a formula that says "no gradient" (norm's ord 0): a zero tangent
        return output * 0
    dims = ctx.attrs.get("dims", ctx.attrs.get("dim"))
    ndim = tangent.ndim
    if dims is None or dims == () or dims == []:
        dims = tuple(range(ndim))
    elif isinstance(dims, int):
        dims = (dims,)
    dims = tuple(d % ndim for d in dims) if ndim else ()
    total = slope * tangent
    return (total.sum(dims, keepdim=True) if dims else total).reshape(tuple(output.shape))


def multilinear(op, ctx, tangents, **attrs):
    """``sum_i op(inputs with input i replaced by its tangent)`` (MULTILINEAR)."""
    total = None
    for i, t in enumerate(tangents):
        if t is None:
            continue
        arguments = list(ctx.saved_inputs)
        arguments[i] = t
        term = op(*arguments, **{**ctx.attrs, **attrs})
        total = term if total is None else total + term
    return total


def bilinear_plus_bias(bias):
    """The rule of an op ``f(x, w, b) = B(x, w) + L(b)`` whose input ``bias`` is ``b``
    (linear, addmm, convolution): ``f(tx, w, 0) + f(x, tw, 0) + f(0, w, tb)``."""
    def rule(ctx, *tangents):
        from ember.native.factory import zeros_like

        inputs = ctx.saved_inputs
        no_bias = None if inputs[bias] is None else zeros_like(inputs[bias])
        total = None
        for i, t in enumerate(tangents):
            if t is None:
                continue
            arguments = list(inputs)
            arguments[bias] = no_bias
            arguments[i] = t
            if i == bias:  # the product's operands zero: only L(tb) is left
                first = next(j for j in range(len(inputs)) if j != bias)
                arguments[first] = zeros_like(inputs[first])
            term = ctx.op(*arguments, **ctx.attrs)
            total = term if total is None else total + term
        return total
    return rule


def linear_arguments(inputs, tangents):
    """A linear op's arguments for its jvp: each floating tensor's tangent (zeros where
    it has none), other tensors (indices, masks) as they are, Python numbers as 0."""
    from ember.native.factory import zeros_like
    from ember.tensor import Tensor

    arguments = []
    for x, t in zip(inputs, tangents):
        if t is not None:
            arguments.append(t)
        elif isinstance(x, Tensor):
            arguments.append(zeros_like(x) if is_differentiable_array(x._data.dtype) else x)
        elif isinstance(x, bool):
            arguments.append(False)  # a constant operand: its derivative is 0
        elif isinstance(x, (int, float, complex)):
            arguments.append(0)
        else:
            arguments.append(x)
    return arguments


def attach(outputs, tangents, level):
    for out, tangent in zip(outputs, tangents):
        if tangent is None or not is_differentiable_array(out._data.dtype):
            continue
        if tangent.dtype != out.dtype:
            tangent = tangent.to(out.dtype)
        if tangent.shape != out.shape:  # a rule's result that broadcasts to the output
            tangent = tangent.expand(out.shape).contiguous()
        set_tangent(out, level, tangent)


def not_supported(name):
    """PyTorch's error for an op that has no forward-derivative rule."""
    return NotImplementedError(
        f"Trying to use forward AD with {name} that does not support it because it has not been implemented yet.\n"
        "ember has no forward-derivative rule for it: give the op a jvp rule beside its backward "
        "(Op(..., jvp=...) or ember.library.register_jvp).")


# --- custom Functions --------------------------------------------------------------
class hidden:
    """Context manager: no level is visible inside (a custom Function's forward)."""

    def __enter__(self):
        self.visible = state.visible
        state.visible = 0

    def __exit__(self, *exc):
        state.visible = self.visible


def after_function(cls, ctx, inputs, result):
    """``result``, a custom Function's output, with the tangents its ``jvp`` returns
    (PyTorch's ``_wrap_outputs`` with ``jvp_fn`` in custom_function.cpp)."""
    from ember.tensor import Tensor

    visible = state.visible
    if not visible:
        return result
    outputs = result if isinstance(result, tuple) else (result,)
    for position in range(visible - 1, -1, -1):
        level = state.levels[position]
        tangents = [tangent_of(x, level) if isinstance(x, Tensor) else None for x in inputs]
        if all(t is None for t in tangents):
            continue
        state.visible = position
        ctx._in_jvp = True
        try:
            out_tangents = cls.jvp(ctx, *tangents)
        finally:
            ctx._in_jvp = False
            state.visible = visible
        out_tangents = out_tangents if isinstance(out_tangents, tuple) else (out_tangents,)
        if len(out_tangents) != len(outputs):
            raise RuntimeError("Function's jvp returned an invalid number of forward gradients (expected "
                               f"{len(outputs)} but got {len(out_tangents)})")
        for out, tangent in zip(outputs, out_tangents):
            if tangent is None or not isinstance(out, Tensor) or not is_differentiable_array(out._data.dtype):
                continue
            check_tangent(out, tangent, level)
            set_tangent(out, level, tangent)
    return result


# --- in-place writes ---------------------------------------------------------------
def after_write(target, result):
    """After ``result`` was written into ``target`` in place: ``target``'s tangent takes
    ``result``'s, in place, so views of it (and its base) see the change, as PyTorch's
    in-place forward grads do; a target without a tangent gets one (a view of a new zero
    tangent of its base when it is a view)."""
    for level in state.levels[:state.visible]:
        new = tangent_of(result, level)
        old = tangent_of(target, level)
        if old is not None:
            if new is None:
                old._data[...] = 0
            else:
                old._data[...] = new._data if new.dtype == old.dtype else new.to(old.dtype)._data
            old._version_counter[0] += 1
        elif new is not None:
            set_tangent(target, level, _fresh_tangent(target, new, level))


def _fresh_tangent(target, new, level):
    from ember.dispatcher import _wrap

    base = target._base
    if base is None or target._data.base is None:
        return in_layout_of(target, new) if new._base is None else new.clone()
    import numpy as np

    base_tangent = tangent_of(base, level)
    if base_tangent is None:
        base_tangent = _wrap(np.zeros_like(base._data), base._device)
        set_tangent(base, level, base_tangent)
    # the view's elements sit at the same byte offsets in the base's tangent as in the base
    offset = target._data.__array_interface__["data"][0] - base._data.__array_interface__["data"][0]
    array = np.ndarray(target._data.shape, target._data.dtype, buffer=base_tangent._data, offset=offset,
                       strides=target._data.strides)
    array[...] = new._data
    view = _wrap(array, target._device)
    view._base = base_tangent
    view._version_counter = base_tangent._version_counter
    return view
