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

from ember.autograd.accumulate import accumulate_grad
from ember.autograd.grad_mode import grad_state
from ember.autograd.inference import INFERENCE, SAVE_MESSAGE

_sequence = itertools.count()

# AccumulateGrad runs as soon as it is ready, as in PyTorch (its sequence_nr is
# UINT64_MAX there), so that a leaf's .grad is set before unrelated work goes on.
ACCUMULATE_PRIORITY = sys.maxsize


class Node:
    """Base of every graph node. Subclasses implement ``apply(grads) -> tuple``."""

    # Hooks and anomaly traces are rare: class-level defaults until a node sets its own,
    # so creating a node (once per recorded op) sets two attributes only.
    __slots__ = ("next_functions", "_seq", "__weakref__", "__dict__")

    num_outputs = 1
    input_meta = None
    _pre_hooks = None
    _tensor_pre_hooks = None
    _hooks = None
    _retains_grad = None
    _any_hooks = False  # set by every register_* below: the engine checks this one flag
    _anomaly_trace = None

    def __init__(self, next_functions=()):
        self.next_functions = next_functions
        self._seq = next(_sequence)

    @property
    def metadata(self):
        """A dict for the user's own annotations (``grad_fn.metadata`` in PyTorch)."""
        return self.__dict__.setdefault("_metadata", {})

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
        self._any_hooks = True
        return _add_hook(self._hooks, fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before this node; may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
        self._any_hooks = True
        return _add_hook(self._pre_hooks, fn)

    def _register_tensor_hook(self, output_nr, fn):
        # A hook registered on a non-leaf tensor sees the gradient of that output only.
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = {}
        self._any_hooks = True
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
        if grads[0] is None:  # a backward returned None for this leaf: nothing to add
            return ()
        accumulate_grad(self.variable, grads[0])
        if self._post_accumulate_hooks:
            for hook in tuple(self._post_accumulate_hooks.values()):
                hook(self.variable)
        return ()


# ember.dispatcher's tensor constructor, bound by it on import (it imports this module);
# an import statement in unpack cost each saved output it rebuilds about 0.3 us
_wrap = None


class SavedTensor:
    """A tensor kept for backward, with the version it had when saved.

    An op's *output* is saved as its data and version counter, not as the tensor:
    the output owns this node through ``grad_fn``, so keeping the tensor would make a
    reference cycle. ``unpack`` rebuilds the output with this node as its ``grad_fn``,
    which is all a double backward needs (saved_variable.cpp does the same).
    """

    __slots__ = ("tensor", "data", "device", "version_counter", "saved_version", "output_nr", "node", "fw_grads")

    def __init__(self, tensor, is_output=False, node=None, output_nr=0):
        if tensor._version_counter is INFERENCE:  # NOTE [ Inference tensors ] in inference.py
            raise RuntimeError(SAVE_MESSAGE)
        self.fw_grads = None  # an output's tangents, set once forward AD gave them (forward_grad.py)
        self.version_counter = tensor._version_counter
        self.saved_version = tensor._version_counter[0]
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
        out = _wrap(self.data, self.device)
        out._version_counter = self.version_counter
        if self.fw_grads is not None:  # a backward formula's ops see them (forward over reverse)
            out._fw_grads = self.fw_grads
        if grad_state.enabled:
            out._grad_fn = self.node
            out._output_nr = self.output_nr
            out._requires_grad = True
        return out


def _inplace_message(saved, owner):
    if saved.tensor is not None:
        return modified_message(saved.tensor, saved.version_counter[0], saved.saved_version)
    return _modified_text(saved.data, saved.device, owner, saved.output_nr,
                          saved.version_counter[0], saved.saved_version)


def modified_message(tensor, current, expected):
    """PyTorch's error for a saved tensor changed in place before backward."""
    return _modified_text(tensor._data, tensor._device, tensor.grad_fn, tensor._output_nr, current, expected)


def _modified_text(data, device, node, output_nr, current, expected):
    # PyTorch's wording: the legacy type name and shape, whose output the tensor is
    # (the op's short name, `Mul` for MulBackward0; nothing for a leaf), both versions.
    from ember import dtypes
    from ember.legacy_tensor_types import LEGACY_NAMES

    prefix = "ember." if device.type == "cpu" else f"ember.{device.type}."
    type_name = prefix + LEGACY_NAMES[dtypes._BY_NUMPY[data.dtype].name]
    origin = f", which is output {output_nr} of {_short_name(node)}," if node is not None else ""
    return ("one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [{type_name} {list(data.shape)}]{origin} is at version "
            f"{current}; expected version {expected} instead. Hint: "
            "enable anomaly detection to find the operation that failed to compute its gradient, "
            "with ember.autograd.set_detect_anomaly(True, check_nan=False).")


def _short_name(node):
    # MulBackward0 -> Mul, AddOneBackward (a custom Function) -> AddOne.
    name = node.name()
    stem = name.rstrip("0123456789")
    return stem[:-len("Backward")] if stem.endswith("Backward") and stem != "Backward" else name


_FREED = ("Trying to backward through the graph a second time (or directly access saved "
          "tensors after they have already been freed). Saved intermediate values of the graph "
          "are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if "
          "you need to backward through the graph a second time or if you need to access saved "
          "tensors after calling backward.")


RELEASED = ("released",)  # OpNode._saved after backward freed it

# NOTE [ Complex gradients ]
# For a real loss L of a complex z = x + iy, PyTorch's z.grad is dL/dx + i dL/dy (twice
# the conjugate Wirtinger derivative dL/dz*), and the gradient a node passes back is
# always in that convention. For an op f that is holomorphic with real coefficients
# (exp, mul, matmul, sum, ...), the chain rule becomes grad_in = grad_out * conj(f'(z)),
# where the real formula reads grad_out * f'(x). Since conj(f'(z)) = f'(conj z), every
# such formula is right for complex inputs once conjugated around:
#     grad_in = conj(formula(conj(grad_out)))
# so the formulas written for real tensors stay as they are, and OpNode.apply wraps them
# in conjugations when a complex gradient arrives. An op that is not holomorphic (abs,
# angle, real, imag, conj, view_as_real, the FFTs: anything not an analytic function
# of z alone) writes its formula for complex itself and marks it ``complex_formula``.
# A real input's gradient is then the real part of what reaches it (engine._conform),
# as torch's validate_outputs takes ``at::real``.
COMPLEX_KINDS = frozenset("c")


def complex_formula(formula):
    """Mark a backward formula as written for complex gradients itself (NOTE [ Complex
    gradients ]): OpNode.apply then calls it as it is."""
    formula.complex_formula = True
    return formula


def _is_complex_formula(formula):
    return getattr(formula, "complex_formula", False)


def _conjugated_backward(node, grads):
    """``conj(formula(conj(grads)))``: a real-coefficient formula made right for complex
    gradients (NOTE [ Complex gradients ])."""
    conjugated = [g if g is None else g.conj() for g in grads]
    return tuple(g if g is None else g.conj() for g in node.op.backward(node, *conjugated))


class OpNode(Node):
    """The node a registered operator records; its ``op`` holds the backward formula.

    The formula is called as ``op.backward(ctx, *grads)`` with this node as ``ctx``:
    ``ctx.saved_inputs``, ``ctx.saved_outputs``, ``ctx.attrs`` and
    ``ctx.needs_input_grad`` are what it may use.

    ``_saved`` is None (the op saves nothing), RELEASED, or
    ``(inputs, versions, saved_outputs)``: the inputs as passed (tensors kept as they
    are, scalars too), each tensor's version when saved, and ``SavedTensor`` records of
    the outputs.
    """

    __slots__ = ("op", "attrs", "input_meta", "needs_input_grad", "num_outputs", "_saved")

    def __init__(self, op, next_functions, attrs, input_meta, needs_input_grad, num_outputs=1):
        self.next_functions = next_functions
        self._seq = next(_sequence)
        self.num_outputs = num_outputs  # as the kernel returned: unbind's varies per call
        self.op = op
        self.attrs = attrs
        self.input_meta = input_meta
        self.needs_input_grad = needs_input_grad  # one bool per input
        self._saved = None


    def name(self):
        return self.op.backward_name

    @property
    def saved_inputs(self):
        """The op's inputs (tensors and scalars, in call order), checked for in-place
        changes."""
        saved = self._saved
        if saved is RELEASED:
            raise RuntimeError(_FREED)
        inputs, versions, _ = saved
        for x, version in zip(inputs, versions):
            if version is not None and x._version_counter[0] != version:
                raise RuntimeError(modified_message(x, x._version_counter[0], version))
        return inputs

    @property
    def saved_outputs(self):
        """The op's outputs as tensors whose grad_fn is this node."""
        saved = self._saved
        if saved is RELEASED:
            raise RuntimeError(_FREED)
        return tuple(x.unpack(self) for x in saved[2])

    def saved_outputs_from(self, start):
        """``saved_outputs[start:]``, the outputs before ``start`` neither unpacked nor
        checked: a formula that reads only the later ones (cross-entropy's kept softmax
        parts) leaves the first free to change in place, as torch's saves only what its
        formula reads."""
        saved = self._saved
        if saved is RELEASED:
            raise RuntimeError(_FREED)
        outputs = []
        for x in saved[2][start:]:
            outputs.append(x.unpack(self))
        return tuple(outputs)

    def apply(self, grads):
        # Raise even when the formula reads nothing it saved (PyTorch's IndexBackward0).
        if self._saved is RELEASED:
            raise RuntimeError(_FREED)
        for g in grads:
            if g is not None:
                complex_grad = g._data.dtype.kind in COMPLEX_KINDS
                if complex_grad and not _is_complex_formula(self.op.backward):
                    return _conjugated_backward(self, grads)
                return self.op.backward(self, *grads)
        # No gradient reached any output (an upstream backward returned None): the
        # formulas need not handle that case, the answer is None for every input.
        return (None,) * len(self.next_functions)

    def release(self):
        if self._saved is not None:
            self._saved = RELEASED
