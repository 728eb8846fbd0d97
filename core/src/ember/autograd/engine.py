"""The backward engine: runs the graph's nodes in dependency order.

PyTorch counterpart: torch/csrc/autograd/engine.cpp (``Engine::execute``,
``compute_dependencies``, ``evaluate_function``, ``validate_outputs``) and
torch/autograd/__init__.py (``backward``, ``grad``) (v2.13).

One pass, no threads: count how many edges lead into each reachable node, then pop
ready nodes from a heap ordered like PyTorch's ready queue (the most recently created
node first; AccumulateGrad at once), call it, and route each input gradient along its
edge into the next node's buffer. The walk is iterative, so a graph thousands of nodes
deep does not touch Python's recursion limit.
"""

import heapq
import warnings

import numpy as np

from ember import dispatcher
from ember.autograd import anomaly_mode
from ember.autograd.grad_mode import grad_state, set_state
from ember.autograd.graph import Node


class GraphRoot(Node):
    """The node the engine starts from: its edges point at the roots, its output is
    the root gradients (PyTorch's ``GraphRoot`` in functions/basic_ops.h)."""

    __slots__ = ("grads",)

    def __init__(self, edges, grads):
        super().__init__(tuple(edges))
        self.grads = grads

    def apply(self, grads):
        return self.grads


def root_edge(tensor):
    """The (node, output_nr) a gradient for ``tensor`` enters the graph through."""
    if tensor.grad_fn is not None:
        return tensor.grad_fn, tensor._output_nr
    if tensor._requires_grad:
        return tensor._get_grad_accumulator(), 0
    return None, 0


def _implicit_grad(out):
    """``ones_like(out)`` for the one-element output of ``backward()`` with no gradient
    given. A 0-d output (every loss) has no layout to preserve, so its array is made
    directly: ``ones_like`` (its layout suggestion, and ``np.ones``'s copy of the fill
    value, 2 us for one element) costs more than the rest of a small graph's root."""
    a = out._data
    if a.ndim:
        from ember.native.factory import ones_like

        return ones_like(out)
    device = out._device  # from_host: onto the output's own device (its index, on a GPU)
    return dispatcher._wrap(device.backend.from_host(np.array(1.0, dtype=a.dtype), device.index), device)


def _make_root_grads(outputs, grad_outputs):
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if not (out._requires_grad or out.grad_fn is not None):
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if g is None:
            if out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not out.dtype.is_floating_point:
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {out.dtype}")
            g = _implicit_grad(out)
        elif g.shape != out.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and "
                               f"output[{i}] has a shape of {out.shape}.")
        grads.append(g)
    return grads


def _dependencies(root):
    """Number of edges into each node reachable from ``root`` (a node's first visit
    is when it enters the dict, so the dict doubles as the visited set)."""
    deps = {}
    stack = [root]
    while stack:
        node = stack.pop()
        for child, _ in node.next_functions:
            if child is None:
                continue
            if child in deps:
                deps[child] += 1
            else:
                deps[child] = 1
                stack.append(child)
    return deps


def _needed(root, targets, run_targets):
    """Nodes that must run so gradients reach ``targets``: those with a path to one.
    Computed from a post-order walk, so children are decided before parents."""
    needed = set(targets) if run_targets else set()
    target_set = set(targets)
    decided = set()
    stack = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if children_done:
            if any(child in needed or child in target_set for child, _ in node.next_functions if child is not None):
                needed.add(node)
            decided.add(node)
            continue
        if node in decided:
            continue
        stack.append((node, True))
        for child, _ in node.next_functions:
            if child is not None and child not in decided:
                stack.append((child, False))
    return needed


def _call_pre_hooks(node, grads):
    if node._tensor_pre_hooks:
        for output_nr, hook in tuple(node._tensor_pre_hooks.values()):
            result = hook(grads[output_nr])
            if result is not None:
                grads[output_nr] = result
    if node._retains_grad:
        for output_nr, tensor_ref in node._retains_grad.items():
            tensor = tensor_ref()
            g = grads[output_nr]
            if tensor is not None and g is not None:
                # Under create_graph the retained gradient stays differentiable (PyTorch's
                # retains_grad hook clones without detaching).
                tensor.grad = g.clone() if tensor.grad is None else tensor.grad + g
    if node._pre_hooks:
        for hook in tuple(node._pre_hooks.values()):
            result = hook(tuple(grads))
            if result is not None:
                grads = list(result)
    return grads


def _validate(node, outputs):
    """Check count, shape and dtype of the gradients a node returned; reduce gradients
    of broadcast inputs to the input's shape, cast to the input's dtype
    (engine.cpp ``validate_outputs``). Returns ``outputs`` itself when all conform."""
    edges = node.next_functions
    if len(outputs) != len(edges):
        raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients "
                           f"(expected {len(edges)}, got {len(outputs)})")
    meta = node.input_meta
    if meta is None:
        return outputs
    conformed = None
    for i, g in enumerate(outputs):
        if g is None or meta[i] is None or g.is_sparse:
            continue
        a = g._data
        if a.shape != meta[i][0] or a.dtype != meta[i][1]:
            if conformed is None:
                conformed = list(outputs)
            conformed[i] = _conform(node, i, g, meta[i])
    return outputs if conformed is None else conformed


def _conform(node, i, g, meta):
    shape, dtype = meta
    if g._data.shape != shape:
        from ember.native.reduction.reduction import sum_to_size

        try:
            g = sum_to_size(g, shape)
        except RuntimeError:
            raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index {i} - "
                               f"got {list(g.shape)} but expected shape compatible with {list(shape)}") from None
    if g._data.dtype != dtype:
        from ember.dtypes import _BY_NUMPY

        if g._data.dtype.kind == "c" and dtype.kind != "c":
            g = g.real  # a real input's share of a complex gradient (NOTE [ Complex gradients ])
        g = g.to(_BY_NUMPY[dtype])  # meta holds NumPy dtypes; ``to`` takes ember's
    return g


def execute(root, retain_graph, create_graph, targets=(), run_targets=True):
    """Run backward from ``root``. Returns the gradients that reached each target
    (node, output_nr), captured before the target itself would run."""
    # imported here, not at the top: ember.native imports autograd
    from ember.native.pointwise.unary import call_quietly

    deps = _dependencies(root)
    needed = None
    if targets:
        needed = _needed(root, [node for node, _ in targets], run_targets)
    captured = {target: None for target in targets}
    prev_mode = grad_state.mode
    # Grad mode is create_graph for the pass (what hooks see in is_grad_enabled(), too).
    set_state(create_graph, grad_state.inference)
    try:
        # Backward formulas meet inf and 0 as forward ops do; keep NumPy's
        # floating-point warnings quiet, as PyTorch is (NOTE [ Floating-point warnings ]
        # in native/unary.py).
        call_quietly(np, _run, root, retain_graph, deps, needed, captured)
    finally:
        set_state(prev_mode, grad_state.inference)
    return captured


def _run(root, retain_graph, deps, needed, captured):
    """The loop of ``execute``: run ready nodes, route their gradients, fill
    ``captured``."""
    target_nodes = {node for node, _ in captured}
    buffers = {}
    ready = [(-root._seq, 0, root)]
    tiebreak = 1
    detect = anomaly_mode.is_anomaly_enabled()
    heappop, heappush = heapq.heappop, heapq.heappush
    # -- the loop: run the next ready node --
    while ready:
        node = heappop(ready)[2]
        grads = buffers.pop(node, None) or [None] * node.num_outputs
        if node._any_hooks:
            grads = _call_pre_hooks(node, grads)
        if target_nodes and node in target_nodes:
            for (target, output_nr) in captured:
                if target is node:
                    captured[target, output_nr] = grads[output_nr]
        if needed is not None and node not in needed:
            continue
        if detect:
            outputs = anomaly_mode.apply_checked(node, grads)
        else:
            outputs = node.apply(grads)
        if not retain_graph:
            node.release()
        edges = node.next_functions
        if not edges:
            continue
        if len(outputs) != len(edges):
            raise RuntimeError(f"function {node.name()} returned an incorrect number "
                               f"of gradients (expected {len(edges)}, "
                               f"got {len(outputs)})")
        meta = node.input_meta
        if node._any_hooks and node._hooks:
            outputs = _validate(node, outputs)
            meta = None  # validated above
            for hook in tuple(node._hooks.values()):
                result = hook(tuple(outputs), tuple(grads))
                if result is not None:
                    outputs = list(result)
        # -- route each gradient along its edge --
        i = -1
        for child, output_nr in edges:
            i += 1
            if child is None:
                continue
            g = outputs[i]
            if g is not None:
                if meta is not None and meta[i] is not None and not g.is_sparse:
                    # _validate, inlined for the common case: shapes and dtypes
                    # agree (a sparse gradient is checked by its maker).
                    a = g._data
                    if a.shape != meta[i][0] or a.dtype != meta[i][1]:
                        g = _conform(node, i, g, meta[i])
                buf = buffers.get(child)
                if buf is None:
                    buf = buffers[child] = [None] * child.num_outputs
                old = buf[output_nr]
                buf[output_nr] = g if old is None else _sum_gradients(old, g)
            remaining = deps[child] - 1
            deps[child] = remaining
            if remaining == 0:
                heappush(ready, (-child._seq, tiebreak, child))
                tiebreak += 1
        # Hold no gradient past its routing: AccumulateGrad may steal a buffer only
        # when the engine's own references are gone (NOTE [ Stealing the incoming
        # gradient ]).
        outputs = g = a = None


def _sum_gradients(old, new):
    """Two gradients of one tensor, added (a sparse one: ember/native/sparse/gradients.py)."""
    if old.is_sparse or new.is_sparse:
        from ember.native.sparse import gradients

        return gradients.add(old, new)
    return old + new


def _sparse_roots(outputs, grad_outputs):
    """Sparse outputs enter backward as their values (NOTE [ Sparse values carry the
    gradient ] in ember/native/sparse/__init__.py)."""
    from ember.native.sparse import gradients

    if not any(gradients.is_sparse_layout(t) for t in outputs):
        return outputs, grad_outputs
    return gradients.values_roots(outputs, grad_outputs)


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, dispatcher.Tensor):
        return (x,)
    return tuple(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             inputs=None):
    """Compute gradients of ``tensors`` and accumulate them into the leaves' ``.grad``.

    Args:
        tensors: tensors to differentiate (usually one scalar loss).
        grad_tensors: the gradient of each tensor; may be None for scalars.
        retain_graph: keep saved values for another backward; defaults to
            ``create_graph``.
        create_graph: record the backward itself, for higher-order gradients.
        inputs: accumulate only into these tensors' ``.grad``.
    """
    tensors = _as_tuple(tensors)
    grad_tensors = _as_tuple(grad_tensors) or (None,) * len(tensors)
    if len(grad_tensors) != len(tensors):
        raise RuntimeError(f"grad_tensors has {len(grad_tensors)} elements but tensors "
                           f"has {len(tensors)}")
    if retain_graph is None:
        retain_graph = create_graph
    tensors, grad_tensors = _sparse_roots(tensors, grad_tensors)
    grads = _make_root_grads(tensors, grad_tensors)
    root = GraphRoot([root_edge(t) for t in tensors], grads)
    if inputs is None:
        execute(root, retain_graph, create_graph)
        return
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    targets = [root_edge(t) for t in inputs]
    for edge in targets:
        if edge[0] is None:
            raise RuntimeError(
                "One of the differentiated Tensors does not require grad")
    for t in inputs:
        # A non-leaf input's .grad is filled by retain_grad, as in PyTorch's
        # run_backward (so a tensor that already retains its gradient gets it once,
        # not twice).
        t.retain_grad()
    execute(root, retain_graph, create_graph, targets, run_targets=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Return the gradients of ``outputs`` with respect to ``inputs`` without touching
    any ``.grad`` (``torch.autograd.grad``). With ``is_grads_batched``, the first
    dimension of every grad_output indexes a batch of backward passes, whose results are
    stacked (torch batches them with vmap; ember runs one pass per row, the same values)."""
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    grad_outputs = _as_tuple(grad_outputs) or (None,) * len(outputs)
    if retain_graph is None:
        retain_graph = create_graph
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
                      "gradient for other parts of the graph, please use torch.autograd.backward.", stacklevel=2)
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs, grad_outputs = _sparse_roots(outputs, grad_outputs)
    sparse_inputs = inputs
    if any(t.is_sparse or t.is_sparse_csr for t in inputs):
        from ember.native.sparse import gradients

        inputs = gradients.as_values(inputs)
    grads = _make_root_grads(outputs, grad_outputs)
    root = GraphRoot([root_edge(t) for t in outputs], grads)
    targets = []
    for t in inputs:
        edge = root_edge(t)
        if edge[0] is None:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        targets.append(edge)
    captured = execute(root, retain_graph, create_graph, targets, run_targets=False)
    result = []
    for i, (t, edge) in enumerate(zip(inputs, targets)):
        g = captured[edge]
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
            if materialize_grads:
                from ember.native.factory import zeros_like

                g = zeros_like(t)
        result.append(g)
    if sparse_inputs is not inputs:
        return gradients.as_sparse_gradients(sparse_inputs, result)
    return tuple(result)


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads):
    from ember.native.shape.shape import stack

    if any(g is None for g in grad_outputs):
        raise RuntimeError("If is_grads_batched=True, grad_outputs must be given for every output")
    count = len(grad_outputs[0])
    rows = [grad(outputs, inputs, tuple(g[i] for g in grad_outputs), retain_graph=retain_graph or i < count - 1,
                 create_graph=create_graph, allow_unused=allow_unused, materialize_grads=materialize_grads)
            for i in range(count)]
    return tuple(None if column[0] is None else stack(column) for column in zip(*rows))
