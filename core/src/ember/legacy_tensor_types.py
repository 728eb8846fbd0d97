"""The legacy typed tensor classes of old PyTorch programs: ``ember.FloatTensor``,
``LongTensor``, ... — constructors, ``isinstance`` checks and the names ``Tensor.type()``
prints — and the legacy constructor ``ember.Tensor(*args)`` / ``Tensor.new(*args)``.

PyTorch counterpart: torch/csrc/tensor/python_tensor.cpp (the ``torch.FloatTensor``
type objects and their metaclass ``torch.tensortype``) and torch/csrc/utils/tensor_new.cpp
(``legacy_tensor_ctor``, ``legacy_tensor_new``) (v2.13).

# NOTE [ Legacy tensor types ]
# Before dtypes (PyTorch 0.4) every tensor had a class per element type, and programs
# still write ``torch.FloatTensor(3, 4)``, ``torch.LongTensor([1, 2])`` and
# ``isinstance(x, torch.FloatTensor)``. Tensors have one class now; the typed names are
# type objects whose ``__call__`` is the legacy constructor with their dtype and whose
# ``__instancecheck__`` compares a tensor's dtype (and that it is on the CPU), so an
# ember float32 tensor is an instance of ``ember.FloatTensor`` and of ``ember.Tensor``.
# The constructor's rules: no argument is an empty tensor; integers or a Size an
# uninitialised tensor of that shape; a sequence (or array) its data converted to the
# type; a tensor of the same dtype an alias of it (the same storage), of another dtype a
# TypeError. CUDA's typed classes (``torch.cuda.FloatTensor``) are left out.
"""

import operator

from ember import dtypes

LEGACY_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
                "bfloat16": "BFloat16Tensor",
                "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
                "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor"}


def legacy_type_name(t):
    """``'ember.FloatTensor'`` for a float32 CPU tensor (``Tensor.type()``)."""
    prefix = "ember." if t.device.type == "cpu" else f"ember.{t.device.type}."
    return prefix + LEGACY_NAMES[t.dtype.name]


def dtype_of_legacy_name(name):
    """``'ember.DoubleTensor'`` -> ``ember.float64`` (the name's device part is ignored)."""
    for dtype_name, legacy in LEGACY_NAMES.items():
        if name.rsplit(".", 1)[-1] == legacy:
            return dtypes._BY_NAME[dtype_name]
    raise ValueError(f"invalid type: '{name}'")


def legacy_new(args, device=None, dtype=None):
    """The legacy constructor (NOTE [ Legacy tensor types ]) for ``dtype``; ``ember.Tensor``'s
    (``dtype`` None) takes a tensor of any dtype and makes the default dtype otherwise."""
    from ember.native.factory import empty, tensor
    from ember.tensor import Size, Tensor

    if len(args) == 1 and isinstance(args[0], Tensor):
        return _alias(args[0], dtype)
    dtype = dtype or dtypes.get_default_dtype()
    sizes = []
    for value in args:
        try:
            sizes.append(operator.index(value))
        except TypeError:
            break
    else:
        return empty(*sizes, dtype=dtype, device=device) if sizes else empty(0, dtype=dtype, device=device)
    if len(args) == 1 and isinstance(args[0], Size):
        return empty(*args[0], dtype=dtype, device=device)
    if len(args) != 1:
        raise TypeError(f"new(): expected sizes (ints) or one sequence of data, got {args!r}")
    return tensor(args[0], dtype=dtype, device=device)


def _alias(t, dtype):
    if dtype is not None and t.dtype != dtype:
        raise TypeError(f"expected {dtype} (got {t.dtype}): the legacy constructor of one type does not "
                        f"convert a tensor of another; use .to({dtype})")
    return t.detach()


class tensortype(type):
    """The metaclass of the legacy typed classes (``torch.tensortype``)."""

    def __call__(cls, *args, device=None):
        return legacy_new(args, device, cls.dtype)

    def __instancecheck__(cls, value):
        from ember.tensor import Tensor

        return isinstance(value, Tensor) and value.dtype == cls.dtype and value.device.type == "cpu"

    def __repr__(cls):
        return f"<class 'ember.{cls.__name__}'>"


def _typed_class(dtype_name, name):
    return tensortype(name, (), {"dtype": dtypes._BY_NAME[dtype_name], "is_sparse": False, "is_cuda": False,
                                 "__module__": "ember"})


TYPED_CLASSES = {name: _typed_class(dtype_name, name) for dtype_name, name in LEGACY_NAMES.items()}
