"""``ember.autograd.Variable``: the wrapper PyTorch before 0.4 needed around a tensor to
record gradients, kept so old programs run.

PyTorch counterpart: torch/autograd/variable.py (``Variable`` and its metaclass) and
torch/csrc/autograd/python_legacy_variable.cpp (the constructor) (v2.13).

Variables and tensors merged in PyTorch 0.4: ``Variable(data, requires_grad=...)`` now
returns a tensor, a detached alias of ``data`` (the same storage, no graph history) with
``requires_grad`` set, and every tensor is an instance of ``Variable``. ``volatile`` was
replaced by ``no_grad`` and only warns.
"""

import warnings


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        from ember.tensor import Tensor

        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data=None, requires_grad=False, volatile=False)``: a detached alias of
    the tensor ``data`` (an empty float32 tensor without one)."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        from ember.native.factory import empty
        from ember.tensor import Tensor

        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with ember.no_grad():` instead.",
                          stacklevel=2)
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        alias = data.detach()
        alias.requires_grad_(requires_grad)
        return alias
