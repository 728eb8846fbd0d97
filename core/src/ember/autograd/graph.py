"""The autograd graph: ``Node`` (a ``grad_fn``), ``AccumulateGrad`` for leaves, and
``OpNode``, the node every registered operator records.

PyTorch counterpart: torch/csrc/autograd/function.h (``Node``, ``next_edges``,
``sequence_nr``), torch/csrc/autograd/functions/accumulate_grad.h and
torch/csrc/autograd/saved_variable.cpp (saved tensors and their version check) (v2.13).

A node maps the gradients of its outputs to the gradients of its inputs. Its
``next_functions`` are ``(node, output_nr)`` pairs, one per input: the ``grad_fn`` of
a non-leaf input, the ``AccumulateGrad`` of a leaf that requires grad, ``(None, 0)``
for anything else (a constant, a Python scalar).
"""

import itertools
import sys

from ember.autograd.grad_mode import grad_state

_sequence = itertools.count()

# AccumulateGrad runs as soon as it is ready, as in PyTorch (its sequence_nr is
# UINT64_MAX there), so that a leaf's .grad is set before unrelated work goes on.
ACCUMULATE_PRIORITY = sys.maxsize


class Node:
    """Base of every graph node. Subclasses implement ``apply(grads) -> tuple``."""

    __slots__ = ("next_functions", "_seq", "_pre_hooks", "_tensor_pre_hooks", "_hooks",
                 "_retains_grad", "_anomaly_trace", "metadata", "__weakref__")

    num_outputs = 1

    def __init__(self, next_functions=()):
        self.next_functions = next_functions
        self._seq = next(_sequence)
        self._pre_hooks = None
        self._tensor_pre_hooks = None
        self._hooks = None
        self._retains_grad = None
        self._anomaly_trace = None

    def name(self):
        return type(self).__name__

    def apply(self, grads):
        raise NotImplementedError

    def __call__(self, *grads):
        return self.apply(list(grads))

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after this node; may return new grad_inputs."""
        if self._hooks is None:
            self._hooks = {}
        return _add_hook(self._hooks, fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before this node; may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
        return _add_hook(self._pre_hooks, fn)

    def _register_tensor_hook(self, output_nr, fn):
        # A hook registered on a non-leaf tensor sees the gradient of that output only.
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = {}
        return _add_hook(self._tensor_pre_hooks, (output_nr, fn))

    def release(self):
        """Free what backward needs; a second backward then raises."""

    def __repr__(self):
        return f"<{self.name()} object at {hex(id(self))}>"


class RemovableHandle:
    """Returned by every ``register_*hook``; ``remove()`` takes the hook out."""

    _ids = itertools.count()

    def __init__(self, hooks):
        self.hooks = hooks
        self.id = next(RemovableHandle._ids)

    def remove(self):
        self.hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _add_hook(hooks, fn):
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


class AccumulateGrad(Node):
    """The node behind a leaf tensor that requires grad: it adds into ``leaf.grad``."""

    __slots__ = ("variable", "_post_accumulate_hooks")

    def __init__(self, variable):
        super().__init__(())
        self._seq = ACCUMULATE_PRIORITY
        self.variable = variable
        self._post_accumulate_hooks = None

    def apply(self, grads):
        from ember.autograd.accumulate import accumulate_grad

        accumulate_grad(self.variable, grads[0])
        if self._post_accumulate_hooks:
            for hook in tuple(self._post_accumulate_hooks.values()):
                hook(self.variable)
        return ()


class SavedTensor:
    """A tensor kept for backward, with the version it had when saved.

    An op's *output* is saved as its data and version counter, not as the tensor:
    the output owns this node through ``grad_fn``, so keeping the tensor would make a
    reference cycle. ``unpack`` rebuilds the output with this node as its ``grad_fn``,
    which is all a double backward needs (saved_variable.cpp does the same).
    """

    __slots__ = ("tensor", "data", "device", "version_counter", "saved_version", "output_nr", "node")

    def __init__(self, tensor, is_output=False, node=None, output_nr=0):
        self.version_counter = tensor._version
        self.saved_version = tensor._version[0]
        if is_output:
            self.tensor = None
            self.data = tensor._data
            self.device = tensor._device
            self.node = node
            self.output_nr = output_nr
        else:
            self.tensor = tensor
            self.node = None

    def unpack(self, owner):
        if self.version_counter[0] != self.saved_version:
            raise RuntimeError(_inplace_message(self, owner))
        if self.tensor is not None:
            return self.tensor
        from ember.tensor import _make_tensor

        out = _make_tensor(self.data, self.device)
        out._version = self.version_counter
        if grad_state.enabled:
            out.grad_fn = self.node
            out._output_nr = self.output_nr
            out._requires_grad = True
        return out


def _inplace_message(saved, owner):
    if saved.tensor is not None:
        t = saved.tensor
        shape, dtype = list(t.shape), t.dtype
        origin = f"output {t._output_nr} of {t.grad_fn.name()}" if t.grad_fn is not None else "a leaf"
    else:
        shape, dtype = list(saved.data.shape), saved.data.dtype
        origin = f"output {saved.output_nr} of {owner.name()}"
    return ("one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [{dtype} {shape}], which is {origin}, is at version "
            f"{saved.version_counter[0]}; expected version {saved.saved_version} instead. Hint: "
            "enable anomaly detection to find the operation that failed to compute its gradient, "
            "with ember.autograd.set_detect_anomaly(True).")


_FREED = ("Trying to backward through the graph a second time (or directly access saved "
          "tensors after they have already been freed). Saved intermediate values of the graph "
          "are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if "
          "you need to backward through the graph a second time or if you need to access saved "
          "tensors after calling backward.")


class OpNode(Node):
    """The node a registered operator records; its ``op`` holds the backward formula.

    The formula is called as ``op.backward(ctx, *grads)`` with this node as ``ctx``:
    ``ctx.saved_inputs``, ``ctx.saved_outputs``, ``ctx.attrs`` and
    ``ctx.needs_input_grad`` are what it may use.
    """

    __slots__ = ("op", "attrs", "needs_input_grad", "input_meta", "_saved", "_released")

    def __init__(self, op, next_functions, attrs, needs_input_grad, input_meta):
        self.next_functions = next_functions
        self._seq = next(_sequence)
        self._pre_hooks = None
        self._tensor_pre_hooks = None
        self._hooks = None
        self._retains_grad = None
        self._anomaly_trace = None
        self.op = op
        self.attrs = attrs
        self.needs_input_grad = needs_input_grad
        self.input_meta = input_meta
        self._saved = None
        self._released = False

    @property
    def num_outputs(self):
        return self.op.num_outputs

    def name(self):
        return self.op.backward_name

    @property
    def saved_inputs(self):
        """The op's inputs (tensors and scalars, in call order), checked for in-place changes."""
        if self._released:
            raise RuntimeError(_FREED)
        inputs, _ = self._saved
        return tuple(x.unpack(self) if x.__class__ is SavedTensor else x for x in inputs)

    @property
    def saved_outputs(self):
        """The op's outputs as tensors whose grad_fn is this node."""
        if self._released:
            raise RuntimeError(_FREED)
        _, outputs = self._saved
        return tuple(x.unpack(self) for x in outputs)

    def apply(self, grads):
        return self.op.backward(self, *grads)

    def release(self):
        self._saved = None
        self._released = True
