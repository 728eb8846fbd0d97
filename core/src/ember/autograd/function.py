"""``ember.autograd.Function``: user-defined ops with a hand-written backward.

PyTorch counterpart: torch/autograd/function.py (``Function``, ``FunctionCtx``,
``once_differentiable``) and torch/csrc/autograd/python_function.cpp (the node a
Function call records) (v2.13).

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y
"""

from ember.autograd import anomaly_mode, forward_grad
from ember.autograd.grad_mode import grad_state, no_grad
from ember.autograd.graph import Node, SavedTensor
from ember.autograd.views import mark_views


class FunctionCtx:
    """What ``forward`` may leave for ``backward``: saved tensors, flags, attributes."""

    def save_for_backward(self, *tensors):
        self._to_save = tensors

    def save_for_forward(self, *tensors):
        """Keep ``tensors`` for ``jvp``, which reads them as ``ctx.saved_tensors``."""
        self._for_forward = tensors

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable = {id(t) for t in tensors}

    def mark_dirty(self, *tensors):
        self._dirty = {id(t) for t in tensors}

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)


class BackwardFunction(Node, FunctionCtx):
    """The node a ``Function.apply`` call records; it is also the ``ctx``."""

    __slots__ = ("_cls", "_saved", "_to_save", "_non_differentiable", "_dirty", "needs_input_grad",
                 "materialize_grads", "input_meta", "_num_outputs", "_released", "_for_forward", "_in_jvp")

    def __init__(self, cls, next_functions, needs_input_grad, input_meta):
        super().__init__(next_functions)
        self._cls = cls
        self._saved = None
        self._to_save = ()
        self._non_differentiable = ()
        self._dirty = ()
        self.needs_input_grad = needs_input_grad
        self.materialize_grads = True
        self.input_meta = input_meta
        self._num_outputs = 1
        self._released = False
        self._for_forward = ()
        self._in_jvp = False

    @property
    def num_outputs(self):
        return self._num_outputs

    def name(self):
        return self._cls.__name__ + "Backward"

    def __repr__(self):
        # Python's own repr, module included, as torch prints a custom Function's node
        # (``<torch.autograd.function.CubeBackward object at ...>``: FunctionMeta makes
        # the class in torch/autograd/function.py); built-in nodes print bare names.
        return object.__repr__(self)

    @property
    def saved_tensors(self):
        if self._in_jvp:  # what save_for_forward kept
            return tuple(self._for_forward)
        if self._released:
            from ember.autograd.graph import _FREED

            raise RuntimeError(_FREED)
        return tuple(s.unpack(self) if isinstance(s, SavedTensor) else s for s in self._saved or ())

    def release(self):
        self._saved = None
        self._released = True

    def apply(self, grads):
        if self.materialize_grads:
            grads = [g if g is not None else _zeros_like_output(self, i) for i, g in enumerate(grads)]
        result = self._cls.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n = len(self.next_functions)
        if len(result) > n and all(r is None for r in result[n:]):
            result = result[:n]
        if len(result) != n:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients "
                               f"(expected {n}, got {len(result)})")
        return result


def _zeros_like_output(node, i):
    from ember.native.factory import zeros

    shape, np_dtype, device = node._output_meta[i]
    from ember import dtypes

    return zeros(shape, dtype=dtypes.from_numpy_dtype(np_dtype), device=device)


class Function:
    """Base class for ops with a custom ``forward(ctx, ...)`` and ``backward(ctx, *grads)``.

    Each subclass gets its own node class, ``<Name>Backward``, made in this module, so
    that ``type(y.grad_fn).__name__`` and ``repr(y.grad_fn)`` read as in PyTorch.
    """

    _backward_cls = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._backward_cls = type(cls.__name__ + "Backward", (BackwardFunction,), {"__slots__": ()})

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @staticmethod
    def jvp(ctx, *tangents):
        """Overridden, forward AD calls it with one tangent per input (None where an input
        has none) and it returns the outputs' tangents (ember/autograd/forward_grad.py)."""
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it "
                                  "with forward mode AD.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Overridden, it fills ``ctx`` from the inputs and output, and ``forward`` takes
        no ``ctx`` (torch's style since 2.0, which functorch transforms need)."""
        raise NotImplementedError("setup_context is not implemented.")

    @classmethod
    def apply(cls, *args, **kwargs):
        from ember.tensor import Tensor

        edges, needs, meta = [], [], []
        any_grad = False
        for a in args:
            if isinstance(a, Tensor) and a._requires_grad:
                fn = a.grad_fn
                if fn is not None:
                    edges.append((fn, a._output_nr))
                else:
                    edges.append((a._get_grad_accumulator(), 0))
                needs.append(True)
                meta.append((a._data.shape, a._data.dtype))
                any_grad = True
            else:
                edges.append((None, 0))
                needs.append(False)
                meta.append(None)
        # -- run forward, then connect the outputs --
        record = any_grad and grad_state.enabled
        node_class = cls._backward_cls or BackwardFunction
        ctx = node_class(cls, tuple(edges), tuple(needs), tuple(meta))
        with no_grad(), forward_grad.hidden():  # the forward's own ops make no tangents
            if cls.setup_context is Function.setup_context:
                outputs = cls.forward(ctx, *args, **kwargs)
            else:  # forward without ctx; setup_context sees what it needs
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
        if not record:
            return forward_grad.after_function(cls, ctx, args, outputs)
        if ctx._dirty:
            _check_dirty(ctx, args)
        if anomaly_mode._state.enabled:
            anomaly_mode.record_creation(ctx)
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        ctx._num_outputs = len(outs)
        ctx._output_meta = [(o.shape, o._data.dtype, o._device) if isinstance(o, Tensor)
                            else None for o in outs]
        wrapped = []
        for i, o in enumerate(outs):
            if (isinstance(o, Tensor) and id(o) not in ctx._non_differentiable
                    and o.is_floating_point()):
                if id(o) in ctx._dirty:
                    # the history changes: PyTorch bumps the version once more
                    o._version_counter[0] += 1
                elif any(o is a for a in args):
                    # An input returned as it is becomes a new tensor, a view of that
                    # input, as in PyTorch.
                    base, o = o, o.detach()
                    mark_views(None, base, (o,))
                o.grad_fn = ctx
                o._output_nr = i
                o._requires_grad = True
            wrapped.append(o)
        ctx._saved = tuple(_save(t, wrapped, ctx) for t in ctx._to_save)
        result = wrapped[0] if single else tuple(wrapped)
        return forward_grad.after_function(cls, ctx, args, result)


def _check_dirty(ctx, args):
    # Rewriting a leaf's history in place would cut it off from its .grad.
    from ember.tensor import Tensor

    for a in args:
        if isinstance(a, Tensor) and id(a) in ctx._dirty and a._requires_grad and a.grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")


def _save(t, outputs, ctx):
    from ember.tensor import Tensor

    if not isinstance(t, Tensor):
        return t
    for i, o in enumerate(outputs):
        if o is t:
            return SavedTensor(t, is_output=True, node=ctx, output_nr=i)
    return SavedTensor(t)


def once_differentiable(fn):
    """Mark a backward as not differentiable itself (runs it under no_grad)."""
    def wrapper(ctx, *grads):
        with no_grad():
            return fn(ctx, *grads)
    wrapper.__wrapped__ = fn
    return wrapper


class _LambdaNode(Node):
    """A node whose backward is a closure (used for device transfers)."""

    __slots__ = ("_name", "_fn", "input_meta")

    def __init__(self, name, next_functions, fn, input_meta):
        super().__init__(next_functions)
        self._name = name
        self._fn = fn
        self.input_meta = input_meta

    def name(self):
        return self._name

    def apply(self, grads):
        return self._fn(grads[0])


def attach_node(output, name, inputs, fn):
    """Record ``output`` as computed from ``inputs`` with backward ``fn(grad)``."""
    edges = []
    meta = []
    for a in inputs:
        fn_a = a.grad_fn
        edges.append((fn_a, a._output_nr) if fn_a is not None else (a._get_grad_accumulator(), 0))
        meta.append(None)
    output.grad_fn = _LambdaNode(name, tuple(edges), fn, tuple(meta))
    output._requires_grad = True
    return output
