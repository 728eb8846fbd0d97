"""Higher-order helpers over ``autograd.grad``: vjp, jvp, jacobian, hessian, vhp, hvp.

PyTorch counterpart: torch/autograd/functional.py (v2.13).

Each takes a function of tensors and the point to differentiate it at, and returns the
derivative as plain tensors (detached unless ``create_graph=True``). They are built from
reverse mode, as torch's are (but for ``jacobian(strategy="forward-mode")``):

- ``vjp`` is one backward pass, ``v^T J``;
- ``jvp`` uses the double-backward trick: ``g -> J^T g`` is linear in ``g``, so its own
  vjp with ``v`` is ``J v``; it costs two backward passes but no forward-mode AD;
- ``jacobian`` runs one backward pass per output element (reverse mode, row by row);
- ``hessian`` is the jacobian of the gradient; ``vhp`` and ``hvp`` are a gradient with
  ``create_graph=True`` followed by one more vjp (and, for hvp, the double-backward trick).

Where ember differs: ``vectorize=True`` (torch batches the rows with vmap) gives the same
values computed row by row; ``strategy="forward-mode"`` runs ``ember.func.jvp`` once
per input element (torch vmaps those columns).
"""

from ember.autograd.engine import grad as _grad
from ember.autograd.grad_mode import enable_grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


# --- argument handling ------------------------------------------------------------------
def _as_tuple(value, what, fn_name):
    """``(was_a_tuple, tuple_of_tensors)``, with torch's TypeError for anything else."""
    from ember.tensor import Tensor

    if isinstance(value, Tensor):
        return False, (value,)
    if not isinstance(value, tuple):
        raise TypeError(f"The {what} given to {fn_name} must be either a Tensor or a tuple of Tensors but the"
                        f" given {what} has type {type(value)}.")
    for i, item in enumerate(value):
        if not isinstance(item, Tensor):
            raise TypeError(f"The {what} given to {fn_name} must be either a Tensor or a tuple of Tensors but the"
                            f" value at index {i} has type {type(item)}.")
    return True, tuple(value)


def _unpack(result, was_tuple):
    """Undo ``_as_tuple``: one level (``was_tuple`` a bool) or two (a pair of bools, the
    outer level first, as in a jacobian's rows per output and columns per input)."""
    if isinstance(was_tuple, bool):
        return result if was_tuple else result[0]
    outer, inner = was_tuple
    if not inner:
        result = tuple(row[0] for row in result)
    return result if outer else result[0]


def _differentiable_copies(inputs, create_graph):
    """The inputs as fresh leaves (or, under ``create_graph``, as views that keep their
    history), so the user's tensors gain no ``.grad`` and the graph starts here."""
    if create_graph:
        return tuple(x.view_as(x) if x.requires_grad else x.detach().requires_grad_(True) for x in inputs)
    return tuple(x.detach().requires_grad_(True) for x in inputs)


def _finish(tensors, create_graph):
    """Results as the user gets them: detached unless the graph is to be kept."""
    if create_graph:
        return tensors
    return tuple(t.detach() if t is not None else None for t in tensors)


def _check_v(v, refs, refs_were_tuple):
    if len(v) != len(refs):
        if refs_were_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(refs)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (vi, ref) in enumerate(zip(v, refs)):
        if vi.shape != ref.shape:
            prefix = f"Entry {i} in " if refs_were_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {ref.size()} but got {vi.size()}.")


# strict mode's complaint about a derivative that is None (first) or does not require
# grad (second), by what it is the derivative of
_STRICT = {
    "outputs": (None, "Output {i} of the user-provided function does not require gradients. The outputs must be "
                      "computed in a differentiable manner from the input when running in strict mode."),
    "grad_inputs": ("The output of the user-provided function is independent of input {i}. This is not allowed "
                    "in strict mode.",
                    "The gradient with respect to input {i} is independent of the inputs of the user-provided "
                    "function. This is not allowed in strict mode."),
    "jacobian": (None, "While computing the hessian, found that the jacobian of the user-provided function with "
                       "respect to input {i} is independent of the input. This is not allowed in strict mode. You "
                       "should ensure that your function is twice differentiable and that the jacobian depends on "
                       "the inputs (this would be violated by a linear function for example)."),
    "hessian": (None, "The hessian of the user-provided function with respect to input {i} is independent of the "
                      "input. This is not allowed in strict mode. You should ensure that your function is thrice "
                      "differentiable and that the hessian depends on the inputs."),
}


def _check_strict(tensors, kind, strict):
    if not strict:
        return
    when_none, when_constant = _STRICT[kind]
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(when_none.format(i=i))
        if not t.requires_grad:
            raise RuntimeError(when_constant.format(i=i))


def _grads(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """``autograd.grad`` with unused inputs as None, over the outputs that exist and
    require grad (none such gives all None, not an error)."""
    grad_outputs = (None,) * len(outputs) if grad_outputs is None else grad_outputs
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _grad([o for o, _ in pairs], inputs, [g for _, g in pairs], retain_graph=retain_graph,
                 create_graph=create_graph, allow_unused=True)


# what an input the derivative does not depend on means at each stage, in strict mode
_INDEPENDENT = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in "
            "strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when "
                  "using the double backward trick to compute forward mode gradients. This is not allowed in "
                  "strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed "
                   "in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the "
                         "grad_jacobian. This is not allowed in strict mode as it prevents from using the double "
                         "backward trick to replace forward mode AD.",
}


def _zeros_for_unused(grads, refs, strict, create_graph, stage):
    """None gradients as zeros shaped like ``refs`` (an error in strict mode)."""
    from ember.native.factory import zeros_like

    out = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(_INDEPENDENT[stage].format(i=i))
            g = zeros_like(ref)
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is "
                               "not allowed in strict mode when create_graph=True.")
        out.append(g)
    return tuple(out)


def _single_element(outputs, fn_name):
    if len(outputs) != 1:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single "
                           f"element")


# --- the products -------------------------------------------------------------------------
def _start(func, inputs, v, fn_name, create_graph, strict, v_matches="inputs"):
    """What every product does first: the inputs as fresh leaves, ``v`` checked against
    the inputs or the outputs, the outputs computed (and checked in strict mode)."""
    inputs_were_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _differentiable_copies(inputs, create_graph)
    outputs_were_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn_name)
    _check_strict(outputs, "outputs", strict)
    refs, refs_were_tuple = (inputs, inputs_were_tuple) if v_matches == "inputs" else (outputs, outputs_were_tuple)
    if v is None:
        if len(refs) != 1 or refs[0].numel() != 1:
            if v_matches == "inputs":
                raise RuntimeError("The vector v can only be None if the input to the user-provided function is a "
                                   "single Tensor with a single element.")
            raise RuntimeError("The vector v can only be None if the user-provided function returns a single "
                               "Tensor with a single element.")
    else:
        v = _as_tuple(v, "v", fn_name)[1]
        _check_v(v, refs, refs_were_tuple)
    return inputs_were_tuple, inputs, v, outputs_were_tuple, outputs


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T J)``: the vector-Jacobian product at ``inputs``.

    >>> import ember
    >>> out, vjp = ember.autograd.functional.vjp(lambda x: x ** 2, ember.tensor([1.0, 2.0]),
    ...                                          ember.tensor([1.0, 1.0]))
    >>> vjp
    tensor([2., 4.])
    """
    with enable_grad():
        inputs_were_tuple, inputs, v, outputs_were_tuple, outputs = _start(
            func, inputs, v, "vjp", create_graph, strict, v_matches="outputs")
        grads = _grads(outputs, inputs, v, create_graph=create_graph)
        grads = _zeros_for_unused(grads, inputs, strict, create_graph, "back")
    return (_unpack(_finish(outputs, create_graph), outputs_were_tuple),
            _unpack(_finish(grads, create_graph), inputs_were_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)``: the Jacobian-vector product, by the double-backward trick.

    >>> import ember
    >>> out, jvp = ember.autograd.functional.jvp(lambda x: x ** 2, ember.tensor([1.0, 2.0]),
    ...                                          ember.tensor([1.0, 0.0]))
    >>> jvp
    tensor([2., 0.])
    """
    from ember.native.factory import zeros_like

    with enable_grad():
        inputs_were_tuple, inputs, v, outputs_were_tuple, outputs = _start(
            func, inputs, v, "jvp", create_graph, strict)
        # u -> J^T u is linear in u; its vector-Jacobian product with v is J v
        dummies = tuple(zeros_like(out).requires_grad_(True) for out in outputs)
        transposed = _grads(outputs, inputs, dummies, create_graph=True)
        _check_strict(transposed, "grad_inputs", strict)
        grads = _grads(transposed, dummies, v, create_graph=create_graph)
        grads = _zeros_for_unused(grads, outputs, strict, create_graph,
                                  "back_trick")
    return (_unpack(_finish(outputs, create_graph), outputs_were_tuple),
            _unpack(_finish(grads, create_graph), outputs_were_tuple))


def _forward_jacobian(func, inputs, strict, vectorize):
    """The Jacobian in forward mode, one ``ember.func.jvp`` per input element (torch
    batches those columns with vmap, and asks for ``vectorize=True``, as ember does)."""
    from ember.func import jvp
    from ember.native.factory import zeros_like
    from ember.native.shape.shape import stack

    if strict:
        raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are '
                           'not supported together (yet). Please either set `strict=False` or '
                           '`strategy="reverse-mode"`.')
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                  "only implemented for `vectorize=True`.")
    inputs_were_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    shape = {}

    def as_tuple(*args):
        shape["tuple"], outputs = _as_tuple(func(*args), "outputs", "jacobian")
        return outputs

    columns = []  # per input: the outputs' tangents, one tuple per element of the input
    for j, x in enumerate(inputs):
        columns.append([])
        for k in range(x.numel()):
            basis = [zeros_like(y) for y in inputs]
            basis[j] = basis[j].reshape(-1).index_fill(0, _tensor_index(k, x), 1.0).reshape(x.shape)
            outputs, tangents = jvp(as_tuple, inputs, tuple(basis))
            columns[j].append(tangents)
    if "tuple" not in shape:  # every input empty
        outputs = as_tuple(*inputs)
    result = tuple(tuple(stack([c[i] for c in columns[j]], -1).reshape(*out.shape, *x.shape) if columns[j]
                         else out.new_zeros(*out.shape, *x.shape) for j, x in enumerate(inputs))
                   for i, out in enumerate(outputs))
    return _unpack(result, (shape["tuple"], inputs_were_tuple))


def _tensor_index(k, like):
    from ember.native.factory import tensor

    return tensor([k], device=like.device)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: for output ``i`` and input ``j`` a tensor
    of shape ``out_i.shape + in_j.shape``, nested as torch nests it (a tensor for one
    output and one input).

    >>> import ember
    >>> ember.autograd.functional.jacobian(lambda x: x ** 2, ember.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    from ember.native.factory import zeros_like
    from ember.native.shape.shape import stack

    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and '
                                      '`strategy="forward-mode"` are not supported together (yet). Please either '
                                      'set `create_graph=False` or `strategy="reverse-mode"`.')
        return _forward_jacobian(func, inputs, strict, vectorize)
    if vectorize and strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                           "supported together. Please either set `strict=False` or `vectorize=False`.")
    with enable_grad():
        inputs_were_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _differentiable_copies(inputs, create_graph)
        outputs_were_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function",
                                                "jacobian")
        _check_strict(outputs, "outputs", strict)
        rows_per_output = []
        for i, out in enumerate(outputs):
            columns = [[] for _ in inputs]
            flat = out.reshape(-1)
            for k in range(out.numel()):  # one backward pass per output element
                row = _grads((flat[k],), inputs, create_graph=create_graph, retain_graph=True)
                for j, (g, x) in enumerate(zip(row, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is independent of "
                                               f"input {j}. This is not allowed in strict mode.")
                        g = zeros_like(x)
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError(f"The jacobian of the user-provided function is independent of input "
                                           f"{i}. This is not allowed in strict mode when create_graph=True.")
                    columns[j].append(g)
            rows_per_output.append(tuple(stack(col).view(*out.shape, *x.shape) for col, x in zip(columns, inputs)))
        result = tuple(_finish(row, create_graph) for row in rows_per_output)
    return _unpack(result, (outputs_were_tuple, inputs_were_tuple))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar ``func`` at ``inputs``: the jacobian of its gradient.

    >>> import ember
    >>> ember.autograd.functional.hessian(lambda x: (x ** 3).sum(), ember.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    inputs_were_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")

    def scalar(*xs):
        outputs = _as_tuple(func(*xs), "outputs of the user-provided function", "hessian")[1]
        _single_element(outputs, "hessian")
        return outputs[0].squeeze()

    def gradient(*xs):
        grads = jacobian(scalar, xs, create_graph=True)
        _check_strict(grads, "jacobian", strict)
        return grads

    result = jacobian(gradient, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                      strategy=outer_jacobian_strategy)
    return _unpack(result, (inputs_were_tuple, inputs_were_tuple))


def _gradient_with_graph(func, inputs, v, fn_name, strict):
    """What vhp and hvp share: the inputs, v, the single output and its gradient, with
    the gradient's own graph kept."""
    inputs_were_tuple, inputs, v, _, outputs = _start(func, inputs, v, fn_name, True, strict)
    _single_element(outputs, fn_name)
    gradient = _grads(outputs, inputs, create_graph=True)
    _check_strict(gradient, "jacobian", strict)
    return inputs_were_tuple, inputs, v, outputs[0], gradient


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T H)`` for a scalar ``func``.

    >>> import ember
    >>> out, vhp = ember.autograd.functional.vhp(lambda x: (x ** 3).sum(), ember.tensor([1.0, 2.0]),
    ...                                          ember.tensor([1.0, 1.0]))
    >>> vhp
    tensor([ 6., 12.])
    """
    with enable_grad():
        inputs_were_tuple, inputs, v, output, gradient = _gradient_with_graph(func, inputs, v, "vhp", strict)
        grads = _grads(gradient, inputs, v, create_graph=create_graph)
        grads = _zeros_for_unused(grads, inputs, strict, create_graph, "double_back")
    return _finish((output,), create_graph)[0], _unpack(_finish(grads, create_graph), inputs_were_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)`` for a scalar ``func``, by the double-backward trick (for a
    twice-differentiable function H is symmetric and this equals ``vhp``).

    >>> import ember
    >>> out, hvp = ember.autograd.functional.hvp(lambda x: (x ** 3).sum(), ember.tensor([1.0, 2.0]),
    ...                                          ember.tensor([1.0, 0.0]))
    >>> hvp
    tensor([6., 0.])
    """
    from ember.native.factory import zeros_like

    with enable_grad():
        inputs_were_tuple, inputs, v, output, gradient = _gradient_with_graph(func, inputs, v, "hvp", strict)
        # w -> H^T w is linear in w; its vector-Jacobian product with v is H v
        dummies = tuple(zeros_like(x).requires_grad_(True) for x in inputs)
        transposed = _grads(gradient, inputs, dummies, create_graph=True)
        _check_strict(transposed, "hessian", strict)
        grads = _grads(transposed, dummies, v, create_graph=create_graph)
        grads = _zeros_for_unused(grads, inputs, strict, create_graph, "double_back_trick")
    return _finish((output,), create_graph)[0], _unpack(_finish(grads, create_graph), inputs_were_tuple)
