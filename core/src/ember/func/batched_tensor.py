"""``BatchedTensor``: the tensor a function sees inside ``vmap``: a physical tensor
whose first dim is the batch, shown to the function without it.

PyTorch counterpart: aten/src/ATen/functorch/BatchedTensorImpl.h (``BatchedTensorImpl``:
a wrapped ``value``, a ``bdim`` and a ``level``) (v2.13). torch lets the batch dim sit
anywhere (``bdim``) and moves it when a rule needs it in front; ember moves it to the
front once, when the tensor is wrapped, so every rule reads ``value.shape[0]`` as the
batch (see NOTE [ The batch dim in front ]).
"""

from ember.memory_format import contiguous_strides
from ember.tensor import Tensor

__all__ = ["BatchedTensor", "is_batched_at", "unwrap", "wrap"]

# NOTE [ The batch dim in front ]
# A BatchedTensor holds `value`, a tensor of shape (B, *logical), and `level`, the
# vmap it belongs to (1 for the outermost). Its own metadata (shape, dtype, ndim) is
# the logical one: what the function mapped over one sample sees. `value` may itself be
# a BatchedTensor of a lower level (a nested vmap): a batch rule of level 2 works on
# level-2 values with ember ops, and those ops, seeing level-1 tensors, run level 1's
# rules in turn, which is how torch's interpreter stack peels one level at a time.
#
# `_data`, which every other tensor holds as its array, is here a `LogicalArray`: it
# answers the metadata questions (shape, ndim, dtype, strides) with the logical values,
# so Tensor's own metadata methods work unchanged, and refuses any access to values.
# Ops never read it (the vmap mode hands a batched call to its batch rule before the
# dispatcher looks at arrays); a Python path that reads values directly fails loudly
# instead of computing with one sample.


class LogicalArray:
    """The stand-in array of a BatchedTensor: its logical metadata, no values."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = dtype

    ndim = property(lambda self: len(self.shape))
    itemsize = property(lambda self: self.dtype.itemsize)
    size = property(lambda self: _prod(self.shape))
    nbytes = property(lambda self: self.size * self.dtype.itemsize)
    strides = property(lambda self: tuple(s * self.dtype.itemsize for s in contiguous_strides(self.shape)))
    flags = property(lambda self: _CONTIGUOUS)

    def __getattr__(self, name):
        if name.startswith("__"):  # protocol probes (hasattr(a, "__array_interface__")) get a plain no
            raise AttributeError(name)
        raise RuntimeError(f"vmap: this reads the values of a batched tensor outside an op (array.{name}); "
                           "ember cannot batch it. Rewrite it with ember ops, or call it outside vmap.")

    def __array__(self, dtype=None, copy=None):
        self.__getattr__("__array__")


class _Flags:
    c_contiguous = True
    f_contiguous = False
    writeable = True


_CONTIGUOUS = _Flags()


def _prod(shape):
    n = 1
    for s in shape:
        n *= s
    return n


ITEM_MESSAGE = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling .item() "
                "on a Tensor, please try to rewrite what you're doing with other operations. If error is occurring "
                "somewhere inside PyTorch internals, please file a bug report.")
CONTROL_FLOW_MESSAGE = ("vmap: It looks like you're attempting to use a Tensor in some data-dependent control "
                        "flow. We don't support that yet, please file an issue at "
                        "https://github.com/pytorch/pytorch/issues .")


class BatchedTensor(Tensor):
    """A tensor of shape ``value.shape[1:]`` standing for ``value.shape[0]`` samples."""

    __slots__ = ("value", "level")

    def __init__(self, value, level):
        self.value = value
        self.level = level
        self._data = LogicalArray(value.shape[1:], value._data.dtype)
        self._device = value._device

    # -- autograd: the physical value's (NOTE [ Autograd inside vmap ] in ember/func/batching.py) --
    @property
    def _requires_grad(self):
        return self.value.requires_grad

    @_requires_grad.setter
    def _requires_grad(self, flag):
        self.value.requires_grad_(flag)

    @property
    def _grad_fn(self):
        return self.value.grad_fn

    @property
    def _output_nr(self):
        return self.value.output_nr

    @property
    def _version_counter(self):
        return self.value._version_counter

    def detach(self):
        return BatchedTensor(self.value.detach(), self.level)

    @property
    def data(self):
        raise RuntimeError("accessing `data` under vmap transform is not allowed")

    # -- in-place ops that change the tensor itself: done on a new value, then adopted --
    def _adopt(self, batched):
        self.value = batched.value
        self._data = batched._data
        return self

    def unsqueeze_(self, dim):
        return self._adopt(self.unsqueeze(dim))

    def squeeze_(self, dim=None):
        return self._adopt(self.squeeze() if dim is None else self.squeeze(dim))

    def t_(self):
        return self._adopt(self.t())

    def transpose_(self, dim0, dim1):
        return self._adopt(self.transpose(dim0, dim1))

    def fill_(self, value):
        return self.copy_(value)  # a write of the physical value (ember/func/batching.py)

    def zero_(self):
        return self.copy_(0.0)

    # -- what a mapped function may not do: torch's errors --
    def item(self):
        raise RuntimeError(ITEM_MESSAGE)

    __float__ = __int__ = __index__ = tolist = item

    def numpy(self, force=False):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def __bool__(self):
        raise RuntimeError(CONTROL_FLOW_MESSAGE)

    def __repr__(self, *, tensor_contents=None):
        return f"BatchedTensor(lvl={self.level}, bdim=0, value=\n    {self.value!r}\n)"


def is_batched_at(x, level):
    return isinstance(x, BatchedTensor) and x.level == level


def unwrap(x, level):
    """``(value, True)`` for a tensor batched at ``level``, else ``(x, False)``."""
    if isinstance(x, BatchedTensor) and x.level == level:
        return x.value, True
    return x, False


def wrap(value, level):
    return BatchedTensor(value, level)
