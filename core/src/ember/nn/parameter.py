"""``ember.nn.Parameter``: a tensor that a ``Module`` registers as one of its parameters.

PyTorch counterpart: torch/nn/parameter.py (v2.13). ember leaves out
``UninitializedParameter``/``UninitializedBuffer`` (lazy modules) and ``Buffer``.

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
