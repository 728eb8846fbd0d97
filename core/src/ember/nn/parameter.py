"""``ember.nn.Parameter``: a tensor that a ``Module`` registers as one of its parameters.

PyTorch counterpart: torch/nn/parameter.py (v2.13). ember leaves out
``UninitializedBuffer`` and ``Buffer``.

A Parameter is a leaf ``Tensor`` sharing the memory of the tensor it wraps. Assigning
one to a module attribute registers it (``Module.__setattr__``); ops on it return
plain tensors, as in PyTorch.
"""

from ember.tensor import Tensor


class Parameter(Tensor):
    """A leaf tensor that requires grad by default and is registered by modules.

    >>> import ember
    >>> p = ember.nn.Parameter(ember.ones(2))
    >>> p.requires_grad, p.is_leaf
    (True, True)
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from ember.native.factory import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): data must be a Tensor, got {type(data).__name__}")
        return _as_parameter(cls, data, requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        out = type(self)(self.data.clone(), self.requires_grad)
        if self.grad is not None:
            out.grad = self.grad.detach().clone()
        memo[id(self)] = out
        return out

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (self.detach(), self.requires_grad))


def _as_parameter(cls, data, requires_grad):
    """A new ``cls`` leaf over ``data``'s memory and version counter."""
    p = object.__new__(cls)
    p._data = data._data
    p._device = data._device
    p._requires_grad = False
    p._grad_fn = None
    p._output_nr = 0
    p._version_counter = data._version_counter
    if requires_grad:
        p.requires_grad_(True)
    return p


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)


class UninitializedParameter(Parameter):
    """A parameter whose shape is not known yet (a lazy module's, until its first
    forward): it holds no values, and :meth:`materialize` gives it a shape, after which it
    is a plain :class:`Parameter` (``cls_to_become``).

    >>> import ember
    >>> p = ember.nn.parameter.UninitializedParameter()
    >>> p.materialize((2, 3))
    >>> type(p).__name__, tuple(p.shape)
    ('Parameter', (2, 3))
    """

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        from ember.native.factory import empty

        return _as_parameter(cls, empty(0, device=device, dtype=dtype), requires_grad)

    def materialize(self, shape, device=None, dtype=None):
        """Give the parameter ``shape`` (uninitialised values, as ``torch.empty``), on
        ``device`` and in ``dtype`` (its own by default), and make it a Parameter."""
        from ember.native.factory import empty

        device = self.device if device is None else device
        dtype = self.dtype if dtype is None else dtype
        self._data = empty(tuple(shape), device=device, dtype=dtype)._data
        self.__class__ = self.cls_to_become

    def __repr__(self):
        return "<UninitializedParameter>"

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self.device, self.dtype)
        return memo[id(self)]


def is_lazy(param):
    """Whether ``param`` is an :class:`UninitializedParameter` (its shape not yet known)."""
    return isinstance(param, UninitializedParameter)
